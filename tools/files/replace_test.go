package files

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// replaceArgsJSON builds replace arguments; extra holds further fields.
func replaceArgsJSON(path, old, new string, extra map[string]any) string {
	m := map[string]any{"file_path": path, "old_string": old, "new_string": new}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestReplaceEdits(t *testing.T) {
	goFile := "package p\n\nfunc f() int {\n\tif x {\n\t\treturn 1\n\t}\n\treturn 0\n}\n"
	cases := []struct {
		name     string
		files    map[string]string
		path     string
		old, new string
		extra    map[string]any
		disk     string // the file afterwards, as stored
		output   []string
	}{
		{
			name: "exact", files: map[string]string{"f.go": goFile}, path: "f.go",
			old: "\t\treturn 1\n", new: "\t\treturn 2\n",
			disk:   strings.Replace(goFile, "return 1", "return 2", 1),
			output: []string{"Successfully modified file:", "(1 replacement)."},
		},
		{
			name: "allow_multiple", files: map[string]string{"f.txt": "a x a x a\n"}, path: "f.txt",
			old: "a", new: "b", extra: map[string]any{"allow_multiple": true},
			disk: "b x b x b\n", output: []string{"(3 replacements)"},
		},
		{
			name: "expected_replacements", files: map[string]string{"f.txt": "a x a\n"}, path: "f.txt",
			old: "a", new: "b", extra: map[string]any{"expected_replacements": 2},
			disk: "b x b\n", output: []string{"(2 replacements)"},
		},
		{
			name: "flexible", files: map[string]string{"f.go": goFile}, path: "f.go",
			old: "    if x {\n        return 1\n    }", new: "    if x {\n        return 42\n    }",
			disk:   strings.Replace(goFile, "return 1", "return 42", 1),
			output: []string{"(1 replacement)", "ignoring the indentation"},
		},
		{
			name: "create with empty old_string", files: nil, path: "new/dir/f.txt",
			old: "", new: "fresh\n",
			disk: "fresh\n", output: []string{"Created new file:", "with provided content."},
		},
		{
			name: "crlf kept, lf old_string", files: map[string]string{"f.txt": "one\r\ntwo\r\nthree\r\n"}, path: "f.txt",
			old: "two\nthree", new: "2\n3",
			disk: "one\r\n2\r\n3\r\n",
		},
		{
			name: "crlf kept, crlf old_string", files: map[string]string{"f.txt": "one\r\ntwo\r\nthree\r\n"}, path: "f.txt",
			old: "two\r\nthree", new: "2\r\nand a half\r\n3",
			disk: "one\r\n2\r\nand a half\r\n3\r\n",
		},
		{
			name: "bom kept", files: map[string]string{"f.txt": "\uFEFFhello world\n"}, path: "f.txt",
			old: "world", new: "there",
			disk: "\uFEFFhello there\n",
		},
		{
			name: "utf-16 kept", files: map[string]string{"f.txt": "\xFF\xFEa\x00b\x00\n\x00"}, path: "f.txt",
			old: "b", new: "c",
			disk: "\xFF\xFEa\x00c\x00\n\x00",
		},
		{
			name: "final newline kept", files: map[string]string{"f.txt": "a\nb\n"}, path: "f.txt",
			old: "b\n", new: "c",
			disk: "a\nc\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, c.files)
			abs := filepath.Join(root, c.path)
			inv, err := testutil.Build(t, NewReplace(ws), replaceArgsJSON(c.path, c.old, c.new, c.extra))
			if err != nil {
				t.Fatal(err)
			}
			snap := snapshot(t, root)
			d, err := inv.Confirmation(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			snap.unchanged(t) // asking writes nothing
			if d.Type != confirm.TypeEdit || d.Path != abs || d.Diff == "" || !strings.Contains(d.Diff, "b/"+c.path) {
				t.Errorf("details %+v", d)
			}
			if (c.files[c.path] == "") != (d.OriginalContent == nil) {
				t.Errorf("details original content %v for existing=%v", d.OriginalContent, c.files[c.path] != "")
			}
			res, err := inv.Execute(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := readDisk(t, abs); got != c.disk {
				t.Errorf("disk %q, want %q", got, c.disk)
			}
			if !strings.Contains(res.Output, abs) {
				t.Errorf("output %q does not name %s", res.Output, abs)
			}
			for _, o := range c.output {
				if !strings.Contains(res.Output, o) {
					t.Errorf("output %q lacks %q", res.Output, o)
				}
			}
			if res.Diff == nil || res.Diff.Diff != d.Diff || res.Diff.NewContent != d.NewContent {
				t.Errorf("result diff %+v differs from the confirmed one", res.Diff)
			}
		})
	}
}

func TestReplaceFailures(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"f.txt":      "alpha\nbeta\nalpha\ngamma\n",
		"ws.go":      "func f() {\n\tif (a  ==  b) {\n\t}\n}\n",
		"ws2.go":     "func f() {\n\tif (a  ==  b) {\n\t}\n\tif (a ==  b) {\n\t}\n}\n",
		"quote.txt":  "say \"hi\"\nnext\n",
		"bin.dat":    "\x00\x01\x02",
		"latin1.txt": "caf\xe9\n",
	})
	dirs := []string{root}
	tool := NewReplace(ws)
	cases := []struct {
		name     string
		path     string
		old, new string
		extra    map[string]any
		want     tools.ErrorType
		msg      []string
	}{
		{"zero", "f.txt", "delta", "x", nil, tools.ErrEditNoOccurrence, []string{"0 occurrences", "f.txt", "read_file"}},
		{"zero, whitespace within lines, in two places", "ws2.go", "if (a == b) {\n}", "x", nil, tools.ErrEditNoOccurrence, []string{"line 2", "only because of whitespace", "found 2 places that nearly match, starting at lines 2 and 4, so none was edited"}},
		{"zero, escaped", "quote.txt", `say \"hi\"\nnext`, "x", nil, tools.ErrEditNoOccurrence, []string{"escapes"}},
		{"several, one expected", "f.txt", "alpha", "x", nil, tools.ErrEditOccurrenceCount, []string{"expected 1 occurrence but found 2", "allow_multiple"}},
		{"count mismatch", "f.txt", "alpha", "x", map[string]any{"expected_replacements": 3}, tools.ErrEditOccurrenceCount, []string{"expected 3 occurrences but found 2", "expected_replacements to 2"}},
		{"identical strings", "f.txt", "beta", "beta", nil, tools.ErrEditNoChange, []string{"identical"}},
		{"identical strings, missing text", "f.txt", "zeta", "zeta", nil, tools.ErrEditNoChange, nil},
		{"flexible no-op", "ws.go", "  if (a  ==  b) {  ", "  if (a  ==  b) {", nil, tools.ErrEditNoChange, []string{"unchanged"}},
		{"create over existing", "f.txt", "", "new", nil, tools.ErrAttemptToCreateExists, []string{"already exists", "write_file"}},
		{"missing file", "nope.txt", "a", "b", nil, tools.ErrFileNotFound, []string{"nope.txt", "empty old_string"}},
		{"binary", "bin.dat", "a", "b", nil, tools.ErrReadContentFailure, []string{"binary"}},
		{"latin-1", "latin1.txt", "caf", "b", nil, tools.ErrReadContentFailure, []string{"UTF-8", "Latin-1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustFail(t, tool, replaceArgsJSON(c.path, c.old, c.new, c.extra), c.want, dirs, c.msg...)
		})
	}
}

