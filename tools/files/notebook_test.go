package files

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// The notebooks under testdata/notebooks were written by gen.py as nbformat writes
// them, with indents of 1 and 2; so were the expected results of each edit, by editing
// the parsed notebook and writing it whole. notebook_edit rewrites only the cell it
// changes, so its result must be those bytes exactly.

func notebookFile(t *testing.T, name string) string {
	t.Helper()
	return readDisk(t, filepath.Join("testdata", "notebooks", name))
}

// TestNotebookEdit checks each edit mode on real notebooks of both indents: the
// result is byte for byte what nbformat writes for the edited notebook, so every
// untouched cell, its outputs and metadata, and the file's layout stay as they were.
func TestNotebookEdit(t *testing.T) {
	cases := []struct {
		file, args, want string
	}{
		{"nb", `"cell_id": "load", "new_source": "import data\nrows = data.load(strict=True)\n"`, "replace-load"},
		{"nb", `"cell_number": 1, "new_source": "import data\nrows = data.load(strict=True)\n", "edit_mode": "replace"`, "replace-load"},
		{"nb", `"cell_id": "load", "cell_number": 1, "new_source": "import data\nrows = data.load(strict=True)\n"`, "replace-load"},
		{"nb", `"cell_id": "intro", "new_source": "print('hi')", "cell_type": "code"`, "replace-intro-as-code"},
		{"nb", `"cell_id": "fail", "new_source": "Division *fails*.\n", "cell_type": "markdown"`, "replace-fail-as-markdown"},
		{"nb", `"cell_id": "load", "new_source": "rows[:5]", "cell_type": "code", "edit_mode": "insert"`, "insert-after-load"},
		{"nb", `"cell_number": 2, "new_source": "rows[:5]", "cell_type": "code", "edit_mode": "insert"`, "insert-after-load"},
		{"nb", `"new_source": "## Start", "cell_type": "markdown", "edit_mode": "insert"`, "insert-first"},
		{"nb", `"cell_number": 3, "new_source": "done = True", "cell_type": "code", "edit_mode": "insert"`, "insert-last"},
		{"nb", `"cell_id": "fail", "new_source": "done = True", "cell_type": "code", "edit_mode": "insert"`, "insert-last"},
		{"nb", `"cell_id": "intro", "edit_mode": "delete"`, "delete-intro"},
		{"nb", `"cell_number": 1, "edit_mode": "delete"`, "delete-load"},
		{"nb", `"cell_id": "fail", "edit_mode": "delete"`, "delete-fail"},
		{"empty", `"new_source": "x = 1", "cell_type": "code", "edit_mode": "insert"`, "insert"},
		{"one", `"cell_number": 0, "edit_mode": "delete"`, "delete"},
	}
	newID := regexp.MustCompile(`"id": "([0-9a-f]{8})"`)
	for _, indent := range []int{1, 2} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("indent %d/%s/%s", indent, tc.want, tc.args), func(t *testing.T) {
				src := notebookFile(t, fmt.Sprintf("%s%d.ipynb", tc.file, indent))
				want := notebookFile(t, fmt.Sprintf("%s%d.%s.ipynb", tc.file, indent, tc.want))
				ws, root := testutil.Workspace(t, map[string]string{"nb.ipynb": src})
				res := mustCall(t, NewNotebookEdit(ws), `{"notebook_path": "nb.ipynb", `+tc.args+`}`)
				got := readDisk(t, filepath.Join(root, "nb.ipynb"))
				if strings.Contains(want, "NEWID") {
					m := newID.FindStringSubmatch(got)
					if m == nil {
						t.Fatalf("the inserted cell has no new id:\n%s", got)
					}
					want = strings.ReplaceAll(want, "NEWID", m[1])
				}
				if got != want {
					t.Errorf("notebook after the edit differs from nbformat's:\n%s", firstDiff(want, got))
				}
				if res.Diff == nil || res.Diff.NewContent != got {
					t.Errorf("the result's diff does not show the new notebook")
				}
			})
		}
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(wl), len(gl)) {
		if wl[i] != gl[i] {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, wl[i], gl[i])
		}
	}
	return fmt.Sprintf("want %d lines, got %d", len(wl), len(gl))
}

