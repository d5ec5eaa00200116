package acp_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// The benchmarks drive the real agentls binary over pipes, as an editor does; the
// binary is built without the race detector for them (see buildBinary).
//
//	go test -run='^$' -bench=. -benchtime=200x ./rpc/acp

// BenchmarkStartToInitialize measures from starting `agentls acp` to the initialize
// response (Gemini CLI's --acp takes about 1.6 s here), with a model key in the
// environment as an editor starts it.
func BenchmarkStartToInitialize(b *testing.B) {
	ctx := context.Background()
	e := env(b.TempDir(), b.TempDir(), "GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9")
	bin := buildBinary(b)
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		p := startProcess(b, bin, e, nil)
		if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(t0))
		b.StopTimer()
		p.stop(b)
		b.StartTimer()
	}
	b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
}

// BenchmarkTurn measures one scripted turn end to end in a running agent: a prompt
// whose model turn reads a file, then answers.
func BenchmarkTurn(b *testing.B) {
	ctx := context.Background()
	root := b.TempDir()
	turns := make([]clients.Turn, 0, 2*b.N)
	for range b.N {
		turns = append(turns, clients.Turn{Calls: []clients.ScriptCall{call("r", "read_file", map[string]any{"file_path": "go.txt"})}},
			clients.Turn{Text: "read it"})
	}
	writeFile(b, root, "go.txt", "a line\n")
	_, model := fakeModel(b, turns...)
	p := startProcess(b, buildBinary(b), env(b.TempDir(), b.TempDir(), model...), nil)
	defer p.stop(b)
	if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		b.Fatal(err)
	}
	sess, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		b.Fatal(err)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		res, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("read go.txt")}})
		if err != nil || res.StopReason != sdk.StopReasonEndTurn {
			b.Fatalf("%+v %v", res, err)
		}
		samples = append(samples, time.Since(t0))
	}
	b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
	if kb, ok := peakRSS(p.cmd.Process.Pid); ok {
		b.ReportMetric(float64(kb)/1024, "MB-peak-RSS")
	}
}

// peakRSS returns the peak resident set size of process pid in kB (VmHWM), where
// /proc has it.
func peakRSS(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb, err == nil
		}
	}
	return 0, false
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkCancel measures from session/cancel to the cancelled prompt's answer, with a
// shell command running (the target is 0.5 s, process group killed included).
func BenchmarkCancel(b *testing.B) {
	ctx := context.Background()
	root := b.TempDir()
	turns := make([]clients.Turn, 0, b.N)
	sleeps := make([]string, b.N)
	for i := range b.N {
		sleeps[i] = uniqueSleep()
		turns = append(turns, clients.Turn{Calls: []clients.ScriptCall{call("s", "run_shell_command", map[string]any{"command": sleeps[i]})}})
	}
	_, model := fakeModel(b, turns...)
	p := startProcess(b, buildBinary(b), env(b.TempDir(), b.TempDir(), model...), nil)
	defer p.stop(b)
	if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		b.Fatal(err)
	}
	sess, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "yolo"}); err != nil {
		b.Fatal(err)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		done := make(chan sdk.PromptResponse, 1)
		go func() {
			res, _ := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("sleep")}})
			done <- res
		}()
		for !processRunning(sleeps[i]) {
			time.Sleep(time.Millisecond)
		}
		b.StartTimer()
		t0 := time.Now()
		if err := p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sess.SessionId}); err != nil {
			b.Fatal(err)
		}
		if res := <-done; res.StopReason != sdk.StopReasonCancelled {
			b.Fatalf("stopReason %q", res.StopReason)
		}
		samples = append(samples, time.Since(t0))
		b.StopTimer()
		for processRunning(sleeps[i]) {
			time.Sleep(time.Millisecond)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(slices.Max(samples).Microseconds())/1000, "ms-max")
}

// BenchmarkSessionList measures session/list's first page over 1,000 stored sessions
// (target 50 ms), in a running agent: all of them, and those of one cwd out of two.
func BenchmarkSessionList(b *testing.B) {
	ctx := context.Background()
	rootA, rootB := b.TempDir(), b.TempDir()
	cfg, state := b.TempDir(), b.TempDir()
	storeSessions(b, state, rootA, 0, 500)
	storeSessions(b, state, rootB, 500, 500)
	p := startProcess(b, buildBinary(b), env(cfg, state, "GEMINI_API_KEY=test-key"), nil)
	defer p.stop(b)
	if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cwd  *string
	}{{"all", nil}, {"cwd", &rootB}} {
		b.Run(tc.name, func(b *testing.B) {
			samples := make([]time.Duration, 0, b.N)
			for range b.N {
				t0 := time.Now()
				res, err := p.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: tc.cwd})
				if err != nil || len(res.Sessions) != 50 || res.NextCursor == nil {
					b.Fatalf("session/list: %d sessions, %v", len(res.Sessions), err)
				}
				samples = append(samples, time.Since(t0))
			}
			b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(slices.Max(samples).Microseconds())/1000, "ms-max")
		})
	}
}
