package rpc_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
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
