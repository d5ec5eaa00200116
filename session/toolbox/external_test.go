package toolbox

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/agentls/agentls/confirm"
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
			root, config := testutil.Dirs(t, nil, `{`+kitServer(starts)+`}`)
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

// TestConfigUnchanged: a Config once published does not change: the external tools as
// they load, a discovery and a change of the approval mode (by the settings or by the
// front end's switch) each publish a new one, and whoever holds the old one — a
// scheduler built over it — sees what it saw.
func TestConfigUnchanged(t *testing.T) {
	starts := t.TempDir()
	root, config := testutil.Dirs(t, map[string]string{
		"discover.sh": "#!/bin/sh\necho '[{\"name\": \"lint\", \"description\": \"Lints.\"}]'\n",
	}, `{`+kitServer(starts)+`, "tools": {"discoveryCommand": "sh discover.sh", "callCommand": "sh call.sh"}}`)
	tb, err := New(Options{Roots: []string{root}, ConfigDir: config, GeminiDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	old := tb.Config()
	oldTools, oldMode := testutil.ToolNames(old.Registry), old.Policy.Mode()

	if err := tb.StartExternal(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The control: the new Config has the MCP and the discovered tools.
	now := testutil.ToolNames(tb.Config().Registry)
	if len(mcpTools(tb)) != 1 || !slices.Contains(now, "lint") {
		t.Fatalf("after StartExternal: tools %v; want kit's and lint", now)
	}
	for _, mode := range []func(){
		func() {
			if _, err := tb.Reconfigure(parse(t, `{"approvalMode": "plan"}`)); err != nil {
				t.Fatal(err)
			}
		},
		func() { tb.SetMode(confirm.ModeYolo) },
	} {
		before := tb.Config()
		beforeMode := before.Policy.Mode()
		mode()
		if tb.Config().Policy.Mode() == beforeMode {
			t.Fatalf("the mode stayed %s", beforeMode)
		}
		if before.Policy.Mode() != beforeMode {
			t.Errorf("a mode change changed the policy of the Config before it to %s", before.Policy.Mode())
		}
	}
	if got := testutil.ToolNames(old.Registry); !slices.Equal(got, oldTools) {
		t.Errorf("the first Config's registry changed: %v, was %v", got, oldTools)
	}
	if old.Policy.Mode() != oldMode {
		t.Errorf("the first Config's mode changed: %s, was %s", old.Policy.Mode(), oldMode)
	}
}
