package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
)

// editScript is a prompt whose calls replace a line of a.txt and create new.txt.
func editScript() clients.Script {
	return clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{
			{ID: "read", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/a.txt"}`)},
		}},
		{Calls: []clients.ScriptCall{
			{ID: "r", Name: "replace", Args: json.RawMessage(`{"file_path": "ROOT/a.txt", "old_string": "a", "new_string": "A"}`)},
			{ID: "w", Name: "write_file", Args: json.RawMessage(`{"file_path": "ROOT/new.txt", "content": "new\n"}`)},
		}},
		{Text: "done"},
	}}
}

// TestUndoTurn: a prompt's edits are recorded in the store, shown as one diff, and
// undone as one: the edited file gets its text back and the created file goes; the
// prompt cannot be undone twice.
func TestUndoTurn(t *testing.T) {
	t.Parallel()
	hh := newHostHarness(t, "yolo", editScript(), nil)
	l, _ := hh.prompt("", "edit")
	a, created := filepath.Join(hh.root, "a.txt"), filepath.Join(hh.root, "new.txt")
	if data, _ := os.ReadFile(a); string(data) != "A\n" {
		t.Fatalf("a.txt holds %q after the prompt", data)
	}

	turn, err := hh.host.Turn(l.ID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if turn.Turn != 1 || len(turn.Changes) != 2 {
		t.Fatalf("turn %d with %d changes, want turn 1 with 2", turn.Turn, len(turn.Changes))
	}
	diff := hh.host.Diff(turn)
	for _, want := range []string{"-a\n", "+A\n", "+new\n", "a.txt", "new.txt"} {
		if !strings.Contains(diff, want) {
			t.Errorf("the turn's diff lacks %q:\n%s", want, diff)
		}
	}

	res, err := hh.host.UndoTurn(context.Background(), l.ID(), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Reverted, []string{a}) || !slices.Equal(res.Deleted, []string{created}) || len(res.Changed) != 0 {
		t.Errorf("undo: %+v", res)
	}
	if data, _ := os.ReadFile(a); string(data) != "a\n" {
		t.Errorf("a.txt holds %q after the undo, want %q", data, "a\n")
	}
	if _, err := os.Stat(created); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new.txt after the undo: %v, want it gone", err)
	}
	if _, err := hh.host.UndoTurn(context.Background(), l.ID(), 0, false); !errors.Is(err, ErrNoEdits) {
		t.Errorf("a second undo: %v, want ErrNoEdits", err)
	}
	if _, err := hh.host.UndoTurn(context.Background(), l.ID(), 1, false); err == nil || !strings.Contains(err.Error(), "undone already") {
		t.Errorf("undoing prompt 1 again: %v", err)
	}
}

