package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/rpc"
)

// TestHookDecisionOnCard: what a BeforeTool hook decided reaches the editor on the
// call's card: the tool_call_update that ends it carries the hooks' lines, and its
// content's text starts with them.
func TestHookDecisionOnCard(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"notes.txt": "hello\n"})
	file := filepath.Join(root, "notes.txt")
	config := t.TempDir()
	hook := filepath.Join(t.TempDir(), "deny.sh")
	os.WriteFile(hook, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"decision\":\"deny\",\"reason\":\"notes are private\"}'\n"), 0o755)
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"BeforeTool": []any{map[string]any{
		"matcher": "read_file", "hooks": []any{map[string]any{"type": "command", "command": hook, "name": "privacy"}}}}}})
	os.WriteFile(filepath.Join(config, "settings.json"), settings, 0o644)
	a := newAgent(t, root, "",
		clients.Turn{Calls: []clients.ScriptCall{call("read_file", map[string]any{"file_path": file}, "c1")}},
		clients.Turn{Text: "I may not read it."},
	)
	c := a.serve(capsRich, nil, rpc.Options{ConfigDir: config})
	var res promptResult
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "read notes.txt"}, &res); err != nil {
		t.Fatal(err)
	}
	var card struct {
		Status  string   `json:"status"`
		Hooks   []string `json:"hooks"`
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	for _, m := range c.Received("agentls/update") {
		var p struct {
			Update json.RawMessage `json:"update"`
		}
		json.Unmarshal(m.Params, &p)
		var u struct {
			Kind, Status string
		}
		json.Unmarshal(p.Update, &u)
		if u.Kind == "tool_call_update" && u.Status == "failed" {
			json.Unmarshal(p.Update, &card)
		}
	}
	want := "hook privacy (BeforeTool): denied: notes are private"
	if len(card.Hooks) != 1 || card.Hooks[0] != want || !strings.HasPrefix(card.Content.Text, want+"\n\n") ||
		!strings.Contains(card.Content.Text, "Tool execution blocked by a hook: notes are private") {
		t.Errorf("the card: %+v", card)
	}
}
