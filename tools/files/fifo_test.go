//go:build unix

package files

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// TestNamedPipe checks that a named pipe is refused rather than read, which would block
// until some other process wrote to it.
func TestNamedPipe(t *testing.T) {
	ws, root := testutil.Workspace(t, nil)
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := []string{root}
	mustFail(t, NewReadFile(ws), `{"file_path": "pipe"}`, tools.ErrReadContentFailure, dirs, "not a regular file")
	mustFail(t, NewWriteFile(ws), `{"file_path": "pipe", "content": "x"}`, tools.ErrReadContentFailure, dirs, "not a regular file")
	mustFail(t, NewReplace(ws), `{"file_path": "pipe", "old_string": "a", "new_string": "b"}`, tools.ErrReadContentFailure, dirs, "not a regular file")
	res := mustCall(t, NewReadManyFiles(ws), `{"include": ["*", "pipe"]}`)
	if want := "No files matching the criteria were found or all were skipped.\n\nSkipped 1 file:\n- pipe: not a regular file (a named pipe)"; res.Output != want {
		t.Errorf("read_many_files: %q, want %q", res.Output, want)
	}
}
