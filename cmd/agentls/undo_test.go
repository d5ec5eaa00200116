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
