package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/tools"
)

// progress is a $/progress notification.
type progress struct {
	Token string `json:"token"`
	Value struct {
		Kind        string `json:"kind"`
		Title       string `json:"title"`
		Cancellable *bool  `json:"cancellable"`
		Message     string `json:"message"`
	} `json:"value"`
}

// progressOf returns the $/progress notifications of token, in order.
func progressOf(t *testing.T, c *lsptest.Client, token string) []progress {
	t.Helper()
	var out []progress
	for _, m := range c.Received("$/progress") {
		var p progress
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Token == token {
			out = append(out, p)
		}
	}
	return out
}

// createdTokens returns the tokens of the window/workDoneProgress/create requests.
func createdTokens(t *testing.T, c *lsptest.Client) []string {
	t.Helper()
	var out []string
	for _, m := range c.Received("window/workDoneProgress/create") {
		var p struct{ Token string }
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Token)
	}
	return out
}

// logged returns the messages of window/logMessage notifications of type Log.
func logged(t *testing.T, c *lsptest.Client) []string {
	t.Helper()
	var out []string
	for _, m := range c.Received("window/logMessage") {
		var p struct {
			Type    int
			Message string
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Type == 4 {
			out = append(out, p.Message)
		}
	}
	return out
}

var yolo = map[string]any{"approvalMode": "yolo"}

// TestProgress: a running shell command's output reaches a client with
// window.workDoneProgress as $/progress begin, reports of its latest line, and end, on
// a token created first; nothing of it goes to the log.
func TestProgress(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.txt": "x\n"})
	c := session(t, root, capsEditor, yolo)
	c.Handle("window/workDoneProgress/create", answer(nil))
	long := strings.Repeat("y", 1000)
	command := fmt.Sprintf(`for i in 1 2 3 4 5; do echo tick-$i; sleep 0.15; done; printf '\033[31mcolour\033[0m\n'; sleep 0.3; echo %s; sleep 0.3`, long)
	res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": command})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("run_shell_command: %+v", res)
	}
	tokens := createdTokens(t, c)
	if len(tokens) != 1 {
		t.Fatalf("%d progress tokens created, want 1", len(tokens))
	}
	created, used := -1, -1
	for i, m := range c.Received("") {
		switch {
		case m.Method == "window/workDoneProgress/create" && created < 0:
			created = i
		case m.Method == "$/progress" && used < 0:
			used = i
		}
	}
	if created < 0 || used < created {
		t.Errorf("the token is used (message %d) before it is created (message %d)", used, created)
	}
	ps := progressOf(t, c, tokens[0])
	if len(ps) < 3 {
		t.Fatalf("progress %+v, want begin, reports and end", ps)
	}
	first, last := ps[0].Value, ps[len(ps)-1].Value
	if first.Kind != "begin" || first.Cancellable == nil || !*first.Cancellable || !strings.Contains(first.Title, "tick") {
		t.Errorf("begin = %+v, want a cancellable begin titled with the command", first)
	}
	if last.Kind != "end" {
		t.Errorf("the last progress is %+v, want end", last)
	}
	var reports []string
	for _, p := range ps[1 : len(ps)-1] {
		if p.Value.Kind != "report" {
			t.Errorf("between begin and end: %+v", p.Value)
		}
		m := p.Value.Message
		reports = append(reports, m)
		if strings.ContainsAny(m, "\n\r\x1b") || len(m) > 200 {
			t.Errorf("a report message %q is not one clean, short line", m)
		}
	}
	joined := strings.Join(reports, "|")
	if !strings.Contains(joined, "tick-") {
		t.Errorf("reports %q carry no output line", reports)
	}
	if !strings.Contains(joined, "yyyy") || !strings.Contains(joined, "colour") {
		t.Errorf("reports %q lack the later lines (cleaned of escapes, shortened)", reports)
	}
	if got := logged(t, c); len(got) != 0 {
		t.Errorf("output went to the log as well: %q", got)
	}
	// A tool without live output gets no progress.
	runTool(ctx, t, c, "read_file", map[string]any{"file_path": "a.txt"})
	if n := len(createdTokens(t, c)); n != 1 {
		t.Errorf("%d progress tokens after read_file, want still 1", n)
	}
}

