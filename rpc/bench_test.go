package rpc_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// The benchmarks drive the real agentls binary over pipes, as an editor does; the
// binary is built without the race detector for them (see TestMain).
//
//	go test -run='^$' -bench=. -benchtime=2000x ./rpc

// BenchmarkStartToInitialize measures from starting the process to the initialize
// response.
func BenchmarkStartToInitialize(b *testing.B) {
	benchStartToInitialize(b, workspaceDir(b, map[string]string{"a.txt": "x\n"}))
}

// BenchmarkStartToInitializeLarge is BenchmarkStartToInitialize in a workspace of
// 200,000 files (testutil.LargeTree): initialize must not walk it.
func BenchmarkStartToInitializeLarge(b *testing.B) {
	benchStartToInitialize(b, testutil.LargeTree(b, 200_000))
}

// BenchmarkStartToInitializeGeminiSetup is BenchmarkStartToInitialize with a Gemini CLI
// user's setup in the home folder: 50 custom commands (half of them in folders), 20
// skills and 5 extensions, each extension with a command, a skill, a context file and
// excluded tools. Its median beside BenchmarkStartToInitialize's is what reading them
// costs a start.
func BenchmarkStartToInitializeGeminiSetup(b *testing.B) {
	home := b.TempDir()
	testutil.GeminiSetup(b, home)
	benchStartToInitializeEnv(b, workspaceDir(b, map[string]string{"a.txt": "x\n"}), []string{"HOME=" + home})
}

func benchStartToInitialize(b *testing.B, root string) { benchStartToInitializeEnv(b, root, nil) }

