package toolbox

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// mcpTools returns the names of the MCP tools in the registry in force.
func mcpTools(tb *Toolbox) []string {
	var out []string
	for _, info := range tb.Config().Registry.List() {
		if info.Source == tools.SourceMCP {
			out = append(out, info.Name)
		}
	}
	return out
}

// TestStartExternalAfterClose: a closed toolbox starts no MCP server and registers no
// tool; the open one (the control) starts the same server and registers its tool.
func TestStartExternalAfterClose(t *testing.T) {
	for _, tt := range []struct {
		name  string
		close bool
	}{{"open", false}, {"closed", true}} {
		t.Run(tt.name, func(t *testing.T) {
			starts := t.TempDir()
			root, config := testutil.Dirs(t, nil, mcpSettings(starts))
			tb, err := New(Options{Roots: []string{root}, ConfigDir: config, GeminiDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if tt.close {
				tb.Close()
			}
			err = tb.StartExternal(context.Background())
			started, _ := os.ReadDir(starts)
			got := mcpTools(tb)
			if !tt.close {
				if err != nil || len(started) != 1 || len(got) != 1 {
					t.Fatalf("open toolbox: StartExternal = %v, %d servers started, MCP tools %v; want the server and its tool", err, len(started), got)
				}
				return
			}
			if !errors.Is(err, ErrClosed) {
				t.Errorf("StartExternal after Close = %v, want ErrClosed", err)
			}
			if len(started) != 0 || len(got) != 0 || len(tb.MCPStatuses()) != 0 {
				t.Errorf("after Close: %d servers started, MCP tools %v, statuses %+v", len(started), got, tb.MCPStatuses())
			}
		})
	}
}
