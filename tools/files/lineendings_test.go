package files

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
)

// TestEditsKeepOtherLinesBytes runs replace and write_file on files that mix CRLF and LF
// line endings: the lines an edit does not touch keep their bytes, line endings included.
func TestEditsKeepOtherLinesBytes(t *testing.T) {
	const mixed = "package p\r\n\r\nfunc f() int {\n\treturn 1\r\n}\n\n// end\r\n"
	cases := []struct {
		name   string
		stored string
		tool   string
		args   map[string]string
		want   string
	}{
		{
			name: "replace inside a CRLF line", stored: mixed, tool: "replace",
			args: map[string]string{"old_string": "return 1", "new_string": "return 2"},
			want: "package p\r\n\r\nfunc f() int {\n\treturn 2\r\n}\n\n// end\r\n",
		},
		{
			name: "replace across lines of both endings, one changed", stored: mixed, tool: "replace",
			args: map[string]string{"old_string": "func f() int {\n\treturn 1\n}", "new_string": "func f() int {\n\tx := 1\n\treturn x\n}"},
			// Only the CRLF line "\treturn 1" is replaced: both lines replacing it take CRLF.
			want: "package p\r\n\r\nfunc f() int {\n\tx := 1\r\n\treturn x\r\n}\n\n// end\r\n",
		},
		{
			name: "replace with a CRLF old_string", stored: mixed, tool: "replace",
			args: map[string]string{"old_string": "// end\r\n", "new_string": "// the end\r\n"},
			want: "package p\r\n\r\nfunc f() int {\n\treturn 1\r\n}\n\n// the end\r\n",
		},
		{
			name: "replace in a file without a final newline", stored: "a\r\nb\nc", tool: "replace",
			args: map[string]string{"old_string": "c", "new_string": "C"},
			want: "a\r\nb\nC",
		},
		{
			name: "replace next to a lone CR", stored: "a\rb\r\nc\n", tool: "replace",
			args: map[string]string{"old_string": "c", "new_string": "C"},
			want: "a\rb\r\nC\n",
		},
		{
			name: "write_file over a mixed file", stored: mixed, tool: "write_file",
			args: map[string]string{"content": "package p\n\nfunc f() int {\n\treturn 3\n}\n\n// end\n"},
			want: "package p\r\n\r\nfunc f() int {\n\treturn 3\r\n}\n\n// end\r\n",
		},
		{
			name: "write_file over a mixed file, a line added", stored: mixed, tool: "write_file",
			args: map[string]string{"content": "package p\n\nimport \"os\"\n\nfunc f() int {\n\treturn 1\n}\n\n// end\n"},
			// Inserted lines take CRLF, the ending of most of the file's lines (four of seven).
			want: "package p\r\n\r\nimport \"os\"\r\n\r\nfunc f() int {\n\treturn 1\r\n}\n\n// end\r\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, map[string]string{"f.go": c.stored})
			args := map[string]string{"file_path": "f.go"}
			for k, v := range c.args {
				args[k] = v
			}
			b, err := json.Marshal(args)
			if err != nil {
				t.Fatal(err)
			}
			tool := NewReplace(ws)
			if c.tool == "write_file" {
				tool = NewWriteFile(ws)
			}
			mustCall(t, tool, string(b))
			if got := readDisk(t, filepath.Join(root, "f.go")); got != c.want {
				t.Errorf("disk holds %q, want %q", got, c.want)
			}
		})
	}
}
