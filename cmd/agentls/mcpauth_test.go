package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/testutil"
)

// TestMCPAuthCommand: a server behind OAuth says it needs authorization until agentls
// mcp auth, whose $BROWSER (this test binary) follows the printed URL; the token is
// stored under $XDG_STATE_HOME (0600) and used by the next run; agentls mcp logout
// removes it.
func TestMCPAuthCommand(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "hello", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello"}}}, nil
		})
	o := testutil.NewOAuthServers(t, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	root, cfg, state := workspaceDir(t), t.TempDir(), t.TempDir()
	settings := `{"mcpServers": {"gh": {"httpUrl": "` + o.Endpoint + `", "trust": true}}}`
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_STATE_HOME=" + state, "BROWSER=" + self, "AGENTLS_TEST_BROWSER=1"}

	got := agentlsWith(t, root, cfg, env, "tools")
	if !strings.Contains(got.stderr, "needs authorization: run `agentls mcp auth gh`") || strings.Contains(got.stdout, "gh__hello") {
		t.Fatalf("before auth: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
	}
	got = agentlsWith(t, root, cfg, env, "mcp", "auth", "gh")
	if got.code != 0 || !strings.Contains(got.stdout, "MCP server gh is authorized") || !strings.Contains(got.stderr, o.AS.URL+"/authorize?") {
		t.Fatalf("mcp auth: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
	}
	if strings.Contains(got.stderr, "access-token-") {
		t.Errorf("the token was printed:\n%s", got.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(state, "agentls", "mcp-tokens", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v %v", fi.Mode(), err)
	}
	got = agentlsWith(t, root, cfg, env, "run", "gh__hello", `{}`)
	if got.code != 0 || !strings.Contains(got.stdout, "hello") {
		t.Fatalf("run after auth: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
	}

	got = agentlsWith(t, root, cfg, env, "mcp", "logout", "gh")
	if got.code != 0 || !strings.Contains(got.stdout, "removed") {
		t.Fatalf("logout: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(state, "agentls", "mcp-tokens", "*.json")); len(files) != 0 {
		t.Errorf("token files after logout: %v", files)
	}
	got = agentlsWith(t, root, cfg, env, "mcp", "logout", "gh")
	if got.code != 0 || !strings.Contains(got.stdout, "no OAuth token") {
		t.Errorf("second logout: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mcp"}, exitBadUsage, "want auth SERVER or logout SERVER"},
		{[]string{"mcp", "login", "gh"}, exitBadUsage, `unknown command "login"`},
		{[]string{"mcp", "auth"}, exitBadUsage, "want the name of one MCP server"},
		{[]string{"mcp", "auth", "nosuch"}, exitFailure, `no MCP server is called "nosuch"`},
	} {
		got := agentlsWith(t, root, cfg, env, tc.args...)
		if got.code != tc.code || !strings.Contains(got.stderr, tc.want) {
			t.Errorf("%v: exit %d\n%s", tc.args, got.code, got.stderr)
		}
	}
}
