package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/fakeopenai"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
)

// promptScript reads hello.txt and runs a shell command, then answers.
func promptScript() clients.Script {
	return clients.Script{Turns: []clients.Turn{
		{Text: "Reading.", Calls: []clients.ScriptCall{
			{Name: "read_file", Args: json.RawMessage(`{"file_path": "hello.txt"}`)},
			{Name: "run_shell_command", Args: json.RawMessage(`{"command": "echo from-the-shell > shell-ran"}`)},
		}},
		{Text: "hello.txt says hello.", Usage: &clients.Usage{PromptTokens: 100, OutputTokens: 5}},
	}}
}

// agentlsPrompt runs `agentls prompt` in root against a fake Gemini server.
func agentlsPrompt(t *testing.T, root, cfg string, srv *fakegemini.Server, args ...string) outcome {
	t.Helper()
	env := []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + srv.URL, "XDG_STATE_HOME=" + filepath.Join(cfg, "state")}
	return agentlsWith(t, root, cfg, env, append([]string{"prompt"}, args...)...)
}

func TestPromptJSON(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	for _, tt := range []struct {
		mode      string
		shellRuns bool
	}{
		{"default", false}, // no terminal to ask on: refused, and the turn goes on
		{"yolo", true},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			os.Remove(filepath.Join(root, "shell-ran"))
			srv := fakegemini.Start(promptScript())
			defer srv.Close()
			got := agentlsPrompt(t, root, cfg, srv, "--output", "json", "--approval-mode", tt.mode, "What does hello.txt say?")
			var res struct {
				Session     string
				StopReason  session.StopReason
				Response    string
				Usage       clients.Usage
				ToolCalls   []tools.CallResult
				ToolMetrics []tools.ToolStats
			}
			if err := json.Unmarshal([]byte(got.stdout), &res); err != nil {
				t.Fatalf("stdout is not the JSON result: %v\n%s\nstderr: %s", err, got.stdout, got.stderr)
			}
			if got.code != 0 || res.StopReason != session.StopEndTurn || res.Response != "hello.txt says hello." || res.Session == "" {
				t.Errorf("exit %d, result %+v\nstderr: %s", got.code, res, got.stderr)
			}
			// The calls run in parallel: they are listed as they end.
			calls := map[string]tools.CallResult{}
			for _, c := range res.ToolCalls {
				calls[c.Name] = c
			}
			read, shell := calls["read_file"], calls["run_shell_command"]
			if len(res.ToolCalls) != 2 || read.Status != tools.StatusSuccess || !strings.Contains(read.Output, "hello") {
				t.Fatalf("tool calls %+v", res.ToolCalls)
			}
			_, err := os.Stat(filepath.Join(root, "shell-ran"))
			if ran := err == nil; ran != tt.shellRuns || (shell.Status == tools.StatusSuccess) != tt.shellRuns {
				t.Errorf("mode %s: shell ran %v, status %s", tt.mode, ran, shell.Status)
			}
			// The session's tool metrics count both calls; a refused shell call is an error.
			shellErrors := 1
			if tt.shellRuns {
				shellErrors = 0
			}
			if m := res.ToolMetrics; len(m) != 2 || m[0].Name != "read_file" || m[0].Calls != 1 || m[0].Errors != 0 ||
				m[1].Name != "run_shell_command" || m[1].Calls != 1 || m[1].Errors != shellErrors {
				t.Errorf("mode %s: toolMetrics %+v", tt.mode, m)
			}
			// The model got both function responses, in order, with the calls' ids.
			reqs, err := srv.GenerateRequests()
			if err != nil || len(reqs) != 2 {
				t.Fatalf("%d generate requests (%v)", len(reqs), err)
			}
			last := reqs[1].Contents[len(reqs[1].Contents)-1]
			if len(last.Parts) != 2 || last.Parts[0].FunctionResponse == nil || last.Parts[0].FunctionResponse.Name != "read_file" ||
				last.Parts[1].FunctionResponse == nil || last.Parts[1].FunctionResponse.Name != "run_shell_command" {
				t.Errorf("last content sent: %+v", last)
			}
		})
	}
	// agentls stats counts the calls of both prompts' sessions, from the store.
	state := []string{"XDG_STATE_HOME=" + filepath.Join(cfg, "state")}
	got := agentlsWith(t, root, cfg, state, "stats", "--json")
	var st struct {
		Sessions int
		Tools    []tools.ToolStats
	}
	if err := json.Unmarshal([]byte(got.stdout), &st); err != nil || got.code != 0 {
		t.Fatalf("stats --json: exit %d, %v\n%s%s", got.code, err, got.stdout, got.stderr)
	}
	if st.Sessions != 2 || len(st.Tools) != 2 || st.Tools[0].Name != "read_file" || st.Tools[0].Calls != 2 ||
		st.Tools[1].Name != "run_shell_command" || st.Tools[1].Calls != 2 || st.Tools[1].Errors != 1 {
		t.Errorf("stats --json: %+v", st)
	}
	if got := agentlsWith(t, root, cfg, state, "stats"); got.code != 0 || !strings.Contains(got.stdout, "tool calls of 2 sessions") ||
		!strings.Contains(got.stdout, "run_shell_command") {
		t.Errorf("stats: %+v", got)
	}
	if got := agentlsWith(t, root, cfg, state, "stats", "extra"); got.code != exitBadUsage {
		t.Errorf("stats with an argument: %+v", got)
	}
	if got := agentlsWith(t, root, cfg, state, "stats", "--session", "no-such-session"); got.code != exitFailure || !strings.Contains(got.stderr, "no-such-session") {
		t.Errorf("stats of an unknown session: %+v", got)
	}
}