func benchStartToInitializeEnv(b *testing.B, root string, env []string) {
	ctx := context.Background()
	var total time.Duration
	var samples []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		t0 := time.Now()
		b.StartTimer()
		c := startEnv(b, root, env)
		if err := c.Call(ctx, "initialize", initParams(root, capsEditor, nil), nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		d := time.Since(t0)
		total += d
		samples = append(samples, d)
		c.Notify("initialized", map[string]any{})
		if code, err := c.Shutdown(ctx); err != nil || code != 0 {
			b.Fatalf("shutdown: %d %v", code, err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
}

// BenchmarkRunToolReadFile measures the round trip of agentls.runTool of read_file on
// a small file, one call at a time.
func BenchmarkRunToolReadFile(b *testing.B) {
	benchmarkRunToolReadFile(b, capsEditor)
}

// BenchmarkRunToolReadFileDiagnostics is BenchmarkRunToolReadFile for a client that
// takes diagnostics: a quick call must not pay for the diagnostics of its location.
func BenchmarkRunToolReadFileDiagnostics(b *testing.B) {
	benchmarkRunToolReadFile(b, withDiagnostics(capsEditor))
}

func benchmarkRunToolReadFile(b *testing.B, caps map[string]any) {
	root := workspaceDir(b, map[string]string{"small.txt": strings.Repeat("a line of text\n", 20)})
	c := session(b, root, caps, nil)
	ctx := context.Background()
	params := map[string]any{"command": "agentls.runTool",
		"arguments": []any{map[string]any{"name": "read_file", "args": map[string]any{"file_path": "small.txt"}}}}
	for range 100 { // warm up
		if err := c.Call(ctx, "workspace/executeCommand", params, nil); err != nil {
			b.Fatal(err)
		}
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		var res tools.CallResult
		if err := c.Call(ctx, "workspace/executeCommand", params, &res); err != nil || res.Status != tools.StatusSuccess {
			b.Fatalf("%v %+v", err, res)
		}
		samples = append(samples, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(median(samples).Nanoseconds())/1000, "µs-median")
	if n := len(c.Received("textDocument/publishDiagnostics")); n > b.N/100 {
		b.Errorf("%d publishDiagnostics for %d quick calls", n, b.N)
	}
}

// BenchmarkRunToolPipelined measures throughput with many calls in flight.
func BenchmarkRunToolPipelined(b *testing.B) {
	root := workspaceDir(b, map[string]string{"small.txt": strings.Repeat("a line of text\n", 20)})
	c := session(b, root, capsEditor, nil)
	ctx := context.Background()
	params := map[string]any{"command": "agentls.runTool",
		"arguments": []any{map[string]any{"name": "read_file", "args": map[string]any{"file_path": "small.txt"}}}}
	const window = 128
	b.ResetTimer()
	t0 := time.Now()
	inflight := make([]*lsptest.Pending, 0, window)
	for i := range b.N {
		inflight = append(inflight, c.Go("workspace/executeCommand", params))
		if len(inflight) == window || i == b.N-1 {
			for _, p := range inflight {
				var res tools.CallResult
				if err := p.Wait(ctx, &res); err != nil || res.Status != tools.StatusSuccess {
					b.Fatalf("%v %+v", err, res)
				}
			}
			inflight = inflight[:0]
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "calls/s")
}

// BenchmarkDidChange1MB measures an incremental didChange of a 1 MB document, applied:
// the changes are pipelined, and a request after them returns only once all are
// applied, since notifications are handled in order before it.
func BenchmarkDidChange1MB(b *testing.B) {
	benchmarkDidChange(b, false)
}

// BenchmarkDidChangeFull1MB is BenchmarkDidChange1MB with the whole text in each change.
func BenchmarkDidChangeFull1MB(b *testing.B) {
	benchmarkDidChange(b, true)
}

func benchmarkDidChange(b *testing.B, full bool) {
	line := "func example(a, b int) int { return a*b + 42 } // some code\n"
	text := strings.Repeat(line, (1<<20)/len(line))
	root := workspaceDir(b, map[string]string{"big.go": text})
	c := session(b, root, capsEditor, nil)
	ctx := context.Background()
	uri := lsptest.FileURI(filepath.Join(root, "big.go"))
	if err := c.Editor().Open(uri, text); err != nil {
		b.Fatal(err)
	}
	mid := strings.Count(text, "\n") / 2
	// The notifications are encoded beforehand: the client's JSON encoding of a
	// megabyte is not what is measured.
	frames := make([][]byte, b.N)
	for i := range frames {
		var ch map[string]any
		if full {
			ch = map[string]any{"text": text}
		} else {
			// Type a character in the middle of the document.
			p := map[string]any{"line": mid, "character": 5}
			ch = map[string]any{"range": map[string]any{"start": p, "end": p}, "text": "x"}
		}
		frames[i] = lsptest.Frame([]byte(mustJSON(b, map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange",
			"params": map[string]any{"textDocument": map[string]any{"uri": uri, "version": i + 2}, "contentChanges": []any{ch}}})))
	}
	sync := func() {
		if err := c.Call(ctx, "textDocument/codeAction", map[string]any{}, nil); err != nil {
			b.Fatal(err)
		}
	}
	sync()
	b.ResetTimer()
	for _, f := range frames {
		if err := c.WriteRaw(f); err != nil {
			b.Fatal(err)
		}
	}
	sync()
	b.StopTimer()
	if !full {
		// The document really changed, and the tools read it.
		var res tools.CallResult
		if err := command(ctx, c, "agentls.runTool", map[string]any{"name": "read_file",
			"args": map[string]any{"file_path": "big.go", "start_line": mid + 1, "end_line": mid + 1}}, &res); err != nil {
			b.Fatal(err)
		}
		// (read_file shortens lines over 2000 characters.)
		want := "func " + strings.Repeat("x", b.N) + "example"
		if b.N > 1500 {
			want = "func " + strings.Repeat("x", 1500)
		}
		if !strings.Contains(res.Output, want) {
			b.Fatalf("the changes were not applied: %.200s", res.Output)
		}
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkRunToolEdit measures the round trip of agentls.runTool of an edit of a
// document open in the editor, which the editor applies, for a rich client that does
// not report its diagnostics: what the editor's diagnostics (editordiags.go) cost a
// client without them (compare it on a build without them).
func BenchmarkRunToolEdit(b *testing.B) {
	root := workspaceDir(b, map[string]string{"a.go": "package a\n\nvar x = 1\n"})
	c := session(b, root, capsRich, map[string]any{"approvalMode": "yolo"})
	ctx := context.Background()
	file := filepath.Join(root, "a.go")
	if err := c.Editor().Open(lsptest.FileURI(file), "package a\n\nvar x = 1\n"); err != nil {
		b.Fatal(err)
	}
	values := []string{"1", "2"}
	edit := func(i int) {
		var res tools.CallResult
		err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "agentls.runTool",
			"arguments": []any{map[string]any{"name": "replace", "args": map[string]any{
				"file_path": file, "old_string": "var x = " + values[i%2], "new_string": "var x = " + values[(i+1)%2]}}}}, &res)
		if err != nil || res.Status != tools.StatusSuccess {
			b.Fatalf("%v %+v", err, res)
		}
	}
	for i := range 50 { // warm up
		edit(i)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		edit(50 + i)
		samples = append(samples, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(median(samples).Nanoseconds())/1000, "µs-median")
	if n := len(c.Received("agentls/collectDiagnostics")); n != 0 {
		b.Errorf("%d agentls/collectDiagnostics to a client without the capability", n)
	}
}
