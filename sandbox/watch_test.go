package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/sandbox"
)

// seen records what a Watcher is told.
type seen struct {
	mu    sync.Mutex
	paths []string
}

func (s *seen) Changing(path string, tree bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tree {
		path += " (tree)"
	}
	s.paths = append(s.paths, path)
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

// TestWatch runs real commands that change files in every way a watched command is
// stopped at, and checks that the Watcher heard of each path before the change (the
// file still held its old text when it was told) and of nothing only read.
func TestWatch(t *testing.T) {
	for _, level := range levels {
		t.Run(string(level), func(t *testing.T) {
			m := machine(t, level)
			p := newPlace(t)
			box := newBox(t, m, sandbox.Config{}, p)
			for name, text := range map[string]string{"edit.txt": "old\n", "gone.txt": "gone\n", "from.txt": "moved\n", "exec.sh": "#!/bin/sh\n", "read.txt": "read\n"} {
				if err := os.WriteFile(filepath.Join(p.ws, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var mu sync.Mutex
			before := map[string]string{}
			w := watcherFunc(func(path string, tree bool) {
				b, err := os.ReadFile(path)
				mu.Lock()
				defer mu.Unlock()
				if _, ok := before[path]; !ok {
					before[path] = string(b)
					if err != nil {
						before[path] = "(absent)"
					}
				}
			})
			script := `cat read.txt >/dev/null; sed -i s/old/new/ edit.txt; rm gone.txt; mv from.txt to.txt; chmod +x exec.sh; mkdir dir; echo made > dir/new.txt; cd dir && echo rel > rel.txt`
			cmd := exec.Command("/bin/sh", "-c", script)
			cmd.Dir = p.ws
			if err := box.Wrap(cmd); err != nil {
				t.Fatal(err)
			}
			wt, err := box.Watch(cmd, w)
			if err != nil {
				t.Fatal(err)
			}
			out, err := startWatched(cmd, wt)
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if err := wt.Stop(); err != nil {
				t.Fatalf("not watched: %v", err)
			}
			want := map[string]string{
				"edit.txt":    "old\n",
				"gone.txt":    "gone\n",
				"from.txt":    "moved\n",
				"to.txt":      "(absent)",
				"exec.sh":     "#!/bin/sh\n",
				"dir":         "",
				"dir/new.txt": "(absent)",
				"dir/rel.txt": "(absent)",
			}
			mu.Lock()
			defer mu.Unlock()
			for rel, text := range want {
				got, ok := before[filepath.Join(p.ws, rel)]
				if !ok {
					t.Errorf("the watcher was not told of %s; it heard of %v", rel, keys(before))
					continue
				}
				if rel != "dir" && got != text {
					t.Errorf("before %s changed it held %q, want %q", rel, got, text)
				}
			}
			if _, ok := before[filepath.Join(p.ws, "read.txt")]; ok {
				t.Errorf("the watcher was told of read.txt, which was only read")
			}
		})
	}
}

// TestWatchNested: a watched command started inside a watched command runs,
// unwatched (a process holds one listening filter only), and its Stop says why.
func TestWatchNested(t *testing.T) {
	m := machine(t, sandbox.LevelNamespaces)
	p := newPlace(t)
	box := newBox(t, m, sandbox.Config{}, p)
	var s seen
	// The test binary, as innerWatch, watches a command of its own.
	cmd := exec.Command(self(t))
	cmd.Env = append(os.Environ(), envInner+"="+p.ws)
	cmd.Dir = p.ws
	if err := box.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	wt, err := box.Watch(cmd, &s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := startWatched(cmd, wt)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if err := wt.Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "inner ran; not watched: the command runs inside a watched command already") {
		t.Errorf("the inner command said %q", out)
	}
	if got := s.list(); !slices.Contains(got, filepath.Join(p.ws, "inner.txt")) {
		t.Errorf("the outer watch was told of %v, want inner.txt", got)
	}
}

// envInner makes the test binary run innerWatch in the directory it names.
const envInner = "AGENTLS_TEST_WATCH_INNER"

// innerWatch watches a command from inside a watched command and prints what came of
// it.
func innerWatch(dir string) {
	box, err := sandbox.New(sandbox.Probe(os.Args[0]), sandbox.Config{}, sandbox.Options{Roots: []string{dir}, Helper: os.Args[0]})
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd := exec.Command("/bin/sh", "-c", "echo x > inner.txt")
	cmd.Dir = dir
	if err := box.Wrap(cmd); err != nil {
		fmt.Println(err)
		return
	}
	wt, err := box.Watch(cmd, watcherFunc(func(string, bool) {}))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := startWatched(cmd, wt); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("inner ran; not watched: %v\n", wt.Stop())
}

type watcherFunc func(path string, tree bool)

func (f watcherFunc) Changing(path string, tree bool) { f(path, tree) }

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func startWatched(cmd *exec.Cmd, wt *sandbox.Watch) (string, error) {
	var b strings.Builder
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		wt.Abandon()
		return "", err
	}
	wt.Started()
	err := cmd.Wait()
	return b.String(), err
}
