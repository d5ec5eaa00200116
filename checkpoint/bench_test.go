package checkpoint_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/checkpoint"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/workspace"
)

// BenchmarkCheckpoint200k: a contained command that changes 10 files of the
// 200,000-file tree of the other benchmarks, bare (contained, not watched) and
// checkpointed: watched, the 10 files kept and compared (the Record made). "first" is
// the first checkpoint of a session (a new Recorder and a new, empty store each time);
// "later" shares one Recorder and store across iterations, as a session does. It
// reports the bare run's median and the medians of what each checkpointed run took
// over the bare run of its iteration (targets: first ≤ 2,000 ms, later ≤ 100 ms).
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
	change := func(rec *checkpoint.Recorder) {
		script := scripts[runs%2]
		runs++
		if r := run(b, box, rec, root, script); rec != nil && len(r.Changes) != 10 {
			b.Fatalf("the checkpoint has %d changes, want the 10 files", len(r.Changes))
		}
	}
	// Each iteration runs the three back to back, in rotating order, so that they meet
	// the same load; the medians of the differences are reported.
	later := checkpoint.NewRecorder(checkpoint.OpenStore(filepath.Join(b.TempDir(), "store"), checkpoint.DefaultLimits()), ws, func(checkpoint.Record) {})
	var bare, first, again []float64
	timed := func(rec *checkpoint.Recorder) float64 {
		start := time.Now()
		change(rec)
		return float64(time.Since(start).Microseconds()) / 1000
	}
	for i := 0; b.Loop(); i++ {
		for k := range 3 {
			switch (i + k) % 3 {
			case 0:
				bare = append(bare, timed(nil))
			case 1:
				// The first checkpoint of a session: a workspace new to this process (its
				// ignore rules read again), a new, empty store.
				w, err := workspace.New(root)
				if err != nil {
					b.Fatal(err)
				}
				store := checkpoint.OpenStore(filepath.Join(b.TempDir(), "store"), checkpoint.DefaultLimits())
				first = append(first, timed(checkpoint.NewRecorder(store, w, func(checkpoint.Record) {})))
			case 2:
				again = append(again, timed(later))
			}
		}
	}
	n := min(len(bare), len(first), len(again))
	diff := func(xs []float64) []float64 {
		out := make([]float64, n)
		for i := range n {
			out[i] = xs[i] - bare[i]
		}
		return out
	}
	b.ReportMetric(median(bare), "bare-ms")
	b.ReportMetric(median(diff(first)), "first-extra-ms")
	b.ReportMetric(median(diff(again)), "later-extra-ms")
	b.ReportMetric(0, "ns/op")
}

// median returns the median of xs.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
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

// BenchmarkWatchOverhead: what watching adds to each system call it stops, with a
// shell loop writing 1,000 files, outside the workspace (the temporary folder, as
// compilers' caches are: the watcher only tells it from a workspace path) and inside
// it (each file's absence kept, then compared at the end). Each iteration runs the
// loop contained but not watched and watched, back to back, and it reports the median
// of the bare runs and of what watching added per written file.
func BenchmarkWatchOverhead(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		b.Fatal(err)
	}
	box := newBox(b, root)
	tmp := os.Getenv("TMPDIR") // newBox's
	const files = 1000
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo x > f$i; i=$((i+1)); done; rm -f f*`, files)
	for _, where := range []struct{ name, dir string }{{"outside", tmp}, {"inside", root}} {
		b.Run(where.name, func(b *testing.B) {
			store := checkpoint.OpenStore(filepath.Join(b.TempDir(), "store"), checkpoint.DefaultLimits())
			rec := checkpoint.NewRecorder(store, ws, func(checkpoint.Record) {})
			var bare, extra []float64
			for i := 0; b.Loop(); i++ {
				var t [2]float64
				for k := range 2 {
					// (i+k)%2 is 1 for the watched run, rec's; 0 for the bare one.
					r := map[int]*checkpoint.Recorder{0: nil, 1: rec}[(i+k)%2]
					start := time.Now()
					run(b, box, r, where.dir, script)
					t[(i+k)%2] = float64(time.Since(start).Microseconds())
				}
				bare = append(bare, t[0]/1000)
				extra = append(extra, (t[1]-t[0])/files)
			}
			b.ReportMetric(median(bare), "bare-ms")
			b.ReportMetric(median(extra), "extra-µs/file")
			b.ReportMetric(0, "ns/op")
		})
	}
}
