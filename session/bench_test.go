package session

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/tools"
)

// The scripted session of bench/agent.sh: the same script and fixture project, so that
// this in-process figure and the end-to-end ones measure the same work.
const (
	benchScript   = "../bench/agent/script.json"
	benchFixture  = "../bench/agent/fixture"
	benchExpected = "../bench/agent/expected"
	benchDone     = "AGENT-BENCH-DONE" // ends the script's final answer
)

// BenchmarkScriptedSession runs one whole agent session per iteration, as `agentls
// prompt` does minus the process: a Toolbox over a fresh copy of the fixture project
// (yolo mode), the real Gemini client against the fake Gemini server on loopback
// (in process, so its own work counts too), a stored session, and the 4-turn script
// making 15 tool calls (read_file, glob, grep_search, replace, run_shell_command).
// The copy and the fake server are made with the timer stopped; after each iteration
// the benchmark checks that every call succeeded, the answer arrived and the project
// was edited exactly as expected.
func BenchmarkScriptedSession(b *testing.B) {
	script, err := clients.LoadScript(benchScript)
	if err != nil {
		b.Fatal(err)
	}
	wantCalls := 0
	for _, t := range script.Turns {
		wantCalls += len(t.Calls)
	}
	want := readTree(b, benchExpected)
	tmp := b.TempDir()
	root := filepath.Join(tmp, "project")
	config := filepath.Join(tmp, "config")
	geminiDir := filepath.Join(tmp, "gemini")
	stateDir := filepath.Join(tmp, "state")
	ctx := context.Background()

	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := os.RemoveAll(root); err != nil {
			b.Fatal(err)
		}
		if err := os.CopyFS(root, os.DirFS(benchFixture)); err != nil {
			b.Fatal(err)
		}
		srv := fakegemini.Start(script)
		var mu sync.Mutex
		var succeeded []string
		var failed []string
		observe := func(ev tools.Event) {
			if !ev.Status.Terminal() {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if ev.Status == tools.StatusSuccess {
				succeeded = append(succeeded, ev.Name)
				return
			}
			msg := string(ev.Status)
			if ev.Result != nil && ev.Result.Error != nil {
				msg = ev.Result.Error.Message
			}
			failed = append(failed, ev.Name+": "+msg)
		}
		b.StartTimer()

		res := runBenchSession(ctx, b, root, config, geminiDir, stateDir, srv.URL, observe)

		b.StopTimer()
		srv.Close()
		if res.StopReason != StopEndTurn || !strings.Contains(res.Text, benchDone) {
			b.Fatalf("the session ended %s with %q", res.StopReason, res.Text)
		}
		if len(failed) > 0 || len(succeeded) != wantCalls {
			b.Fatalf("%d calls succeeded (want %d); failed: %q", len(succeeded), wantCalls, failed)
		}
		if got := readTree(b, root); !equalTrees(got, want) {
			b.Fatalf("the project after the session differs from %s:\n%s", benchExpected, treeDiff(got, want))
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(wantCalls), "calls/op")
}

// runBenchSession is the timed part: what `agentls prompt` does once its flags are read.
func runBenchSession(ctx context.Context, b *testing.B, root, config, geminiDir, stateDir, url string, observe tools.Observer) Result {
	tb, err := toolbox.New(toolbox.Options{Roots: []string{root}, ConfigDir: config, GeminiDir: geminiDir, Mode: "yolo", Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	defer tb.Close()
	client, err := clients.NewGemini(ctx, clients.GeminiOptions{
		APIKey:  "fake",
		Model:   "gemini-2.5-flash",
		BaseURL: url,
		Retry:   clients.RetryPolicy{Attempts: 1},
		Logger:  discard(),
	})
	if err != nil {
		b.Fatal(err)
	}
	// The session's registry: the toolbox's with the model's google_web_search.
	reg := tb.Config().Registry.Clone()
	reg.Register(tb.SearchTool(Searcher(client)))
	s, err := New(ctx, Options{
		Client:       client,
		Declarations: func() []tools.Declaration { return reg.DeclarationsIn(tools.Situation{Mode: confirm.ModeYolo}) },
		Runner:       tb.SchedulerOver(reg, tb.Config().Policy, nil, observe),
		Store:        NewStore(stateDir),
		Env:          Environment{Roots: tb.Workspace.Roots(), ConfigDir: config},
		Logger:       discard(),
	})
	if err != nil {
		b.Fatal(err)
	}
	res, err := s.Prompt(ctx, "Rename greet.Hello to greet.Greet and note it in a changelog.", nil)
	if err != nil {
		b.Fatalf("prompt: %v", err)
	}
	return res
}

// readTree returns the regular files under dir by slash path, with their contents.
func readTree(b *testing.B, dir string) map[string][]byte {
	b.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return files
}

func equalTrees(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for name, data := range a {
		if other, ok := b[name]; !ok || !bytes.Equal(data, other) {
			return false
		}
	}
	return true
}

// treeDiff names the files that are missing, extra or different in got.
func treeDiff(got, want map[string][]byte) string {
	var out strings.Builder
	for name, data := range want {
		switch g, ok := got[name]; {
		case !ok:
			out.WriteString("missing " + name + "\n")
		case !bytes.Equal(g, data):
			out.WriteString("differs " + name + ":\n" + string(g) + "\n")
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			out.WriteString("extra " + name + "\n")
		}
	}
	return out.String()
}
