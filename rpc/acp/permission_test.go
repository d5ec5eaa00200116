package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// TestPermissionKeepsCallTitle: session/request_permission's tool call updates the call
// the client shows, so it carries the call's own title (a command's is its command line)
// and kind, not the question's generic title: CodeCompanion, which shows only the kind
// and title when it asks, asked "Permission: Confirm Shell Command" without the command.
// The question's title is kept first in the text.
func TestPermissionKeepsCallTitle(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("s1", "run_shell_command", map[string]any{"command": "echo asked-about"})}},
		clients.Turn{Calls: []clients.ScriptCall{call("r1", "read_file", map[string]any{"file_path": filepath.Join(root, "a.txt")})}},
		clients.Turn{Calls: []clients.ScriptCall{call("e1", "replace", map[string]any{"file_path": filepath.Join(root, "a.txt"), "old_string": "alpha", "new_string": "omega"})}},
		clients.Turn{Text: "Done."},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(r sdk.RequestPermissionRequest) sdk.PermissionOptionId {
		for _, o := range r.Options {
			if o.Kind == sdk.PermissionOptionKindAllowOnce {
				return o.OptionId
			}
		}
		return ""
	})
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	if res, err := a.prompt(ctx, sess.SessionId, "echo, read, then edit"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	shown := map[sdk.ToolCallId]*sdk.SessionUpdateToolCall{}
	for _, u := range a.client.take() {
		if c := u.ToolCall; c != nil {
			shown[c.ToolCallId] = c
		}
	}
	perms := a.client.takePermissions()
	if len(perms) != 2 {
		t.Fatalf("%d permission requests, want 2: %+v", len(perms), perms)
	}
	for _, p := range perms {
		call, c := p.ToolCall, shown[p.ToolCall.ToolCallId]
		if c == nil {
			t.Errorf("permission for %s, a call never shown", call.ToolCallId)
			continue
		}
		if call.Title == nil || *call.Title != c.Title || call.Kind == nil || *call.Kind != c.Kind {
			t.Errorf("permission for %s: title %v, kind %v; want the call's own %q, %q", call.ToolCallId, deref(call.Title), deref(call.Kind), c.Title, c.Kind)
		}
	}
	shell := perms[0].ToolCall
	if shell.Title == nil || !strings.Contains(*shell.Title, "echo asked-about") || shell.Kind == nil || *shell.Kind != sdk.ToolKindExecute {
		t.Errorf("the command's permission: title %v, kind %v; want the command line, execute", deref(shell.Title), deref(shell.Kind))
	}
	var text []string
	for _, c := range shell.Content {
		if c.Content != nil {
			text = append(text, textOf(c.Content.Content))
		}
	}
	if len(text) != 2 || text[0] != "Confirm Shell Command" || !strings.HasPrefix(text[1], "echo asked-about") {
		t.Errorf("the command's permission text %q, want the question's title, then the command", text)
	}
	if edit := perms[1].ToolCall; len(edit.Content) != 1 || edit.Content[0].Diff == nil {
		t.Errorf("the edit's permission content %+v, want its diff alone", edit.Content)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