func TestReplaceModify(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"f.txt": "a\nb\nc\n"})
	inv, err := testutil.Build(t, NewReplace(ws), replaceArgsJSON("f.txt", "b", "B", nil))
	if err != nil {
		t.Fatal(err)
	}
	d, err := inv.Confirmation(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.NewContent != "a\nB\nc\n" {
		t.Fatalf("proposed %q", d.NewContent)
	}
	// The person rewrites the proposal in their editor.
	if err := inv.Capabilities().Modify("a\nwhat I want\nc\n"); err != nil {
		t.Fatal(err)
	}
	res, err := inv.Execute(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readDisk(t, filepath.Join(root, "f.txt")); got != "a\nwhat I want\nc\n" {
		t.Errorf("disk %q", got)
	}
	if !strings.Contains(res.Output, "user modified") {
		t.Errorf("output %q", res.Output)
	}
}

func TestReplaceStale(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"f.txt": "a\nb\n"})
	ws.SetWriter(interferingWriter{t: t, content: "external\n"})
	_, err := call(t, NewReplace(ws), replaceArgsJSON("f.txt", "b", "c", nil))
	if testutil.ErrorType(err) != tools.ErrStaleContent {
		t.Fatalf("error %v, want stale_content", err)
	}
	if got := readDisk(t, filepath.Join(root, "f.txt")); got != "external\n" {
		t.Errorf("disk %q", got)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestReplaceOverlay checks that replace edits the document as the editor holds it,
// and that the overlay follows the edit.
func TestReplaceOverlay(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"a.go": "package p\n\nfunc Old() {}\n"})
	abs := filepath.Join(root, "a.go")
	ws.Open(abs, 2, "package p\n\nfunc Unsaved() {}\n")
	snap := snapshot(t, root)
	mustFail(t, NewReplace(ws), replaceArgsJSON("a.go", "func Old()", "func New()", nil), tools.ErrEditNoOccurrence, []string{root})
	snap.unchanged(t)
	res := mustCall(t, NewReplace(ws), replaceArgsJSON("a.go", "func Unsaved()", "func Renamed()", nil))
	if doc, _ := ws.Document(abs); doc.Text != "package p\n\nfunc Renamed() {}\n" {
		t.Errorf("overlay %q", doc.Text)
	}
	if *res.Diff.OriginalContent != "package p\n\nfunc Unsaved() {}\n" {
		t.Errorf("diff original %q", *res.Diff.OriginalContent)
	}
	// The next read in the same turn sees the edit.
	if r := mustCall(t, NewReadFile(ws), `{"file_path": "a.go"}`); !strings.Contains(r.Output, "Renamed") {
		t.Errorf("read after edit: %q", r.Output)
	}
}

func TestReplaceDescribe(t *testing.T) {
	ws, _ := testutil.Workspace(t, map[string]string{"f.txt": "x\n"})
	inv, err := testutil.Build(t, NewReplace(ws), replaceArgsJSON("f.txt", "first line\nsecond", strings.Repeat("n", 40), map[string]any{"instruction": "rename"}))
	if err != nil {
		t.Fatal(err)
	}
	if d := inv.Describe(); d != "Edit f.txt: first line... => "+strings.Repeat("n", 30)+"..." {
		t.Errorf("Describe = %q", d)
	}
}
