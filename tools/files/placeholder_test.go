package files

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

func TestIsPlaceholderLine(t *testing.T) {
	cases := []struct {
		line string
		want bool
	}{
		// Placeholders, in the comment syntaxes of many languages.
		{"// rest of code ...", true},
		{"    // rest of code ...", true},
		{"# ... existing code ...", true},
		{"/* unchanged */", true},
		{"<!-- ... -->", true},
		{"// ...", true},
		{"# …", true},
		{"// unchanged code ...", true},
		{"// ... rest of the code unchanged ...", true},
		{"// rest of the file", true},
		{"// existing code", true},
		{"-- rest of the query ...", false}, // "query" is not a placeholder word
		{"-- remaining columns unchanged", false},
		{"-- unchanged", true},
		{"; ... rest of the functions", true},
		{"% rest of the section ...", true},
		{"{/* ... other components ... */}", true},
		{"(* rest of code ... *)", true},
		{"{- omitted for brevity -}", true},
		{"/** ... */", true},
		{"(rest of methods ...)", true},
		{"// Other methods...", true},
		{"// Omitted for brevity", true},
		{"// ... keep the other handlers here ...", true},
		// Not placeholders.
		{"", false},
		{"...", false}, // code in Python, and no comment
		{"fmt.Println(\"rest of code ...\")", false}, // a string, not a comment
		{"// rest of the function handles errors", false},
		{"// other methods", false},          // no ellipsis, no word of omission
		{"// TODO: rest of code ...", false}, // TODO is a real note
		{"// Keep x unchanged when y is nil.", false},
		{"# installs the existing version", false},
		{"return rest", false},
		{"/* see below */", false},
		{"// REST", false},
		{"x := a[1:] // ...", false},
		{"// " + strings.Repeat("rest of code ", 20) + "...", false},
	}
	for _, c := range cases {
		if got := isPlaceholderLine(c.line); got != c.want {
			t.Errorf("isPlaceholderLine(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}

func TestPlaceholderIn(t *testing.T) {
	cases := []struct {
		name, text, original, want string
	}{
		{"none", "a\nb\n", "", ""},
		{"new file", "func f() {\n\t// rest of code ...\n}\n", "", "// rest of code ..."},
		{"kept from the file", "func f() {\n\t// rest of code ...\n}\n", "x\n  // rest of code ...\n", ""},
		{"the file has it only inside a line", "// unchanged\n", "x := 1 // unchanged\n", "// unchanged"},
		{"second of two is new", "// ...\n/* unchanged */\n", "// ...\n", "/* unchanged */"},
		{"no final newline", "a\n# ... existing code ...", "a\n", "# ... existing code ..."},
	}
	for _, c := range cases {
		if got := placeholderIn(c.text, c.original); got != c.want {
			t.Errorf("%s: placeholderIn = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestPlaceholderRefused runs write_file and replace with omission placeholders: refused
// with a message that asks for the full text, unless the file already has the line.
func TestPlaceholderRefused(t *testing.T) {
	const goFile = "package p\n\nfunc f() int {\n\tx := 1\n\treturn x\n}\n"
	const kept = "package p\n\n// ...\nfunc f() int {\n\treturn 1\n}\n"
	args := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) }
	cases := []struct {
		name  string
		tool  string
		files map[string]string
		args  map[string]any
		fails bool
		disk  string // the file afterwards, when the call succeeds
	}{
		{
			name: "write_file overwrite", tool: "write_file", files: map[string]string{"f.go": goFile},
			args:  map[string]any{"file_path": "f.go", "content": "package p\n\n// rest of code ...\n"},
			fails: true,
		},
		{
			name: "write_file new file", tool: "write_file",
			args:  map[string]any{"file_path": "new.py", "content": "def f():\n    # ... existing code ...\n    return 2\n"},
			fails: true,
		},
		{
			name: "write_file keeps the file's own line", tool: "write_file", files: map[string]string{"f.go": kept},
			args: map[string]any{"file_path": "f.go", "content": strings.Replace(kept, "return 1", "return 2", 1)},
			disk: strings.Replace(kept, "return 1", "return 2", 1),
		},
		{
			name: "replace new_string", tool: "replace", files: map[string]string{"f.go": goFile},
			args:  map[string]any{"file_path": "f.go", "old_string": "\tx := 1\n\treturn x\n", "new_string": "\t// unchanged code ...\n\treturn 2\n"},
			fails: true,
		},
		{
			name: "replace html comment", tool: "replace", files: map[string]string{"i.html": "<ul>\n<li>a</li>\n</ul>\n"},
			args:  map[string]any{"file_path": "i.html", "old_string": "<li>a</li>\n", "new_string": "<!-- ... -->\n<li>b</li>\n"},
			fails: true,
		},
		{
			name: "replace creating a file", tool: "replace",
			args:  map[string]any{"file_path": "n.c", "old_string": "", "new_string": "int main() {\n  /* unchanged */\n}\n"},
			fails: true,
		},
		{
			name: "replace keeps the file's own line", tool: "replace", files: map[string]string{"f.go": kept},
			args: map[string]any{"file_path": "f.go", "old_string": "// ...\nfunc f() int {\n\treturn 1", "new_string": "// ...\nfunc f() int {\n\treturn 3"},
			disk: strings.Replace(kept, "return 1", "return 3", 1),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, c.files)
			tool := NewWriteFile(ws)
			what := "the file's complete content"
			if c.tool == "replace" {
				tool, what = NewReplace(ws), "in full"
			}
			if c.fails {
				te := mustFail(t, tool, args(c.args), tools.ErrInvalidParams, []string{root}, "omission placeholder", "No changes were made", what)
				if te == nil {
					t.Fatal("no error")
				}
				return
			}
			mustCall(t, tool, args(c.args))
			if got := readDisk(t, filepath.Join(root, c.args["file_path"].(string))); got != c.disk {
				t.Errorf("disk %q, want %q", got, c.disk)
			}
		})
	}
}

// TestPlaceholderPersonModified checks that a person's own version of the content is
// written as it is, placeholder or not: the check guards against the model only.
func TestPlaceholderPersonModified(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"f.txt": "a\n"})
	inv, err := testutil.Build(t, NewWriteFile(ws), `{"file_path": "f.txt", "content": "b\n"}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := inv.Capabilities().Modify("b\n// ...\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Execute(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := readDisk(t, filepath.Join(root, "f.txt")); got != "b\n// ...\n" {
		t.Errorf("disk %q", got)
	}
}
