package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// TestHooks: what a BeforeTool hook decided is on the call's card (tool_call_update
// content), and a Notification hook hears of the permission a call waits for.
func TestHooks(t *testing.T) {
	ctx := testContext(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a1 := filepath.Join(root, "a.txt")
	os.WriteFile(a1, []byte("alpha\n"), 0o644)
	scripts := t.TempDir()
	check := filepath.Join(scripts, "check.sh")
	os.WriteFile(check, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"decision\":\"allow\",\"systemMessage\":\"checked by policy\"}'\n"), 0o755)
	rewrite := filepath.Join(scripts, "rewrite.sh")
	os.WriteFile(rewrite, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\":{\"tool_input\":{\"command\":\"echo rewritten-by-hook\"}}}'\n"), 0o755)
	notified := filepath.Join(root, "notified.json")
	notify := filepath.Join(scripts, "notify.sh")
	os.WriteFile(notify, []byte("#!/bin/sh\ncat > "+notified+"\n"), 0o755)
	cfg, state := t.TempDir(), t.TempDir()
	settings := map[string]any{"hooks": map[string]any{
		"BeforeTool": []any{
			map[string]any{"matcher": "read_file", "hooks": []any{map[string]any{"type": "command", "command": check, "name": "check"}}},
			map[string]any{"matcher": "run_shell_command", "hooks": []any{map[string]any{"type": "command", "command": rewrite, "name": "rewrite"}}},
		},
		"Notification": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": notify, "name": "notify"}}}},
	}}
	data, _ := json.Marshal(settings)
	os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755)
	os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), data, 0o644)
	_, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("r1", "read_file", map[string]any{"file_path": a1}),
			call("s1", "run_shell_command", map[string]any{"command": "echo hi"})}},
		clients.Turn{Text: "done"},
	)
	a := start(t, env(cfg, state, model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "once" })
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	if res, err := a.prompt(ctx, sess.SessionId, "go"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	// The person is asked about the call as the hook rewrote it, and that is what runs.
	perms := a.client.takePermissions()
	if len(perms) != 1 || !strings.Contains(string(mustJSON(t, perms[0].ToolCall)), "echo rewritten-by-hook") ||
		strings.Contains(string(mustJSON(t, perms[0].ToolCall)), "echo hi") {
		t.Errorf("permission requests: %s", mustJSON(t, perms))
	}
	var card []string
	var shell string
	for _, u := range a.client.take() {
		if up := u.ToolCallUpdate; up != nil && string(up.ToolCallId) == string(sess.SessionId)+"/s1" && up.Status != nil {
			shell += string(mustJSON(t, up))
		}
		if up := u.ToolCallUpdate; up != nil && string(up.ToolCallId) == string(sess.SessionId)+"/r1" && up.Status != nil &&
			*up.Status == sdk.ToolCallStatusCompleted {
			for _, c := range up.Content {
				if c.Content != nil {
					card = append(card, textOf(c.Content.Content))
				}
			}
		}
	}
	if len(card) == 0 || !strings.Contains(card[0], "hook check (BeforeTool): checked by policy") || !strings.Contains(card[0], "hook check (BeforeTool): allowed") {
		t.Errorf("read_file's card: %q", card)
	}
	if !strings.Contains(shell, "rewritten-by-hook") || !strings.Contains(shell, "hook rewrite (BeforeTool): rewrote the arguments command") {
		t.Errorf("the shell call's updates: %s", shell)
	}
	// The Notification hook runs beside the question, not before it.
	deadline := time.Now().Add(10 * time.Second)
	var got []byte
	for time.Now().Before(deadline) {
		if got, err = os.ReadFile(notified); err == nil && json.Valid(got) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var in struct {
		Event   string         `json:"hook_event_name"`
		Type    string         `json:"notification_type"`
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal(got, &in); err != nil || in.Event != "Notification" || in.Type != "ToolPermission" || in.Details["tool_name"] != "run_shell_command" {
		t.Errorf("Notification hook's input: %v %s", err, got)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
