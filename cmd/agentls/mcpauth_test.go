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
	root, cfg, state, env := authPlace(t, o.Endpoint)

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
		{[]string{"mcp", "auth", "--nosuch", "gh"}, exitBadUsage, "flag provided but not defined: -nosuch"},
		{[]string{"mcp", "auth", "gh", "--root"}, exitBadUsage, "flag needs an argument: -root"},
		{[]string{"mcp", "auth", "gh", "other"}, exitBadUsage, "want the name of one MCP server"},
		{[]string{"mcp", "logout", "--root", root}, exitBadUsage, "want the name of one MCP server"},
		{[]string{"mcp", "auth", "nosuch"}, exitFailure, `no MCP server is called "nosuch"`},
	} {
		got := agentlsWith(t, root, cfg, env, tc.args...)
		if got.code != tc.code || !strings.Contains(got.stderr, tc.want) {
			t.Errorf("%v: exit %d\n%s", tc.args, got.code, got.stderr)
		}
	}
}

// TestMCPAuthRoot: `agentls mcp auth SERVER --root DIR`, run from elsewhere, finds the
// server in the settings of the trusted workspace DIR, flags before or after the name.
func TestMCPAuthRoot(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	o := testutil.NewOAuthServers(t, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	root, elsewhere, cfg, state := workspaceDir(t), workspaceDir(t), t.TempDir(), t.TempDir()
	settings := `{"mcpServers": {"ws": {"httpUrl": "` + o.Endpoint + `"}}}`
	if err := os.MkdirAll(filepath.Join(root, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".gemini", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_STATE_HOME=" + state, "BROWSER=" + self, "AGENTLS_TEST_BROWSER=1", "AGENTLS_TRUST_WORKSPACE=1"}
	got := agentlsWith(t, elsewhere, cfg, env, "mcp", "auth", "ws")
	if got.code != exitFailure || !strings.Contains(got.stderr, `no MCP server is called "ws"`) {
		t.Fatalf("without --root: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
	}
	for _, args := range [][]string{{"mcp", "auth", "ws", "--root", root}, {"mcp", "auth", "--root=" + root, "ws"}} {
		got = agentlsWith(t, elsewhere, cfg, env, args...)
		if got.code != 0 || !strings.Contains(got.stdout, "MCP server ws is authorized") {
			t.Fatalf("%v: exit %d\n%s\n%s", args, got.code, got.stdout, got.stderr)
		}
	}
	got = agentlsWith(t, elsewhere, cfg, env, "mcp", "logout", "--root", root, "ws")
	if got.code != 0 || !strings.Contains(got.stdout, "removed") {
		t.Fatalf("logout --root: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
	}
}

// authPlace is a workspace and a user whose settings name the MCP server at endpoint
// as "gh", trusted, and the environment of `agentls mcp auth` there: a state folder
// of its own, and the test binary as the browser (testutil.RunAsBrowser).
func authPlace(t *testing.T, endpoint string) (root, cfg, state string, env []string) {
	t.Helper()
	root, cfg, state = workspaceDir(t), t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, cfg, map[string]string{
		"agentls/settings.json": `{"mcpServers": {"gh": {"httpUrl": "` + endpoint + `", "trust": true}}}`})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return root, cfg, state, []string{"XDG_STATE_HOME=" + state, "BROWSER=" + self, "AGENTLS_TEST_BROWSER=1"}
}

// TestMCPAuthStepUp: after `agentls mcp auth`, a later run whose call the server
// refuses with 403 insufficient_scope authorizes again, asking for the granted scope
// and the wider one, and the call then succeeds; a server whose scope never suffices
// gets one authorization for the call, which then fails.
func TestMCPAuthStepUp(t *testing.T) {
	for _, never := range []bool{false, true} {
		t.Run(map[bool]string{false: "granted", true: "never"}[never], func(t *testing.T) {
			// tools/call wants the scope "write", which the first authorization (of
			// `agentls mcp auth`) did not grant: a later one did, or none does.
			o := testutil.NewStepUpServers(t, map[bool]int{false: 2, true: 0}[never])
			root, cfg, _, env := authPlace(t, o.Endpoint)
			if got := agentlsWith(t, root, cfg, env, "mcp", "auth", "gh", "--root", root); got.code != 0 {
				t.Fatalf("mcp auth: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
			}
			if n := o.Stats().Authorizes; n != 1 {
				t.Fatalf("%d authorizations by mcp auth, want 1", n)
			}
			got := agentlsWith(t, root, cfg, env, "run", "gh__write", `{}`, "--root", root)
			if never {
				// One step-up for the call, whose retry the server refuses again.
				if got.code == 0 || !strings.Contains(got.stderr, "Forbidden") {
					t.Errorf("run: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
				}
				if n := o.Stats().Authorizes; n != 2 {
					t.Errorf("%d authorizations, want 2", n)
				}
				return
			}
			if got.code != 0 || !strings.Contains(got.stdout, "written") {
				t.Fatalf("run: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
			}
			if n := o.Stats().Authorizes; n != 2 {
				t.Errorf("%d authorizations, want 2", n)
			}
		})
	}
}