func TestPromptStreamJSONAndResume(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	srv := fakegemini.Start(promptScript())
	defer srv.Close()
	got := agentlsPrompt(t, root, cfg, srv, "--output", "stream-json", "--approval-mode", "yolo", "What does hello.txt say?")
	if got.code != 0 {
		t.Fatalf("exit %d\n%s", got.code, got.stderr)
	}
	var types []string
	var id string
	sc := bufio.NewScanner(strings.NewReader(got.stdout))
	for sc.Scan() {
		var ev struct{ Type, Session string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if len(types) == 0 || types[len(types)-1] != ev.Type {
			types = append(types, ev.Type)
		}
		if ev.Type == "init" {
			id = ev.Session
		}
	}
	want := "init message tool_call tool_result tool_call tool_output tool_result message result"
	if strings.Join(types, " ") != want {
		// The two calls run in parallel: their events may interleave.
		if types[0] != "init" || types[len(types)-1] != "result" || !strings.Contains(got.stdout, `"type":"tool_result"`) {
			t.Errorf("event types %q, want like %q", types, want)
		}
	}

	// A second prompt in the same session carries the first one's history.
	srv2 := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Text: "It said hello."}}})
	defer srv2.Close()
	got = agentlsPrompt(t, root, cfg, srv2, "--session", id, "--output", "text", "And again?")
	if got.code != 0 || got.stdout != "It said hello.\n" {
		t.Fatalf("resume: exit %d, stdout %q\nstderr: %s", got.code, got.stdout, got.stderr)
	}
	reqs, err := srv2.GenerateRequests()
	if err != nil || len(reqs) != 1 {
		t.Fatalf("%d requests (%v)", len(reqs), err)
	}
	body, _ := json.Marshal(reqs[0].Contents)
	if !strings.Contains(string(body), "What does hello.txt say?") || !strings.Contains(string(body), "And again?") {
		t.Errorf("the resumed session did not send its history: %s", body)
	}

	got = agentlsPrompt(t, root, cfg, srv2, "--session", "20200101-000000.000-deadbeef", "hi")
	if got.code == 0 || !strings.Contains(got.stderr, "20200101-000000.000-deadbeef") {
		t.Errorf("unknown session: exit %d, stderr %q", got.code, got.stderr)
	}
}

func TestPromptErrors(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	env := []string{"GEMINI_API_KEY=", "GOOGLE_API_KEY=", "GOOGLE_GENAI_USE_VERTEXAI="}
	got := agentlsWith(t, root, cfg, env, "prompt", "hi")
	if got.code != 1 || !strings.Contains(got.stderr, "GEMINI_API_KEY") {
		t.Errorf("no key: exit %d, stderr %q", got.code, got.stderr)
	}
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{{HTTPError: &clients.ScriptHTTPError{Status: 400, Message: "the model does not like you"}}}})
	defer srv.Close()
	got = agentlsPrompt(t, root, cfg, srv, "hi")
	if got.code != 1 || !strings.Contains(got.stderr, "the model does not like you") || strings.Contains(got.stderr, "test-key") {
		t.Errorf("400: exit %d, stderr %q", got.code, got.stderr)
	}
	for _, args := range [][]string{{"prompt"}, {"prompt", "a", "b"}, {"prompt", "--output", "xml", "hi"}, {"prompt", "--approval-mode", "always", "hi"}} {
		if got := agentlsWith(t, root, cfg, nil, args...); got.code != exitBadUsage {
			t.Errorf("%q: exit %d, want %d", args, got.code, exitBadUsage)
		}
	}
}

