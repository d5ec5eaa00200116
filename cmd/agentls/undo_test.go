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

// plantedSession writes, in the session store under state, the file of a session
// started in root whose one prompt "edited" path: the file holds "orig" now, and an
// undo would write before. Anyone who can write the store can write such a file.
func plantedSession(t *testing.T, state, root, path, before string) string {
	t.Helper()
	const id = "20261128-020000.000-deadbeef"
	q := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	lines := []string{
		`{"type":"session","id":"` + id + `","created":"2026-11-28T02:00:00Z","model":"x","roots":[` + q(root) + `]}`,
		`{"type":"prompt","text":"p","time":"2026-11-28T02:00:00Z"}`,
		`{"type":"edit","turn":1,"path":` + q(path) + `,"before":` + q(before) + `,"after":"orig"}`,
		`{"type":"end","stopReason":"end_turn"}`,
	}
	dir := filepath.Join(state, "agentls", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestUndoConfined: `agentls undo` writes only inside the workspace, whatever the
// session file says (red team R12). A planted session whose edit names a file outside
// the workspace, directly or through a link in it, is refused with the file named, and
// the file keeps its text; the control, the same record naming a file inside, is
// undone.
func TestUndoConfined(t *testing.T) {
	for _, tt := range []struct {
		name   string
		inside bool
		path   func(root, outside string) string
	}{
		{"control inside", true, func(root, _ string) string { return filepath.Join(root, "victim.txt") }},
		{"outside", false, func(_, outside string) string { return filepath.Join(outside, "victim.txt") }},
		{"through a link", false, func(root, _ string) string { return filepath.Join(root, "out", "victim.txt") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root, cfg := workspaceDir(t), t.TempDir()
			outside := filepath.Join(cfg, "outside")
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(outside, "victim.txt")
			if tt.inside {
				victim = filepath.Join(root, "victim.txt")
			}
			if err := os.WriteFile(victim, []byte("orig"), 0o644); err != nil {
				t.Fatal(err)
			}
			const payload = "touch rt-pwned-R12"
			state := filepath.Join(cfg, "state")
			path := tt.path(root, outside)
			plantedSession(t, state, root, path, payload)

			got := agentlsWith(t, root, cfg, []string{"XDG_STATE_HOME=" + state}, "undo")
			data, _ := os.ReadFile(victim)
			if tt.inside {
				if got.code != 0 || string(data) != payload {
					t.Fatalf("control: %+v; victim.txt holds %q, want the record's text", got, data)
				}
				return
			}
			if got.code != exitFailure || !strings.Contains(got.stderr, "undo refused: the file of session 20261128-020000.000-deadbeef names "+path+", outside the workspace") {
				t.Errorf("undo: %+v, want a refusal naming %s", got, path)
			}
			if string(data) != "orig" {
				t.Errorf("%s holds %q after the undo, want it untouched", victim, data)
			}
		})
	}
}

// TestUndoRefusesUnprivateSession: `agentls undo` does not use a session file that
// others may write or read, and says which file and how to make it private; after the
// chmod it names, the undo runs.
func TestUndoRefusesUnprivateSession(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	victim := filepath.Join(root, "victim.txt")
	if err := os.WriteFile(victim, []byte("orig"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(cfg, "state")
	file := plantedSession(t, state, root, victim, "before")
	if err := os.Chmod(file, 0o664); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_STATE_HOME=" + state}
	got := agentlsWith(t, root, cfg, env, "undo")
	if got.code != exitFailure || !strings.Contains(got.stderr, file+" can be read or written by others (mode 0664)") ||
		!strings.Contains(got.stderr, "chmod 600 "+file) {
		t.Errorf("undo of a group-writable session file: %+v", got)
	}
	if data, _ := os.ReadFile(victim); string(data) != "orig" {
		t.Errorf("victim.txt holds %q after a refused undo", data)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := agentlsWith(t, root, cfg, env, "undo"); got.code != 0 || !strings.Contains(got.stdout, "reverted victim.txt") {
		t.Errorf("undo after chmod 600: %+v", got)
	}
}

// TestUndoShell: what a shell command of a prompt changed (a file rewritten with sed,
// a file made, a mode changed) is shown by `agentls undo --diff` with the command,
// taken back by `agentls undo` and brought back by `agentls undo --redo`.
func TestUndoShell(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	hello, made, script := filepath.Join(root, "hello.txt"), filepath.Join(root, "made.txt"), filepath.Join(root, "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(hello)
	if err != nil {
		t.Fatal(err)
	}
	line := "sed -i 1s/^/changed:/ hello.txt && echo made > made.txt && chmod +x run.sh"
	args, _ := json.Marshal(map[string]string{"command": line})
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{{Name: "run_shell_command", Args: args}}},
		{Text: "done"},
	}})
	defer srv.Close()
	if got := agentlsPrompt(t, root, cfg, srv, "--approval-mode", "yolo", "change"); got.code != 0 {
		t.Fatalf("prompt: %+v", got)
	}
	after, _ := os.ReadFile(hello)
	if string(after) == string(before) {
		t.Fatal("the command did not change hello.txt")
	}
	state := []string{"XDG_STATE_HOME=" + filepath.Join(cfg, "state")}
	got := agentlsWith(t, root, cfg, state, "undo", "--diff")
	if got.code != 0 || !strings.Contains(got.stdout, "# hello.txt: changed by run_shell_command: "+line) || !strings.Contains(got.stdout, "+++ b/made.txt") || !strings.Contains(got.stdout, "# mode 0644 → 0755") {
		t.Errorf("undo --diff: %+v", got)
	}
	got = agentlsWith(t, root, cfg, state, "undo")
	if got.code != 0 || !strings.Contains(got.stdout, "reverted hello.txt") || !strings.Contains(got.stdout, "deleted made.txt") || !strings.Contains(got.stdout, "reverted run.sh") {
		t.Errorf("undo: %+v", got)
	}
	if data, _ := os.ReadFile(hello); string(data) != string(before) {
		t.Errorf("hello.txt after the undo: %q, want %q", data, before)
	}
	if fi, err := os.Stat(script); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("run.sh after the undo: %v", err)
	}
	got = agentlsWith(t, root, cfg, state, "undo", "--redo")
	if got.code != 0 || !strings.Contains(got.stderr, "redid prompt 1") {
		t.Errorf("undo --redo: %+v", got)
	}
	if data, _ := os.ReadFile(hello); string(data) != string(after) {
		t.Errorf("hello.txt after the redo: %q, want %q", data, after)
	}
	if data, err := os.ReadFile(made); err != nil || string(data) != "made\n" {
		t.Errorf("made.txt after the redo: %q %v", data, err)
	}
	if got := agentlsWith(t, root, cfg, state, "undo", "--redo"); got.code != exitFailure || !strings.Contains(got.stderr, "nothing to redo") {
		t.Errorf("a second redo: %+v", got)
	}
}
