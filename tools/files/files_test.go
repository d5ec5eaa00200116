package files

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

func TestToolsInfo(t *testing.T) {
	ws, _ := testutil.Workspace(t, nil)
	want := []struct {
		name, display string
		kind          tools.Kind
		idempotent    bool
		required      []string
	}{
		{"read_file", "ReadFile", tools.KindRead, true, []string{"file_path"}},
		{"read_many_files", "ReadManyFiles", tools.KindRead, true, []string{"include"}},
		{"list_directory", "ReadFolder", tools.KindRead, true, []string{"dir_path"}},
		{"write_file", "WriteFile", tools.KindEdit, false, []string{"file_path", "content"}},
		{"replace", "Edit", tools.KindEdit, false, []string{"file_path", "old_string", "new_string"}},
		{"notebook_edit", "NotebookEdit", tools.KindEdit, false, []string{"notebook_path"}},
	}
	got := Tools(ws)
	if len(got) != len(want) {
		t.Fatalf("Tools returned %d tools, want %d", len(got), len(want))
	}
	for i, w := range want {
		info := got[i].Info()
		if info.Name != w.name || info.DisplayName != w.display || info.Kind != w.kind || info.Idempotent != w.idempotent || info.Source != tools.SourceBuiltin {
			t.Errorf("tool %d: %+v, want name %s display %s kind %s idempotent %v builtin", i, info, w.name, w.display, w.kind, w.idempotent)
		}
		if info.Description == "" {
			t.Errorf("%s has no description", info.Name)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(info.Parameters, &schema); err != nil {
			t.Fatalf("%s parameters: %v", info.Name, err)
		}
		if schema.Type != "object" || !slices.Equal(schema.Required, w.required) {
			t.Errorf("%s schema: type %q required %v, want object %v", info.Name, schema.Type, schema.Required, w.required)
		}
		if _, err := tools.NewValidator(info.Parameters); err != nil {
			t.Errorf("%s schema does not compile: %v", info.Name, err)
		}
	}
}

// TestBadInputs feeds every tool arguments it must refuse — ill-formed, or naming paths
// outside the workspace however they get there — and checks the error type and that
// nothing was written, inside the workspace or outside it.
func TestBadInputs(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"a.txt": "hello\n", "dir/b.txt": "b\n"})
	out := outsideDir(t)
	symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(root, "linkfile"))
	symlink(t, out, filepath.Join(root, "linkdir"))
	secret := filepath.Join(out, "secret.txt")
	dirs := []string{root, out}

	const (
		invalid   = tools.ErrInvalidParams
		outside   = tools.ErrPathNotInWorkspace
		isDir     = tools.ErrTargetIsDirectory
		notFound  = tools.ErrFileNotFound
		occurMiss = tools.ErrEditOccurrenceCount
	)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cases := []struct {
		tool tools.Tool
		args string
		want tools.ErrorType
	}{
		// read_file
		{NewReadFile(ws), `{}`, invalid},
		{NewReadFile(ws), `null`, invalid},
		{NewReadFile(ws), `[]`, invalid},
		{NewReadFile(ws), `{"file_path": 3}`, invalid},
		{NewReadFile(ws), `{"file_path": ""}`, invalid},
		{NewReadFile(ws), `{"file_path": "a.txt", "start_line": "2"}`, invalid},
		{NewReadFile(ws), `{"file_path": "a.txt", "start_line": 0}`, invalid},
		{NewReadFile(ws), `{"file_path": "a.txt", "end_line": 1.5}`, invalid},
		{NewReadFile(ws), `{"file_path": "a.txt", "start_line": 5, "end_line": 2}`, invalid},
		{NewReadFile(ws), `{"file_path": "a.txt", "offset": 5}`, invalid},
		{NewReadFile(ws), `{"file_path": "../outside.txt"}`, outside},
		{NewReadFile(ws), `{"file_path": "dir/../../etc/passwd"}`, outside},
		{NewReadFile(ws), `{"file_path": ` + q(secret) + `}`, outside},
		{NewReadFile(ws), `{"file_path": "/etc/passwd"}`, outside},
		{NewReadFile(ws), `{"file_path": "linkfile"}`, outside},
		{NewReadFile(ws), `{"file_path": "linkdir/secret.txt"}`, outside},
		{NewReadFile(ws), `{"file_path": "linkdir"}`, outside},
		{NewReadFile(ws), `{"file_path": "dir"}`, isDir},
		{NewReadFile(ws), `{"file_path": "nope.txt"}`, notFound},
		{NewReadFile(ws), `{"file_path": "a.txt\u0000x"}`, invalid},

		// write_file
		{NewWriteFile(ws), `{}`, invalid},
		{NewWriteFile(ws), `{"file_path": "new.txt"}`, invalid},
		{NewWriteFile(ws), `{"content": "x"}`, invalid},
		{NewWriteFile(ws), `{"file_path": "new.txt", "content": 7}`, invalid},
		{NewWriteFile(ws), `{"file_path": ["new.txt"], "content": "x"}`, invalid},
		{NewWriteFile(ws), `{"file_path": "", "content": "x"}`, invalid},
		{NewWriteFile(ws), `{"file_path": "../new.txt", "content": "x"}`, outside},
		{NewWriteFile(ws), `{"file_path": ` + q(filepath.Join(out, "new.txt")) + `, "content": "x"}`, outside},
		{NewWriteFile(ws), `{"file_path": ` + q(secret) + `, "content": "x"}`, outside},
		{NewWriteFile(ws), `{"file_path": "linkfile", "content": "x"}`, outside},
		{NewWriteFile(ws), `{"file_path": "linkdir/new.txt", "content": "x"}`, outside},
		{NewWriteFile(ws), `{"file_path": "linkdir/sub/new.txt", "content": "x"}`, outside},
		{NewWriteFile(ws), `{"file_path": "dir", "content": "x"}`, isDir},

		// replace
		{NewReplace(ws), `{}`, invalid},
		{NewReplace(ws), `{"file_path": "a.txt", "old_string": "hello"}`, invalid},
		{NewReplace(ws), `{"file_path": "a.txt", "new_string": "hello"}`, invalid},
		{NewReplace(ws), `{"file_path": "a.txt", "old_string": 1, "new_string": "x"}`, invalid},
		{NewReplace(ws), `{"file_path": "a.txt", "old_string": "hello", "new_string": "bye", "allow_multiple": "yes"}`, invalid},
		{NewReplace(ws), `{"file_path": "a.txt", "old_string": "hello", "new_string": "bye", "expected_replacements": 0}`, invalid},
		{NewReplace(ws), `{"file_path": "a.txt", "old_string": "hello", "new_string": "bye", "expected_replacements": 1.5}`, invalid},
		{NewReplace(ws), `{"file_path": "../a.txt", "old_string": "hello", "new_string": "bye"}`, outside},
		{NewReplace(ws), `{"file_path": ` + q(secret) + `, "old_string": "secret", "new_string": "x"}`, outside},
		{NewReplace(ws), `{"file_path": "linkfile", "old_string": "secret", "new_string": "x"}`, outside},
		{NewReplace(ws), `{"file_path": "linkdir/secret.txt", "old_string": "secret", "new_string": "x"}`, outside},
		{NewReplace(ws), `{"file_path": "linkdir/new.txt", "old_string": "", "new_string": "x"}`, outside},
		{NewReplace(ws), `{"file_path": "dir", "old_string": "b", "new_string": "c"}`, isDir},
		{NewReplace(ws), `{"file_path": "nope.txt", "old_string": "b", "new_string": "c"}`, notFound},
		{NewReplace(ws), `{"file_path": "a.txt", "old_string": "l", "new_string": "L"}`, occurMiss},

		// list_directory
		{NewListDirectory(ws), `{}`, invalid},
		{NewListDirectory(ws), `{"dir_path": 1}`, invalid},
		{NewListDirectory(ws), `{"dir_path": ".", "ignore": "*.txt"}`, invalid},
		{NewListDirectory(ws), `{"dir_path": ".", "ignore": ["[x"]}`, invalid},
		{NewListDirectory(ws), `{"dir_path": ".", "respect_git_ignore": "no"}`, invalid},
		{NewListDirectory(ws), `{"dir_path": ".", "file_filtering_options": {"respect_git_ignore": 1}}`, invalid},
		{NewListDirectory(ws), `{"dir_path": ".."}`, outside},
		{NewListDirectory(ws), `{"dir_path": ` + q(out) + `}`, outside},
		{NewListDirectory(ws), `{"dir_path": "linkdir"}`, outside},
		{NewListDirectory(ws), `{"dir_path": "linkdir/sub"}`, outside},
		{NewListDirectory(ws), `{"dir_path": "a.txt"}`, invalid},
		{NewListDirectory(ws), `{"dir_path": "nope"}`, notFound},

		// read_many_files
		{NewReadManyFiles(ws), `{}`, invalid},
		{NewReadManyFiles(ws), `{"include": []}`, invalid},
		{NewReadManyFiles(ws), `{"include": "*.txt"}`, invalid},
		{NewReadManyFiles(ws), `{"include": [""]}`, invalid},
		{NewReadManyFiles(ws), `{"include": ["*.txt"], "recursive": "yes"}`, invalid},
		{NewReadManyFiles(ws), `{"include": ["[x"]}`, invalid},
		{NewReadManyFiles(ws), `{"include": ["*.txt"], "exclude": ["[x"]}`, invalid},
		{NewReadManyFiles(ws), `{"include": ["../*.txt"]}`, outside},
		{NewReadManyFiles(ws), `{"include": ["../**"]}`, outside},
		{NewReadManyFiles(ws), `{"include": ["a.txt", "../secret.txt"]}`, outside},
		{NewReadManyFiles(ws), `{"include": [` + q(secret) + `]}`, outside},
		{NewReadManyFiles(ws), `{"include": [` + q(out+"/*.txt") + `]}`, outside},
		{NewReadManyFiles(ws), `{"include": ["/**/*.txt"]}`, outside},
		{NewReadManyFiles(ws), `{"include": ["linkfile"]}`, outside},
		{NewReadManyFiles(ws), `{"include": ["linkdir"]}`, outside},
		{NewReadManyFiles(ws), `{"include": ["linkdir/*.txt"]}`, outside},
		{NewReadManyFiles(ws), `{"include": ["linkdir/**"]}`, outside},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d_%s", i, c.tool.Info().Name), func(t *testing.T) {
			mustFail(t, c.tool, c.args, c.want, dirs)
		})
	}
}