// TestPromptOpenAI: settings naming an OpenAI-compatible provider drive the same loop
// through openai-go, with the tools as functions and the results as tool messages.
func TestPromptOpenAI(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	srv := fakeopenai.Start(promptScript())
	defer srv.Close()
	settings := `{"provider": {"type": "openai", "baseUrl": "` + srv.URL + `/v1"}, "model": "local-model"}`
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	got := agentlsWith(t, root, cfg, []string{"OPENAI_API_KEY=", "XDG_STATE_HOME=" + filepath.Join(cfg, "state")},
		"prompt", "--approval-mode", "yolo", "What does hello.txt say?")
	if got.code != 0 || got.stdout != "Reading.\nhello.txt says hello.\n" {
		t.Fatalf("exit %d, stdout %q\nstderr: %s", got.code, got.stdout, got.stderr)
	}
	reqs, err := srv.ChatRequests()
	if err != nil || len(reqs) != 2 {
		t.Fatalf("%d requests (%v)", len(reqs), err)
	}
	if reqs[0].Model != "local-model" || len(reqs[0].Tools) == 0 {
		t.Errorf("first request: model %q, %d tools", reqs[0].Model, len(reqs[0].Tools))
	}
	var toolMessages int
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			toolMessages++
		}
	}
	if toolMessages != 2 {
		t.Errorf("second request has %d tool messages, want 2: %+v", toolMessages, reqs[1].Messages)
	}
}

// TestPromptNobodyToAsk: agentls prompt without a terminal, in yolo mode: ask_user and
// enter_plan_mode are refused with a message the model reads (nobody can be asked,
// whatever the mode), the mode stays, and think's text streams as a thought.
func TestPromptNobodyToAsk(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{
			{ID: "a1", Name: "ask_user", Args: json.RawMessage(`{"questions":[{"question":"Name?","header":"N","type":"text"}]}`)},
			{ID: "p1", Name: "enter_plan_mode", Args: json.RawMessage(`{}`)},
			{ID: "t1", Name: "think", Args: json.RawMessage(`{"thought":"nobody here to ask"}`)},
		}},
		{Text: "I will assume."},
	}})
	defer srv.Close()
	got := agentlsPrompt(t, root, cfg, srv, "--output", "stream-json", "--approval-mode", "yolo", "go")
	if got.code != 0 {
		t.Fatalf("exit %d\n%s", got.code, got.stderr)
	}
	results := map[string]string{}
	var thoughts, modes []string
	sc := bufio.NewScanner(strings.NewReader(got.stdout))
	for sc.Scan() {
		var ev struct {
			Type, Name, Text, Mode string
			Result                 *tools.CallResult
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch ev.Type {
		case "tool_result":
			results[ev.Name] = string(ev.Result.Status) + ": " + ev.Result.Output
		case "thought":
			thoughts = append(thoughts, ev.Text)
		case "mode":
			modes = append(modes, ev.Mode)
		}
	}
	for _, name := range []string{"ask_user", "enter_plan_mode"} {
		if r := results[name]; !strings.HasPrefix(r, "error: ") || !strings.Contains(r, "nobody can be asked") {
			t.Errorf("%s: %q, want refused because nobody can be asked", name, r)
		}
	}
	if strings.Join(thoughts, "") != "nobody here to ask" || len(modes) != 0 {
		t.Errorf("thoughts %q, mode events %q", thoughts, modes)
	}
}

// TestPromptRuleCannotSwitchMode: agentls prompt without a terminal, in plan mode,
// with the user's rule allowing every tool: exit_plan_mode is still refused (only the
// person's answer switches modes, and nobody can be asked), so the write the model
// tries next is refused by plan mode and its marker file never appears.
func TestPromptRuleCannotSwitchMode(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"),
		[]byte(`{"policy": {"rules": [{"toolName": "*", "decision": "allow"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(root, "marker.txt")
	writeArgs, _ := json.Marshal(map[string]string{"file_path": marker, "content": "ran"})
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{{ID: "x1", Name: "exit_plan_mode", Args: json.RawMessage(`{}`)}}},
		{Calls: []clients.ScriptCall{{ID: "w1", Name: "write_file", Args: writeArgs}}},
		{Text: "done"},
	}})
	defer srv.Close()
	got := agentlsPrompt(t, root, cfg, srv, "--output", "stream-json", "--approval-mode", "plan", "go")
	if got.code != 0 {
		t.Fatalf("exit %d\n%s", got.code, got.stderr)
	}
	if strings.Contains(got.stdout, `"type":"mode"`) {
		t.Errorf("the mode switched:\n%s", got.stdout)
	}
	if !strings.Contains(got.stdout, "only the user's answer") {
		t.Errorf("exit_plan_mode was not refused as the user's to answer:\n%s", got.stdout)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the write after the refused switch ran (stat: %v)", err)
	}
}
