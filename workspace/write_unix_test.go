//go:build unix && !aix

package workspace_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/workspace"
)

// editorHelperEnv tells a re-executed test binary to be one of the editing processes of
// TestEditsAcrossProcesses: "FILE WRITER COUNT".
const editorHelperEnv = "AGENTLS_TEST_EDITOR"

// marker is line i of writer w's share of the file, before (done false) and after its
// edit.
func marker(w string, i int, done bool) string {
	state := "todo"
	if done {
		state = "done"
	}
	return fmt.Sprintf("%s%03d %s\n", w, i, state)
}

// TestEditsAcrossProcesses runs two processes that each edit their own lines of one file
// as fast as they can, every edit a read-modify-write through a workspace as a tool does
// it: read, change one line, commit. An edit reported as done must be in the final
// file, and one refused must be refused as stale (the helper retries it). Without a lock
// held across the writer's re-read, comparison and rename, one process replaces the
// file with a copy that lacks the other's latest edit, and both report success.
func TestEditsAcrossProcesses(t *testing.T) {
	if spec := os.Getenv(editorHelperEnv); spec != "" {
		editorHelper(t, spec)
		return
	}
	const perWriter = 40
	writers := []string{"a", "b"}
	_, root := testutil.Workspace(t, nil)
	path := filepath.Join(root, "shared.txt")
	var initial strings.Builder
	for i := range perWriter {
		for _, w := range writers {
			initial.WriteString(marker(w, i, false))
		}
	}
	if err := os.WriteFile(path, []byte(initial.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	type proc struct {
		cmd   *exec.Cmd
		start io.WriteCloser
		out   strings.Builder
	}
	procs := make([]*proc, len(writers))
	for i, w := range writers {
		p := &proc{cmd: exec.Command(os.Args[0], "-test.run=^TestEditsAcrossProcesses$")}
		p.cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d", editorHelperEnv, path, w, perWriter))
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		start, err := p.cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		p.start = start
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	// Both are running: let them go together.
	for _, p := range procs {
		io.WriteString(p.start, "go\n")
		p.start.Close()
	}
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("writer %s: %v\n%s", writers[i], err, p.out.String())
		}
	}

	final, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stale := 0
	for i, p := range procs {
		done := 0
		for line := range strings.Lines(p.out.String()) {
			switch {
			case strings.HasPrefix(line, "done "):
				n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "done ")))
				if err != nil {
					t.Fatalf("writer %s: bad line %q", writers[i], line)
				}
				done++
				if m := marker(writers[i], n, true); !strings.Contains(string(final), m) {
					t.Errorf("writer %s reported its edit of line %03d done, but the file lacks %q", writers[i], n, strings.TrimSpace(m))
				}
			case strings.HasPrefix(line, "stale "):
				stale++
			}
		}
		if done != perWriter {
			t.Errorf("writer %s reported %d edits done, want %d:\n%s", writers[i], done, perWriter, p.out.String())
		}
	}
	t.Logf("%d edits refused as stale and retried", stale)
}

// editorHelper is one editing process of TestEditsAcrossProcesses: it waits for a line
// on stdin, then marks each of its lines done, one commit each, retrying an edit
// refused as stale. It prints "done N" for each edit committed and "stale N: error"
// for each refused.
func editorHelper(t *testing.T, spec string) {
	var path, w string
	var n int
	if _, err := fmt.Sscanf(spec, "%s %s %d", &path, &w, &n); err != nil {
		t.Fatalf("bad %s %q: %v", editorHelperEnv, spec, err)
	}
	ws, err := workspace.New(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		for attempt := 0; ; attempt++ {
			if attempt == 1000 {
				t.Fatalf("line %03d: refused as stale %d times in a row", i, attempt)
			}
			f, err := ws.ReadText(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			todo, done := marker(w, i, false), marker(w, i, true)
			if !strings.Contains(f.Text, todo) {
				t.Fatalf("line %03d: %q is not in the file (was it reported done before?)", i, strings.TrimSpace(todo))
			}
			err = ws.Commit(context.Background(), workspace.Change{Path: path, Old: f, New: strings.Replace(f.Text, todo, done, 1)})
			if errors.Is(err, workspace.ErrStale) {
				fmt.Printf("stale %d: %v\n", i, err)
				continue
			}
			if err != nil {
				t.Fatalf("line %03d: %v", i, err)
			}
			fmt.Printf("done %d\n", i)
			break
		}
	}
}

// deadPid returns the id of a process that has ended: a child run and waited for.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestOrphanTempsRemoved leaves in a directory what a process killed while writing
// leaves: its temporary file, named with its pid. The next write in that directory
// removes it, and nothing else: not the temporary files of running processes (this one,
// and pid 1, which always runs), not other names, even close ones.
func TestOrphanTempsRemoved(t *testing.T) {
	dead := strconv.Itoa(deadPid(t))
	self := strconv.Itoa(os.Getpid())
	orphans := []string{
		".f.txt.agentls-" + dead + "-k3x9z",
		".other.go.agentls-" + dead + "-0",
	}
	kept := []string{
		".f.txt.agentls-" + self + "-k3x9z",
		".f.txt.agentls-1-k3x9z",
		"f.txt.agentls-" + dead + "-k3x9z",
		".f.txt.agentls-" + dead + "-K3X9Z",
		".f.txt.agentls-" + dead,
		".f.txt.agentls-k3x9z",
		".f.txt.agentls-" + dead + "-k3x9z.orig",
	}
	tests := []struct {
		name  string
		write func(t *testing.T, ws *workspace.Workspace, dir string) error
	}{
		{"edit", func(t *testing.T, ws *workspace.Workspace, dir string) error {
			return edit(t, ws, filepath.Join(dir, "f.txt"), "new\n")
		}},
		{"creation", func(t *testing.T, ws *workspace.Workspace, dir string) error {
			return ws.Commit(context.Background(), workspace.Change{Path: filepath.Join(dir, "new.txt"), New: "new\n"})
		}},
		{"WriteFileAtomic", func(t *testing.T, ws *workspace.Workspace, dir string) error {
			return workspace.WriteFileAtomic(filepath.Join(dir, "f.txt"), []byte("new\n"), 0o644)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, map[string]string{"f.txt": "old\n"})
			for _, name := range append(append([]string(nil), orphans...), kept...) {
				if err := os.WriteFile(filepath.Join(root, name), []byte("partial"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// A directory with an orphan's name is not ours to remove.
			dirName := ".d.agentls-" + dead + "-abc"
			if err := os.Mkdir(filepath.Join(root, dirName), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tt.write(t, ws, root); err != nil {
				t.Fatal(err)
			}
			for _, name := range orphans {
				if _, err := os.Lstat(filepath.Join(root, name)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the orphaned temporary file %s is still there (%v)", name, err)
				}
			}
			for _, name := range append(kept, dirName) {
				if _, err := os.Lstat(filepath.Join(root, name)); err != nil {
					t.Errorf("%s was removed: %v", name, err)
				}
			}
		})
	}
}
