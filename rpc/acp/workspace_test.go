package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// TestSessionsShareWorkspaceHost: the sessions of one workspace share its host, so its
// external tools load once (the discovery command runs once for two sessions, as an
// MCP server starts once), while a session in another workspace (the control) loads
// its own; "always" answers stay each session's own.
func TestSessionsShareWorkspaceHost(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	other, _ := filepath.EvalSymlinks(t.TempDir())
	scripts := t.TempDir()
	runs := filepath.Join(scripts, "runs")
	discover := filepath.Join(scripts, "discover.sh")
	if err := os.WriteFile(discover, []byte("#!/bin/sh\necho run >> '"+runs+"'\necho '[]'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, state := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"tools": {"discoveryCommand": "sh '` + discover + `'", "callCommand": "true"}}`
	if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	touch := func(id string) clients.Turn {
		return clients.Turn{Calls: []clients.ScriptCall{call(id, "run_shell_command", map[string]any{"command": "touch a.txt"})}}
	}
	_, model := fakeModel(t, touch("t1"), clients.Turn{Text: "Touched."}, touch("t2"), clients.Turn{Text: "Touched again."})
	a := start(t, env(cfg, state, model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_always" })
	a.initialize(ctx)
	loads := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run")
	}

	first := a.newSession(ctx, root)
	second := a.newSession(ctx, root)
	if n := loads(); n != 1 {
		t.Errorf("two sessions of one workspace loaded its external tools %d times, want once", n)
	}
	a.newSession(ctx, other)
	if n := loads(); n != 2 {
		t.Errorf("a session of another workspace: %d loads in all, want 2", n)
	}

	for _, id := range []sdk.SessionId{first.SessionId, second.SessionId} {
		if res, err := a.prompt(ctx, id, "touch a.txt"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt in %s = %+v, %v", id, res, err)
		}
	}
	if perms := a.client.takePermissions(); len(perms) != 2 {
		t.Errorf("%d permission requests, want 2: the first session's \"always\" is not the second's", len(perms))
	}
}
