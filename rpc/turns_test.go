package rpc_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/rpc"
)

// TestUndoTurn: the edits of a prompt — one to an open document, one creating a file —
// are shown by agentls.turnDiff and taken back by agentls.undoTurn in one
// workspace/applyEdit; where the user changed a file since, nothing is undone and the
// answer names the file.
func TestUndoTurn(t *testing.T) {
	t.Parallel()
	for _, userEdits := range []bool{false, true} {
		t.Run(map[bool]string{false: "unchanged", true: "changed since"}[userEdits], func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, map[string]string{"notes.txt": "hello\nworld\n"})
			file, created := filepath.Join(root, "notes.txt"), filepath.Join(root, "new.txt")
			a := newAgent(t, root, "",
				clients.Turn{Calls: []clients.ScriptCall{call("read_file", map[string]any{"file_path": file}, "c0")}},
				clients.Turn{Calls: []clients.ScriptCall{
					call("replace", map[string]any{"file_path": file, "old_string": "hello", "new_string": "hello there"}, "c1"),
					call("write_file", map[string]any{"file_path": created, "content": "new\n"}, "c2"),
				}},
				clients.Turn{Text: "done"},
			)
			c := a.serve(capsRich, map[string]any{"approvalMode": "yolo"}, rpc.Options{})
			uri, newURI := lsptest.FileURI(file), lsptest.FileURI(created)
			if err := c.Editor().Open(uri, "hello\nworld\n"); err != nil {
				t.Fatal(err)
			}
			var res promptResult
			if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "edit"}, &res); err != nil || res.StopReason != "end_turn" {
				t.Fatalf("prompt: %v %+v", err, res)
			}

			var diff struct {
				Turn  int      `json:"turn"`
				Files []string `json:"files"`
				Diff  string   `json:"diff"`
			}
			if err := command(ctx, c, "agentls.turnDiff", map[string]any{"session": res.Session}, &diff); err != nil {
				t.Fatal(err)
			}
			if diff.Turn != 1 || !slices.Equal(diff.Files, []string{created, file}) || !strings.Contains(diff.Diff, "+hello there") || !strings.Contains(diff.Diff, "+new") {
				t.Errorf("turnDiff: %+v", diff)
			}

			if userEdits {
				if err := c.Editor().Change(uri, lsptest.Change{Text: "hello there\nthe user's line\n"}); err != nil {
					t.Fatal(err)
				}
			}
			before := len(c.Editor().Applied())
			var undo struct {
				Reverted []string `json:"reverted"`
				Deleted  []string `json:"deleted"`
				Changed  []string `json:"changed"`
			}
			if err := command(ctx, c, "agentls.undoTurn", map[string]any{"session": res.Session}, &undo); err != nil {
				t.Fatal(err)
			}
			applied := c.Editor().Applied()[before:]
			doc, _ := c.Editor().Doc(uri)
			_, newOpen := c.Editor().Doc(newURI)
			if userEdits {
				if !slices.Equal(undo.Changed, []string{file}) || len(undo.Reverted)+len(undo.Deleted) != 0 || len(applied) != 0 {
					t.Errorf("undo with the file changed since: %+v, %d edits applied", undo, len(applied))
				}
				if doc.Text != "hello there\nthe user's line\n" || !newOpen {
					t.Errorf("the user's text %q (new.txt open: %v), want both left alone", doc.Text, newOpen)
				}
				return
			}
			if !slices.Equal(undo.Reverted, []string{file}) || !slices.Equal(undo.Deleted, []string{created}) || len(undo.Changed) != 0 {
				t.Errorf("undo: %+v", undo)
			}
			if len(applied) != 1 || !slices.Equal(applied[0].Deleted, []string{newURI}) {
				t.Fatalf("undo applied %d edits (%+v), want one that deletes new.txt", len(applied), applied)
			}
			if doc.Text != "hello\nworld\n" || newOpen {
				t.Errorf("after the undo the editor holds %q (new.txt open: %v)", doc.Text, newOpen)
			}
		})
	}
}