// TestBuildWithoutValidation calls Build directly with arguments the schema would have
// refused: a tool must still refuse them cleanly rather than act on zero values.
func TestBuildWithoutValidation(t *testing.T) {
	ws, _ := testutil.Workspace(t, map[string]string{"a.txt": "hello\n"})
	cases := []struct {
		tool tools.Tool
		args string
	}{
		{NewReadFile(ws), `{"file_path": 1}`},
		{NewReadFile(ws), `{}`},
		{NewReadFile(ws), `{"file_path": "a.txt", "start_line": -3}`},
		{NewWriteFile(ws), `{"file_path": "a.txt"}`},
		{NewReplace(ws), `{"file_path": "a.txt", "old_string": "hello"}`},
		{NewReplace(ws), `{"file_path": "a.txt", "new_string": "x"}`},
		{NewListDirectory(ws), `{}`},
		{NewReadManyFiles(ws), `{"include": []}`},
		{NewReadManyFiles(ws), `not json`},
	}
	for _, c := range cases {
		if _, err := c.tool.Build(json.RawMessage(c.args)); testutil.ErrorType(err) != tools.ErrInvalidParams {
			t.Errorf("%s.Build(%s) = %v, want invalid_tool_params", c.tool.Info().Name, c.args, err)
		}
	}
}
