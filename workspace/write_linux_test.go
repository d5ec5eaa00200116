//go:build linux

package workspace_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/workspace"
)

func TestReadNamedPipe(t *testing.T) {
	ws, root := testutil.Workspace(t, nil)
	fifo := filepath.Join(root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Opening it would block until a writer comes.
	if _, err := ws.ReadText(fifo, 0); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("ReadText(fifo) = %v, want an error naming a named pipe", err)
	}
	if err := workspace.WriteFileAtomic(fifo, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("WriteFileAtomic(fifo) = %v, want an error naming a named pipe", err)
	}
}

// fsizeHelperEnv names the directory the helper process writes in.
const fsizeHelperEnv = "AGENTLS_TEST_FSIZE_DIR"

// A write that fails halfway (here: over the file size limit, which root obeys too)
// leaves the old file, no temporary file and no directory made for it.
func TestWriteFileAtomicFailsHalfway(t *testing.T) {
	if dir := os.Getenv(fsizeHelperEnv); dir != "" {
		// The helper: write under a 1 KiB file size limit. SIGXFSZ is ignored by the Go
		// runtime, so the write fails with EFBIG instead of killing the process.
		lim := syscall.Rlimit{Cur: 1024, Max: 1024}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
		big := []byte(strings.Repeat("y", 64<<10))
		for _, p := range []string{filepath.Join(dir, "existing"), filepath.Join(dir, "new", "deeper", "file")} {
			if err := workspace.WriteFileAtomic(p, big, 0o644); err == nil {
				t.Errorf("writing 64 KiB to %s under a 1 KiB limit succeeded", p)
			} else {
				t.Logf("failed as it should: %v", err)
			}
		}
		return
	}
	dir := tempDir(t)
	testutil.WriteFiles(t, dir, map[string]string{"existing": "old content"})
	before := testutil.Snapshot(t, dir)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileAtomicFailsHalfway$", "-test.v")
	cmd.Env = append(os.Environ(), fsizeHelperEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "file too large") {
		t.Fatalf("the helper's writes did not fail for size:\n%s", out)
	}
	if after := testutil.Snapshot(t, dir); !equalSnap(before, after) {
		t.Errorf("a failed write changed the tree: %v → %v", before, after)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left in the directory: %q; want only the existing file", names)
	}
}
