package checkpoint_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/checkpoint"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/workspace"
)

func TestMain(m *testing.M) {
	sandbox.Enter()
	os.Exit(m.Run())
}

// run runs script in dir, contained and watched by a Command of rec, and returns the
// Record; with rec nil, contained alone.
func run(t testing.TB, box *sandbox.Sandbox, rec *checkpoint.Recorder, dir, script string) checkpoint.Record {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	if err := box.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	if rec == nil {
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", script, err, out)
		}
		return checkpoint.Record{}
	}
	c := rec.Command(script)
	wt, err := box.Watch(cmd, c)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		wt.Abandon()
		t.Fatal(err)
	}
	wt.Started()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v: %s", script, err, out.String())
	}
	if err := wt.Stop(); err != nil {
		t.Fatalf("not watched: %v", err)
	}
	return c.Finish()
}

func newBox(t testing.TB, root string) *sandbox.Sandbox {
	t.Helper()
	m, exe := testutil.Landlocked(t)
	t.Setenv("TMPDIR", t.TempDir())
	box, err := sandbox.New(m, sandbox.Config{}, sandbox.Options{Roots: []string{root}, Helper: exe})
	if err != nil {
		t.Fatal(err)
	}
	return box
}

func write(t testing.TB, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

// TestCommandRecords runs a real command that changes files in every way and checks
// the Record: each change with what the path held before, kept in the store; renames
// paired; ignored paths counted, not recorded; a file over the size limit recorded as
// not restorable; files only read absent.
func TestCommandRecords(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, ".gitignore"), "build/\n", 0o644)
	write(t, filepath.Join(root, "edit.txt"), "old\n", 0o644)
	write(t, filepath.Join(root, "gone.txt"), "gone\n", 0o644)
	write(t, filepath.Join(root, "from.txt"), "moved\n", 0o644)
	write(t, filepath.Join(root, "run.sh"), "#!/bin/sh\n", 0o644)
	write(t, filepath.Join(root, "read.txt"), "read\n", 0o644)
	write(t, filepath.Join(root, "big.bin"), strings.Repeat("x", 2000), 0o644)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	store := checkpoint.OpenStore(filepath.Join(t.TempDir(), "store"), checkpoint.Limits{MaxFile: 1000, MaxBytes: 1 << 20})
	var got []checkpoint.Record
	rec := checkpoint.NewRecorder(store, ws, func(r checkpoint.Record) { got = append(got, r) })
	box := newBox(t, root)
	r := run(t, box, rec, root, `cat read.txt >/dev/null; sed -i s/old/new/ edit.txt; rm gone.txt; mv from.txt to.txt; chmod +x run.sh; mkdir -p dir/sub; echo made > dir/sub/new.txt; mkdir build; echo o > build/out.o; echo y >> big.bin`)
	if len(got) != 1 {
		t.Fatalf("the recorder was handed %d records, want 1", len(got))
	}
	byPath := map[string]checkpoint.Change{}
	for _, ch := range r.Changes {
		byPath[ws.Rel(ch.Path)] = ch
	}
	var paths []string
	for p := range byPath {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	want := []string{"big.bin", "dir", "dir/sub", "dir/sub/new.txt", "edit.txt", "gone.txt", "run.sh", "to.txt"}
	if !slices.Equal(paths, want) {
		t.Fatalf("changed paths %v, want %v", paths, want)
	}
	content := func(st checkpoint.State) string {
		b, err := store.Read(st.Hash)
		if err != nil {
			t.Fatalf("reading %s: %v", st.Hash, err)
		}
		return string(b)
	}
	if ch := byPath["edit.txt"]; content(ch.Before) != "old\n" || ch.After.Kind != checkpoint.File {
		t.Errorf("edit.txt: %+v", ch)
	}
	if ch := byPath["gone.txt"]; content(ch.Before) != "gone\n" || ch.After.Kind != checkpoint.Absent {
		t.Errorf("gone.txt: %+v", ch)
	}
	if ch := byPath["to.txt"]; ws.Rel(ch.From) != "from.txt" || content(ch.Before) != "moved\n" {
		t.Errorf("to.txt, want renamed from from.txt: %+v", ch)
	}
	if ch := byPath["run.sh"]; ch.Before.Mode != 0o644 || ch.After.Mode&0o111 == 0 {
		t.Errorf("run.sh, want a mode change: %+v", ch)
	}
	if ch := byPath["dir/sub/new.txt"]; ch.Before.Kind != checkpoint.Absent || ch.After.Kind != checkpoint.File {
		t.Errorf("dir/sub/new.txt, want created: %+v", ch)
	}
	if ch := byPath["big.bin"]; ch.Before.Lost == "" || ch.Before.Hash == ch.After.Hash {
		t.Errorf("big.bin, want changed and not restorable: %+v", ch)
	}
	if r.LeftOut != 2 || !slices.Equal(r.Examples, []string{"build", "build/out.o"}) {
		t.Errorf("left out %d %v, want build and build/out.o", r.LeftOut, r.Examples)
	}
}