// TestUndoShellTurnBinary: the agentls binary runs a real command that rewrites an open
// document (sed -i), makes a binary file and changes a mode; agentls.turnDiff names the
// command beside each file; agentls.undoTurn gives the document its text back in one
// workspace/applyEdit and the rest on disk; agentls.redoTurn brings the command's
// result back, in the editor too.
func TestUndoShellTurnBinary(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"notes.txt": "hello\nworld\n", "run.sh": "#!/bin/sh\n"})
	file, bin, script := filepath.Join(root, "notes.txt"), filepath.Join(root, "data.bin"), filepath.Join(root, "run.sh")
	line := `sed -i s/hello/HELLO/ notes.txt && printf 'a\0b' > data.bin && chmod +x run.sh`
	c, res := shellTurn(ctx, t, root, line, file, "hello\nworld\n")
	uri := lsptest.FileURI(file)
	// The editor reloads the document the command rewrote, as editors do.
	if err := c.Editor().Change(uri, lsptest.Change{Text: "HELLO\nworld\n"}); err != nil {
		t.Fatal(err)
	}
	var diff struct {
		Files   []string `json:"files"`
		Diff    string   `json:"diff"`
		Changes []struct {
			Path string   `json:"path"`
			By   []string `json:"by"`
		} `json:"changes"`
	}
	if err := command(ctx, c, "agentls.turnDiff", map[string]any{"session": res.Session}, &diff); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(diff.Files, []string{bin, file, script}) || !strings.Contains(diff.Diff, "+HELLO") ||
		!strings.Contains(diff.Diff, "# notes.txt: changed by run_shell_command: "+line) || !strings.Contains(diff.Diff, "mode 0644 → 0755") {
		t.Fatalf("turnDiff: %+v", diff)
	}
	before := len(c.Editor().Applied())
	var undo struct {
		Reverted []string `json:"reverted"`
		Deleted  []string `json:"deleted"`
		Changed  []string `json:"changed"`
	}
	if err := command(ctx, c, "agentls.undoTurn", map[string]any{"session": res.Session}, &undo); err != nil {
		t.Fatal(err)
	}
	if applied := c.Editor().Applied()[before:]; len(applied) != 1 {
		t.Errorf("the undo applied %d edits, want 1", len(applied))
	}
	if doc, _ := c.Editor().Doc(uri); doc.Text != "hello\nworld\n" {
		t.Errorf("after the undo the editor holds %q", doc.Text)
	}
	if _, err := os.Stat(bin); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("data.bin after the undo: %v, want it gone", err)
	}
	if fi, err := os.Stat(script); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("run.sh after the undo: %v %v, want mode 0644", fi.Mode(), err)
	}
	if !slices.Equal(undo.Deleted, []string{bin}) || !slices.Equal(undo.Reverted, []string{file, script}) {
		t.Errorf("undo: %+v", undo)
	}

	before = len(c.Editor().Applied())
	if err := command(ctx, c, "agentls.redoTurn", map[string]any{"session": res.Session}, &undo); err != nil {
		t.Fatal(err)
	}
	if applied := c.Editor().Applied()[before:]; len(applied) != 1 {
		t.Errorf("the redo applied %d edits, want 1", len(applied))
	}
	if doc, _ := c.Editor().Doc(uri); doc.Text != "HELLO\nworld\n" {
		t.Errorf("after the redo the editor holds %q", doc.Text)
	}
	if data, err := os.ReadFile(bin); err != nil || string(data) != "a\x00b" {
		t.Errorf("data.bin after the redo: %q %v", data, err)
	}
	if fi, err := os.Stat(script); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh after the redo: %v %v, want mode 0755", fi.Mode(), err)
	}
	if err := command(ctx, c, "agentls.redoTurn", map[string]any{"session": res.Session}, &undo); err == nil || !strings.Contains(err.Error(), "nothing to redo") {
		t.Errorf("a second redo: %v, want nothing to redo", err)
	}
}

// TestShellTurnUnsavedChangesSince: a file a command rewrote, whose editor text the user
// changed without saving (the disk holds exactly what the command left), counts as
// changed since: neither the undo nor, after one, the redo touches the user's text.
func TestShellTurnUnsavedChangesSince(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"notes.txt": "hello\n"})
	file := filepath.Join(root, "notes.txt")
	c, res := shellTurn(ctx, t, root, "sed -i s/hello/HELLO/ notes.txt", file, "hello\n")
	uri := lsptest.FileURI(file)
	type result struct {
		Reverted []string `json:"reverted"`
		Changed  []string `json:"changed"`
	}
	// turnBack sends the command and checks that it changed nothing and named file.
	turnBack := func(cmd string) {
		t.Helper()
		before := len(c.Editor().Applied())
		var r result
		if err := command(ctx, c, cmd, map[string]any{"session": res.Session}, &r); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Changed, []string{file}) || len(r.Reverted) != 0 || len(c.Editor().Applied()) != before {
			t.Errorf("%s with unsaved changes: %+v, %d edits applied, want the file named as changed and nothing done", cmd, r, len(c.Editor().Applied())-before)
		}
	}
	// The editor reloads what the command wrote; the user types without saving.
	if err := c.Editor().Change(uri, lsptest.Change{Text: "HELLO mine\n"}); err != nil {
		t.Fatal(err)
	}
	turnBack("agentls.undoTurn")
	if doc, _ := c.Editor().Doc(uri); doc.Text != "HELLO mine\n" {
		t.Errorf("after the refused undo the editor holds %q", doc.Text)
	}
	// The user's typing taken back: the undo goes through; then typing again before a redo.
	if err := c.Editor().Change(uri, lsptest.Change{Text: "HELLO\n"}); err != nil {
		t.Fatal(err)
	}
	var r result
	if err := command(ctx, c, "agentls.undoTurn", map[string]any{"session": res.Session}, &r); err != nil || !slices.Equal(r.Reverted, []string{file}) {
		t.Fatalf("undo: %+v %v", r, err)
	}
	if err := c.Editor().Change(uri, lsptest.Change{Text: "hello mine\n"}); err != nil {
		t.Fatal(err)
	}
	turnBack("agentls.redoTurn")
	if doc, _ := c.Editor().Doc(uri); doc.Text != "hello mine\n" {
		t.Errorf("after the refused redo the editor holds %q", doc.Text)
	}
}

// shellTurn starts the agentls binary in root (approval mode yolo) with file open
// holding text, and runs a prompt whose one call runs the command line.
func shellTurn(ctx context.Context, t *testing.T, root, line, file, text string) (*lsptest.Client, promptResult) {
	t.Helper()
	fake := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{call("run_shell_command", map[string]any{"command": line}, "s1")}},
		{Text: "done"},
	}})
	t.Cleanup(fake.Close)
	c := startEnv(t, root, []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + fake.URL})
	if _, err := c.Initialize(ctx, initParams(root, capsRich, map[string]any{"approvalMode": "yolo"})); err != nil {
		t.Fatal(err)
	}
	if err := c.Editor().Open(lsptest.FileURI(file), text); err != nil {
		t.Fatal(err)
	}
	var res promptResult
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "change"}, &res); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %v %+v", err, res)
	}
	return c, res
}
