package search

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// The benchmarks search GOROOT/src and run, as sibling sub-benchmarks in the same
// binary, the reference ripgrep command, so that ratios compare like with like on the
// same machine at the same time. bench/search.sh runs them and prints the ratios.

func gorootSrc(b *testing.B) (*workspace.Workspace, string) {
	b.Helper()
	dir, err := filepath.EvalSymlinks(filepath.Join(runtime.GOROOT(), "src"))
	if err != nil {
		b.Skipf("GOROOT/src: %v", err)
	}
	ws, err := workspace.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	return ws, dir
}

// runRaw runs rg with args in dir, its output thrown away, and fails on an error
// exit (1, no match, is fine).
func runRaw(b *testing.B, rg, dir string, args ...string) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	cmd := exec.Command(rg, args...)
	cmd.Dir = dir
	cmd.Stdout = devnull
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			b.Fatalf("rg %v: %v", args, err)
		}
	}
}

// BenchmarkGrepGoroot compares grep_search with either engine against the very rg
// command line the rg engine runs (rg-raw). The cap100 cases use the default
// total_max_matches, which lets the tool stop early (rg-raw searches everything); the
// cap100000 cases make the tool search the whole tree too.
func BenchmarkGrepGoroot(b *testing.B) {
	ws, _ := gorootSrc(b)
	benchGrep(b, ws)
}

// BenchmarkGrepLarge is BenchmarkGrepGoroot over a workspace of 200,000 files
// (testutil.LargeTree), made once and kept in the temporary directory.
func BenchmarkGrepLarge(b *testing.B) {
	ws, _ := largeTree(b)
	benchGrep(b, ws)
}

// largeTree is the 200,000-file workspace of the scale benchmarks.
func largeTree(b *testing.B) (*workspace.Workspace, string) {
	dir := testutil.LargeTree(b, 200_000)
	ws, err := workspace.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	return ws, dir
}

// benchGrep runs the grep_search sub-benchmarks in ws.
func benchGrep(b *testing.B, ws *workspace.Workspace) {
	rg, rgErr := exec.LookPath("rg")
	patterns := []struct{ name, args string }{
		{"literal", `"pattern":"func main","fixed_strings":true,"case_sensitive":true`},
		{"regex", `"pattern":"func \\w+Handler\\(","case_sensitive":true`},
		{"icase", `"pattern":"func main"`},
	}
	caps := []struct{ name, args string }{
		{"cap100", ``},
		{"cap100000", `,"total_max_matches":100000`},
	}
	for _, p := range patterns {
		for _, cp := range caps {
			args := "{" + p.args + cp.args + "}"
			b.Run(p.name+"/"+cp.name+"/rg-raw", func(b *testing.B) {
				if rgErr != nil {
					b.Skip("rg not installed")
				}
				raw := rawCommand(b, &grepTool{ws: ws, rg: rg}, args)
				for b.Loop() {
					raw()
				}
			})
			b.Run(p.name+"/"+cp.name+"/tool-rg", func(b *testing.B) {
				if rgErr != nil {
					b.Skip("rg not installed")
				}
				benchTool(b, &grepTool{ws: ws, rg: rg}, args)
			})
			b.Run(p.name+"/"+cp.name+"/tool-go", func(b *testing.B) {
				benchTool(b, &grepTool{ws: ws}, args)
			})
			b.Run(p.name+"/"+cp.name+"/paired", func(b *testing.B) {
				if rgErr != nil {
					b.Skip("rg not installed")
				}
				raw := rawCommand(b, &grepTool{ws: ws, rg: rg}, args)
				benchPaired(b, raw, []tools.Invocation{
					build(b, &grepTool{ws: ws, rg: rg}, args),
					build(b, &grepTool{ws: ws}, args),
				}, []string{"rg/raw", "go/raw"})
			})
		}
	}
}

// BenchmarkGlobGoroot compares glob '**/*.go' with `rg --files -g '*.go'` (ripgrep's
// defaults otherwise).
func BenchmarkGlobGoroot(b *testing.B) {
	ws, dir := gorootSrc(b)
	benchGlob(b, ws, dir)
}

// BenchmarkGlobLarge is BenchmarkGlobGoroot over the 200,000-file workspace.
func BenchmarkGlobLarge(b *testing.B) {
	ws, dir := largeTree(b)
	benchGlob(b, ws, dir)
}

// benchGlob runs the glob sub-benchmarks in ws, whose root is dir.
func benchGlob(b *testing.B, ws *workspace.Workspace, dir string) {
	b.Run("rg-files", func(b *testing.B) {
		rg, err := exec.LookPath("rg")
		if err != nil {
			b.Skip("rg not installed")
		}
		for b.Loop() {
			runRaw(b, rg, dir, "--files", "-g", "*.go")
		}
	})
	b.Run("tool", func(b *testing.B) {
		benchTool(b, &globTool{ws: ws}, `{"pattern":"**/*.go"}`)
	})
	b.Run("paired", func(b *testing.B) {
		rg, err := exec.LookPath("rg")
		if err != nil {
			b.Skip("rg not installed")
		}
		raw := func() { runRaw(b, rg, dir, "--files", "-g", "*.go") }
		benchPaired(b, raw, []tools.Invocation{build(b, &globTool{ws: ws}, `{"pattern":"**/*.go"}`)}, []string{"tool/raw"})
	})
}

// rawCommand returns a function running the rg command line of the grep_search call
// args with rg, its output thrown away.
func rawCommand(b *testing.B, t *grepTool, args string) func() {
	rgArgs := build(b, t, args).(*grepCall).ripgrepArgs()
	return func() { runRaw(b, t.rg, t.ws.Roots()[0], rgArgs...) }
}

// benchPaired runs raw and each call in turn, in a rotating order, every iteration,
// and reports each call's total time as a ratio to raw's. Run side by side this way,
// both meet the same load from the rest of the machine, so the ratio holds steadier
// than one of separate benchmarks on a busy machine.
func benchPaired(b *testing.B, raw func(), calls []tools.Invocation, names []string) {
	b.Helper()
	run := make([]func(), 0, len(calls)+1)
	run = append(run, raw)
	for _, inv := range calls {
		run = append(run, func() {
			if _, err := inv.Execute(context.Background(), io.Discard); err != nil {
				b.Fatal(err)
			}
		})
	}
	total := make([]time.Duration, len(run))
	i := 0
	for b.Loop() {
		for j := range run {
			k := (i + j) % len(run)
			start := time.Now()
			run[k]()
			total[k] += time.Since(start)
		}
		i++
	}
	for j, name := range names {
		b.ReportMetric(float64(total[j+1])/float64(total[0]), name)
	}
}

func build(b *testing.B, t tools.Tool, args string) tools.Invocation {
	b.Helper()
	inv, err := t.Build(json.RawMessage(args))
	if err != nil {
		b.Fatal(err)
	}
	return inv
}

func benchTool(b *testing.B, t tools.Tool, args string) {
	b.Helper()
	inv := build(b, t, args)
	for b.Loop() {
		if _, err := inv.Execute(context.Background(), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
