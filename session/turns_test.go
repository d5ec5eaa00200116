package session

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	diff := turn.Diff(hh.host.Toolbox().Workspace)
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