// TestNotebookEditRefused checks that bad calls and bad notebooks get a clear error
// and leave the file as it was.
func TestNotebookEditRefused(t *testing.T) {
	nb := notebookFile(t, "nb1.ipynb")
	old := strings.ReplaceAll(nb, `"nbformat": 4`, `"nbformat": 3`)
	cases := []struct {
		name, content, args string
		want                tools.ErrorType
		msg                 []string
	}{
		{"unknown id", nb, `"cell_id": "nope", "new_source": "x"`, tools.ErrInvalidParams, []string{`no cell with id "nope"`, "0: intro, 1: load, 2: fail"}},
		{"number out of range", nb, `"cell_number": 3, "new_source": "x"`, tools.ErrInvalidParams, []string{"cell_number 3 is out of range", "3 cells"}},
		{"id and number disagree", nb, `"cell_id": "load", "cell_number": 0, "new_source": "x"`, tools.ErrInvalidParams, []string{`cell_id "load" is cell 1, not cell_number 0`}},
		{"replace without a cell", nb, `"new_source": "x"`, tools.ErrInvalidParams, []string{"needs the cell"}},
		{"replace without source", nb, `"cell_id": "load"`, tools.ErrInvalidParams, []string{"needs new_source"}},
		{"insert without type", nb, `"new_source": "x", "edit_mode": "insert"`, tools.ErrInvalidParams, []string{"needs cell_type"}},
		{"same source", nb, `"cell_id": "fail", "new_source": "1 / 0"`, tools.ErrEditNoChange, []string{"already has that source"}},
		{"not JSON", nb[:200], `"cell_number": 0, "new_source": "x"`, tools.ErrReadContentFailure, []string{"Cannot edit nb.ipynb as a notebook", "not valid JSON", "Nothing was written"}},
		{"old nbformat", old, `"cell_number": 0, "new_source": "x"`, tools.ErrReadContentFailure, []string{"nbformat 3", "only nbformat 4"}},
		{"no cells", `{"nbformat": 4, "nbformat_minor": 5, "metadata": {}}`, `"cell_number": 0, "new_source": "x", "cell_type": "code", "edit_mode": "insert"`, tools.ErrReadContentFailure, []string{`no "cells" array`}},
		{"cells not an array", `{"nbformat": 4, "nbformat_minor": 5, "cells": {}}`, `"cell_number": 0, "edit_mode": "delete"`, tools.ErrReadContentFailure, []string{`"cells" is not an array`}},
		{"cell not an object", `{"nbformat": 4, "nbformat_minor": 5, "cells": [1]}`, `"cell_number": 0, "edit_mode": "delete"`, tools.ErrReadContentFailure, []string{"cell 0 is not a JSON object"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, map[string]string{"nb.ipynb": tc.content})
			mustFail(t, NewNotebookEdit(ws), `{"notebook_path": "nb.ipynb", `+tc.args+`}`, tc.want, []string{root}, tc.msg...)
		})
	}
	t.Run("not a notebook", func(t *testing.T) {
		ws, root := testutil.Workspace(t, map[string]string{"a.py": "x = 1\n"})
		mustFail(t, NewNotebookEdit(ws), `{"notebook_path": "a.py", "cell_number": 0, "edit_mode": "delete"}`, tools.ErrInvalidParams, []string{root}, "not a Jupyter notebook")
	})
	t.Run("missing", func(t *testing.T) {
		ws, root := testutil.Workspace(t, nil)
		mustFail(t, NewNotebookEdit(ws), `{"notebook_path": "no.ipynb", "cell_number": 0, "edit_mode": "delete"}`, tools.ErrFileNotFound, []string{root}, "Notebook not found")
	})
}

// TestNotebookEditConsent checks that the edit is proposed as a diff of the notebook's
// JSON that holds only the edited cell, and that the session must have read the
// notebook first.
func TestNotebookEditConsent(t *testing.T) {
	ws, _ := testutil.Workspace(t, map[string]string{"nb.ipynb": notebookFile(t, "nb2.ipynb")})
	inv, err := testutil.Build(t, NewNotebookEdit(ws), `{"notebook_path": "nb.ipynb", "cell_id": "fail", "new_source": "1 / 2"}`)
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithReads(context.Background(), NewReads())
	if _, err := inv.Confirmation(ctx); err == nil || !strings.Contains(err.Error(), "Read it first") {
		t.Fatalf("unread notebook: %v, want read it first", err)
	}
	if _, err := testutil.Call(ctx, t, NewReadFile(ws), `{"file_path": "nb.ipynb"}`, nil); err != nil {
		t.Fatal(err)
	}
	d, err := inv.Confirmation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`-        "1 / 0"`, `+        "1 / 2"`, `-      "execution_count": 2,`, `+      "execution_count": null,`} {
		if !strings.Contains(d.Diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, d.Diff)
		}
	}
	if strings.Contains(d.Diff, "load") {
		t.Errorf("diff reaches into another cell:\n%s", d.Diff)
	}
	if _, err := inv.Execute(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// TestReadNotebook checks read_file's rendering of a notebook: cells with index, id,
// type and source; text outputs as they are; images summarised; tracebacks without
// terminal colours; a file that is not a notebook shown as text with a note.
func TestReadNotebook(t *testing.T) {
	ws, _ := testutil.Workspace(t, map[string]string{
		"nb.ipynb":  notebookFile(t, "nb1.ipynb"),
		"bad.ipynb": "{\"cells\": [\n",
	})
	out := mustCall(t, NewReadFile(ws), `{"file_path": "nb.ipynb"}`).Output
	for _, want := range []string{
		"Jupyter notebook nb.ipynb (nbformat 4.5, language python, kernel python3) with 3 cells.",
		"<cell index=\"0\" id=\"intro\" type=\"markdown\">\n# Démo <b>&amp;</b>\nSome *text*.\n</cell>",
		"<cell index=\"1\" id=\"load\" type=\"code\" execution_count=\"1\">\nimport data\nrows = data.load()\nprint(f\"loaded {len(rows)} rows\")\n</cell>",
		"<output cell=\"1\" index=\"0\" type=\"stream\" name=\"stdout\">\nloaded 3 rows\nok\n</output>",
		"<Figure size 640x480 with 1 Axes>\n[image/png image, 70 B: not shown]\n</output>",
		"ZeroDivisionError: division by zero\nZeroDivisionError Traceback (most recent call last)\n",
		"<output cell=\"2\" index=\"1\" type=\"execute_result\">\n42\n</output>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rendering lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") || strings.Contains(out, "iVBOR") {
		t.Errorf("rendering holds terminal codes or image data:\n%s", out)
	}
	// With a line range, the JSON itself.
	if raw := mustCall(t, NewReadFile(ws), `{"file_path": "nb.ipynb", "start_line": 1, "end_line": 3}`).Output; !strings.Contains(raw, `"cells": [`) {
		t.Errorf("line range of a notebook: %q", raw)
	}
	bad := mustCall(t, NewReadFile(ws), `{"file_path": "bad.ipynb"}`).Output
	if !strings.Contains(bad, "cannot be shown as notebook cells") || !strings.Contains(bad, `{"cells": [`) {
		t.Errorf("invalid notebook: %q", bad)
	}
}
