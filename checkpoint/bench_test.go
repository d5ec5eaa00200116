package checkpoint_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/checkpoint"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/workspace"
)

// BenchmarkCheckpoint200k: a contained command that changes 10 files of the
// 200,000-file tree of the other benchmarks, bare (contained, not watched) and
// checkpointed: watched, the 10 files kept and compared (the Record made). "first" is
// the first checkpoint of a session (a new Recorder and a new, empty store each time);
// "later" shares one Recorder and store across iterations, as a session does. The
// checkpoints' cost is the difference with "bare" (bench/run.sh prints it).
func BenchmarkCheckpoint200k(b *testing.B) {
	root := testutil.LargeTree(b, 200_000)
	var files []string
	for i := range 10 {
		files = append(files, filepath.Join(root, fmt.Sprintf("mod%02d", i), "pkg000", fmt.Sprintf("f%06d.go", i)))
	}
	// Each run adds a space after return in the 10 files or takes it away, so that
	// every run changes them and the shared tree ends as it began.
	scripts := []string{
		`sed -i 's/^\treturn /\treturn  /' ` + strings.Join(files, " "),
		`sed -i 's/^\treturn  /\treturn /' ` + strings.Join(files, " "),
	}
	ws, err := workspace.New(root)
	if err != nil {
		b.Fatal(err)
	}
	box := newBox(b, root)
	runs := 0
	b.Cleanup(func() {
		if runs%2 == 1 {
			exec.Command("/bin/sh", "-c", scripts[1]).Run()
		}
	})
	run := func(b *testing.B, rec *checkpoint.Recorder) {
		script := scripts[runs%2]
		runs++
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = root
		if err := box.Wrap(cmd); err != nil {
			b.Fatal(err)
		}
		if rec == nil {
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			return
		}
		c := rec.Command(script)
		wt, err := box.Watch(cmd, c)
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			wt.Abandon()
			b.Fatal(err)
		}
		wt.Started()
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		if err := wt.Stop(); err != nil {
			b.Fatal(err)
		}
		if r := c.Finish(); len(r.Changes) != 10 {
			b.Fatalf("the checkpoint has %d changes, want the 10 files", len(r.Changes))
		}
	}
	newRecorder := func(b *testing.B) *checkpoint.Recorder {
		store := checkpoint.OpenStore(filepath.Join(b.TempDir(), "store"), checkpoint.DefaultLimits())
		return checkpoint.NewRecorder(store, ws, func(checkpoint.Record) {})
	}
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			run(b, nil)
		}
	})
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			// A workspace new to this process: the ignore rules are read again.
			w, err := workspace.New(root)
			if err != nil {
				b.Fatal(err)
			}
			store := checkpoint.OpenStore(filepath.Join(b.TempDir(), "store"), checkpoint.DefaultLimits())
			rec := checkpoint.NewRecorder(store, w, func(checkpoint.Record) {})
			b.StartTimer()
			run(b, rec)
		}
	})
	b.Run("later", func(b *testing.B) {
		rec := newRecorder(b)
		for b.Loop() {
			run(b, rec)
		}
	})
}

// BenchmarkStore500Turns: 500 turns, each a command rewriting 10 of 100 files of a
// workspace (each file about 7 KB, its first line changed), recorded in one store; it reports
// the store's bytes over the bytes of the files the turns changed (target: under 2).
func BenchmarkStore500Turns(b *testing.B) {
	for b.Loop() {
		root, err := filepath.EvalSymlinks(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		var body strings.Builder
		for i := range 100 {
			fmt.Fprintf(&body, "line %d of a file of the workspace, long enough to be a line of code\n", i)
		}
		for i := range 100 {
			write(b, filepath.Join(root, fmt.Sprintf("f%03d.txt", i)), fmt.Sprintf("file %d\n", i)+body.String(), 0o644)
		}
		ws, err := workspace.New(root)
		if err != nil {
			b.Fatal(err)
		}
		store := checkpoint.OpenStore(filepath.Join(b.TempDir(), "store"), checkpoint.DefaultLimits())
		rec := checkpoint.NewRecorder(store, ws, func(checkpoint.Record) {})
		box := newBox(b, root)
		var changed int64
		turns := 500
		if testing.Short() {
			turns = 20 // bench/run.sh under BENCH_QUICK
		}
		for turn := range turns {
			var names []string
			for j := range 10 {
				names = append(names, fmt.Sprintf("f%03d.txt", (turn*7+j*13)%100))
			}
			r := run(b, box, rec, root, fmt.Sprintf("sed -i '1s/ turn [0-9]*$//; 1s/$/ turn %d/' %s", turn, strings.Join(names, " ")))
			for _, c := range r.Changes {
				changed += c.After.Size
			}
		}
		size, err := store.Size()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(size)/float64(changed), "store/changed")
		b.ReportMetric(float64(changed), "changed-bytes")
	}
}