// TestUndoTurnChangedSince: a file the user changed after the prompt is never
// reverted; without force nothing is, with force the other files are.
func TestUndoTurnChangedSince(t *testing.T) {
	t.Parallel()
	for _, force := range []bool{false, true} {
		hh := newHostHarness(t, "yolo", editScript(), nil)
		l, _ := hh.prompt("", "edit")
		a, created := filepath.Join(hh.root, "a.txt"), filepath.Join(hh.root, "new.txt")
		if err := os.WriteFile(a, []byte("A\nthe user's line\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := hh.host.UndoTurn(context.Background(), l.ID(), 0, force)
		if !slices.Equal(res.Changed, []string{a}) {
			t.Errorf("force=%v: changed %v, want a.txt", force, res.Changed)
		}
		if data, _ := os.ReadFile(a); string(data) != "A\nthe user's line\n" {
			t.Errorf("force=%v: the user's file was changed: %q", force, data)
		}
		_, statErr := os.Stat(created)
		switch {
		case !force && !errors.Is(err, ErrChangedSince):
			t.Errorf("without force: %v, want ErrChangedSince", err)
		case !force && statErr != nil:
			t.Errorf("without force new.txt was deleted")
		case force && err != nil:
			t.Errorf("with force: %v", err)
		case force && !errors.Is(statErr, os.ErrNotExist):
			t.Errorf("with force new.txt stays: %v", statErr)
		}
	}
}

// plantSession writes a session file with one prompt that made edits, as a person or
// a program other than agentls could: the header names roots, and each edit has the
// text after (what the file holds now) and before (what an undo writes).
func plantSession(t *testing.T, dir, id string, roots []string, edits ...Edit) {
	t.Helper()
	recs := []record{
		{Type: recSession, ID: id, Created: time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC), Model: "x", Roots: roots},
		{Type: recPrompt, Text: "p"},
	}
	for _, e := range edits {
		recs = append(recs, record{Type: recEdit, Turn: 1, Path: e.Path, Before: e.Before, After: &e.After})
	}
	recs = append(recs, record{Type: recEnd, StopReason: StopEndTurn})
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestUndoTurnConfined: an undo writes only inside the workspace's roots, whatever
// paths the session's file names (red team R12): a file outside, one reached through
// a link that leads out, a relative path that climbs out and a sibling folder whose
// name starts with the root's are left alone, with an error naming them, and nothing
// else of the prompt is undone either, force or not. The control, a file inside,
// shows that the planted record is undone when it may be.
func TestUndoTurnConfined(t *testing.T) {
	const id = "20261128-020000.000-deadbeef"
	for _, tt := range []struct {
		name string
		path func(root, outside string) string // the recorded path
	}{
		{"control inside", nil},
		{"absolute outside", func(_, outside string) string { return filepath.Join(outside, "victim.txt") }},
		{"through a link", func(root, _ string) string { return filepath.Join(root, "link", "victim.txt") }},
		{"relative climbing out", func(root, outside string) string {
			rel, err := filepath.Rel(root, filepath.Join(outside, "victim.txt"))
			if err != nil {
				panic(err)
			}
			return rel
		}},
		{"sibling with the root's name as prefix", func(root, _ string) string { return root + "-evil/victim.txt" }},
	} {
		for _, force := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s force=%v", tt.name, force), func(t *testing.T) {
				hh := newHostHarness(t, "default", clients.Script{}, nil)
				root := hh.root
				outside, err := filepath.EvalSymlinks(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
					t.Fatal(err)
				}
				victims := []string{filepath.Join(outside, "victim.txt"), root + "-evil/victim.txt"}
				for _, v := range victims {
					if err := os.MkdirAll(filepath.Dir(v), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(v, []byte("orig"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				inside := filepath.Join(root, "inside.txt")
				if err := os.WriteFile(inside, []byte("orig"), 0o644); err != nil {
					t.Fatal(err)
				}
				pwned := "touch rt-pwned-R12"
				edits := []Edit{{Path: inside, Before: &pwned, After: "orig"}}
				if tt.path != nil {
					edits = append(edits, Edit{Path: tt.path(root, outside), Before: &pwned, After: "orig"})
				}
				plantSession(t, hh.host.o.Store.Dir(), id, []string{root}, edits...)

				res, err := hh.host.UndoTurn(context.Background(), id, 0, force)
				if tt.path == nil {
					if err != nil || !slices.Equal(res.Reverted, []string{inside}) {
						t.Fatalf("control: %+v, %v; want inside.txt reverted", res, err)
					}
					if data, _ := os.ReadFile(inside); string(data) != pwned {
						t.Fatalf("control: inside.txt holds %q, want the record's text", data)
					}
					return
				}
				if msg := fmt.Sprint(err); !errors.Is(err, ErrOutside) || !strings.Contains(msg, edits[1].Path) || !strings.Contains(msg, "outside the workspace") {
					t.Errorf("undo: %v, want ErrOutside naming %s", err, edits[1].Path)
				}
				if len(res.Reverted)+len(res.Deleted) != 0 {
					t.Errorf("undo result %+v, want nothing undone", res)
				}
				for _, f := range append(victims, inside) {
					if data, _ := os.ReadFile(f); string(data) != "orig" {
						t.Errorf("%s holds %q after a refused undo", f, data)
					}
				}
			})
		}
	}
}
