package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
)

// TestUndo: `agentls undo` takes back, on disk, what the last prompt of the
// workspace's newest session changed; --diff shows it first, and a second undo finds
// nothing left to undo.
func TestUndo(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	hello := filepath.Join(root, "hello.txt")
	before, err := os.ReadFile(hello)
	if err != nil {
		t.Fatal(err)
	}
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{{Name: "read_file", Args: json.RawMessage(`{"file_path": "hello.txt"}`)}}},
		{Calls: []clients.ScriptCall{
			{Name: "write_file", Args: json.RawMessage(`{"file_path": "hello.txt", "content": "rewritten\n"}`)},
			{Name: "write_file", Args: json.RawMessage(`{"file_path": "created.txt", "content": "new\n"}`)},
		}},
		{Text: "done"},
	}})
	defer srv.Close()
	if got := agentlsPrompt(t, root, cfg, srv, "--approval-mode", "yolo", "rewrite"); got.code != 0 {
		t.Fatalf("prompt: %+v", got)
	}
	state := []string{"XDG_STATE_HOME=" + filepath.Join(cfg, "state")}

	got := agentlsWith(t, root, cfg, state, "undo", "--diff")
	if got.code != 0 || !strings.Contains(got.stdout, "+rewritten") || !strings.Contains(got.stdout, "+++ b/created.txt") {
		t.Errorf("undo --diff: %+v", got)
	}
	if data, _ := os.ReadFile(hello); string(data) != "rewritten\n" {
		t.Fatalf("--diff changed hello.txt: %q", data)
	}

	got = agentlsWith(t, root, cfg, state, "undo")
	if got.code != 0 || !strings.Contains(got.stdout, "reverted hello.txt") || !strings.Contains(got.stdout, "deleted created.txt") {
		t.Errorf("undo: %+v", got)
	}
	if data, _ := os.ReadFile(hello); string(data) != string(before) {
		t.Errorf("hello.txt after the undo: %q, want %q", data, before)
	}
	if _, err := os.Stat(filepath.Join(root, "created.txt")); !os.IsNotExist(err) {
		t.Errorf("created.txt after the undo: %v", err)
	}

	if got := agentlsWith(t, root, cfg, state, "undo"); got.code != exitFailure || !strings.Contains(got.stderr, "no prompt of the session changed a file") {
		t.Errorf("a second undo: %+v", got)
	}
	if got := agentlsWith(t, t.TempDir(), cfg, state, "undo"); got.code != exitFailure || !strings.Contains(got.stderr, "no stored session was started in") {
		t.Errorf("undo in another folder: %+v", got)
	}
}