// TestProgressThrottled: a command printing hundreds of lines gets nowhere near one
// report per line.
func TestProgressThrottled(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsEditor, yolo)
	c.Handle("window/workDoneProgress/create", answer(nil))
	// 400 lines over about a second: at ten reports a second, a dozen reports.
	res := runTool(ctx, t, c, "run_shell_command", map[string]any{
		"command": "for i in $(seq 1 40); do for j in $(seq 1 10); do echo burst-$i-$j; done; sleep 0.025; done"})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("run_shell_command: %+v", res)
	}
	tokens := createdTokens(t, c)
	if len(tokens) != 1 {
		t.Fatalf("%d tokens", len(tokens))
	}
	reports := 0
	for _, p := range progressOf(t, c, tokens[0]) {
		if p.Value.Kind == "report" {
			reports++
		}
	}
	// Generous, for a loaded machine: the command would have to take ten seconds.
	if reports == 0 || reports >= 100 {
		t.Errorf("%d reports for 400 lines, want a few (at most ten a second)", reports)
	}
}

// TestProgressCancel: window/workDoneProgress/cancel cancels the call whose progress it
// names, and the progress ends.
func TestProgressCancel(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsEditor, yolo)
	c.Handle("window/workDoneProgress/create", answer(nil))
	sleep := uniqueSleep()
	p := c.Go("workspace/executeCommand", map[string]any{"command": "agentls.runTool",
		"arguments": []any{map[string]any{"name": "run_shell_command", "args": map[string]any{"command": "echo started; " + sleep}}}})
	begin, err := c.WaitFor(ctx, "$/progress", func(m lsptest.Message) bool { return strings.Contains(string(m.Params), `"begin"`) })
	if err != nil {
		t.Fatal(err)
	}
	waitProcess(ctx, t, sleep, true)
	var bp progress
	json.Unmarshal(begin.Params, &bp)
	// An unknown token is ignored.
	if err := c.Notify("window/workDoneProgress/cancel", map[string]any{"token": "no-such-token"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify("window/workDoneProgress/cancel", map[string]any{"token": bp.Token}); err != nil {
		t.Fatal(err)
	}
	var res tools.CallResult
	if err := p.Wait(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != tools.StatusCancelled {
		t.Errorf("result %+v, want cancelled", res)
	}
	waitProcess(ctx, t, sleep, false)
	if ps := progressOf(t, c, bp.Token); ps[len(ps)-1].Value.Kind != "end" {
		t.Errorf("progress %+v, want it ended", ps)
	}
}

// TestOutputToLog: without window.workDoneProgress, or when the editor refuses the
// token, output goes to window/logMessage (type Log) in bounded batches.
func TestOutputToLog(t *testing.T) {
	t.Parallel()
	noProgress := withCaps(capsEditor, "window", map[string]any{"showMessage": map[string]any{}})
	for _, tt := range []struct {
		name    string
		caps    map[string]any
		refuse  bool
		creates int
	}{
		{name: "no workDoneProgress", caps: noProgress},
		{name: "token refused", caps: capsEditor, refuse: true, creates: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, nil)
			c := session(t, root, tt.caps, yolo)
			if tt.refuse {
				c.Handle("window/workDoneProgress/create", func(context.Context, json.RawMessage) (any, error) {
					return nil, &lsptest.ResponseError{Code: lsptest.CodeInternalError, Message: "no progress here"}
				})
			}
			res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo log-line-1; sleep 0.2; echo log-line-2"})
			if res.Status != tools.StatusSuccess {
				t.Fatalf("run_shell_command: %+v", res)
			}
			if n := len(createdTokens(t, c)); n != tt.creates {
				t.Errorf("%d progress tokens created, want %d", n, tt.creates)
			}
			if n := len(c.Received("$/progress")); n != 0 {
				t.Errorf("%d $/progress notifications, want none", n)
			}
			all := strings.Join(logged(t, c), "\n")
			if !contains(all, "log-line-1", "log-line-2", res.CallID) {
				t.Errorf("logged %q, want both lines, naming the call", all)
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		ctx := testContext(t)
		root := workspaceDir(t, nil)
		c := session(t, root, noProgress, yolo)
		// About 1.5 MB at once.
		res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "seq 1 200000"})
		if res.Status != tools.StatusSuccess {
			t.Fatalf("run_shell_command: %+v", res)
		}
		msgs := logged(t, c)
		total := 0
		for _, m := range msgs {
			total += len(m)
			if len(m) > 20<<10 {
				t.Errorf("a log message of %d bytes", len(m))
			}
		}
		if !strings.Contains(strings.Join(msgs, "\n"), "not shown") {
			t.Errorf("the log does not say that output was left out")
		}
		if total > 1<<20 {
			t.Errorf("%d bytes logged for 1.5 MB of output, want it bounded", total)
		}
	})
}
