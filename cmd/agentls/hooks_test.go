package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
)

// hookPlace is a sandboxPlace with a folder of hook scripts (outside the workspace and
// the configuration folders, which contained commands cannot read).
type hookPlace struct {
	sandboxPlace
	scripts string
}

func newHookPlace(t *testing.T) hookPlace {
	t.Helper()
	p := hookPlace{sandboxPlace: newSandboxPlace(t)}
	p.scripts = filepath.Join(filepath.Dir(p.ws), "scripts")
	if err := os.MkdirAll(p.scripts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.ws, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.ws, "other.txt"), []byte("the other file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// script writes a hook script and returns the command that runs it.
func (p hookPlace) script(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(p.scripts, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// hook is one hook group of the settings: a matcher and its commands.
type hook struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookCommand `json:"hooks"`
}

type hookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Name    string `json:"name,omitempty"`
	Timeout int    `json:"timeout,omitempty"`
}

func command(name, cmd string) hookCommand {
	return hookCommand{Type: "command", Command: cmd, Name: name}
}

// settings writes the hooks into the settings file at path.
func writeHooks(t *testing.T, path string, hooks map[string][]hook) {
	t.Helper()
	data, err := json.Marshal(map[string]any{"hooks": hooks})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// userSettings is the user's agentls settings file.
func (p hookPlace) userSettings() string { return filepath.Join(p.home, "agentls", "settings.json") }

// promptResult is agentls prompt --output json's result.
type promptResult struct {
	StopReason session.StopReason
	Response   string
	ToolCalls  []tools.CallResult
}

// prompt runs agentls prompt in yolo mode against srv and decodes its JSON result.
func (p hookPlace) prompt(t *testing.T, srv *fakegemini.Server, env []string, text string) (promptResult, outcome) {
	t.Helper()
	env = append([]string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + srv.URL, "XDG_STATE_HOME=" + filepath.Join(p.home, "state")}, env...)
	o := p.run(t, env, "prompt", "--output", "json", "--approval-mode", "yolo", text)
	var res promptResult
	if err := json.Unmarshal([]byte(o.stdout), &res); err != nil {
		t.Fatalf("stdout is not the JSON result: %v\n%s\nstderr: %s", err, o.stdout, o.stderr)
	}
	return res, o
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// callsByName returns the calls of res by tool name (one call of each).
func callsByName(res promptResult) map[string]tools.CallResult {
	m := map[string]tools.CallResult{}
	for _, c := range res.ToolCalls {
		m[c.Name] = c
	}
	return m
}

// responses returns the function responses of the last content of req, by name.
func responses(t *testing.T, req fakegemini.GenerateRequest) map[string]string {
	t.Helper()
	m := map[string]string{}
	last := req.Contents[len(req.Contents)-1]
	for _, part := range last.Parts {
		if r := part.FunctionResponse; r != nil {
			m[r.Name] = string(r.Response)
		}
	}
	return m
}

// TestHooksBeforeAfterTool: BeforeTool hooks deny a call, rewrite another's arguments
// and add context; AfterTool hooks add context; what they decided is on the calls'
// results (the tool cards) and the model is told.
func TestHooksBeforeAfterTool(t *testing.T) {
	p := newHookPlace(t)
	requireContained(t, p.sandboxPlace)
	guard := p.script(t, "guard.sh", `input=$(cat)
case "$input" in
*forbidden*) echo '{"decision":"deny","reason":"forbidden commands are not run here","systemMessage":"guard said no"}' ;;
*) echo '{"decision":"allow"}' ;;
esac`)
	reroute := p.script(t, "reroute.sh", `cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"file_path":"other.txt"},"additionalContext":"before-context"}}'`)
	after := p.script(t, "after.sh", `cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"after-context"}}'`)
	writeHooks(t, p.userSettings(), map[string][]hook{
		"BeforeTool": {
			{Matcher: "run_shell_command", Hooks: []hookCommand{command("guard", guard)}},
			{Matcher: "read_.*", Hooks: []hookCommand{command("reroute", reroute)}},
		},
		"AfterTool": {{Matcher: "read_file", Hooks: []hookCommand{command("after", after)}}},
	})
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{
			{Name: "run_shell_command", Args: json.RawMessage(`{"command": "echo forbidden > forbidden.txt"}`)},
			{Name: "run_shell_command", Args: json.RawMessage(`{"command": "echo fine > fine.txt"}`)},
			{Name: "read_file", Args: json.RawMessage(`{"file_path": "hello.txt"}`)},
		}},
		{Text: "done"},
	}})
	defer srv.Close()
	res, o := p.prompt(t, srv, nil, "go")
	if res.StopReason != session.StopEndTurn || len(res.ToolCalls) != 3 {
		t.Fatalf("result %+v\nstderr: %s", res, o.stderr)
	}
	if exists(filepath.Join(p.ws, "forbidden.txt")) || !exists(filepath.Join(p.ws, "fine.txt")) {
		t.Errorf("forbidden.txt written %t, fine.txt written %t", exists(filepath.Join(p.ws, "forbidden.txt")), exists(filepath.Join(p.ws, "fine.txt")))
	}
	var denied, allowed tools.CallResult
	for _, c := range res.ToolCalls {
		if c.Name == "run_shell_command" && c.Status == tools.StatusError {
			denied = c
		} else if c.Name == "run_shell_command" {
			allowed = c
		}
	}
	if denied.Error == nil || !strings.Contains(denied.Error.Message, "forbidden commands are not run here") ||
		!strings.Contains(strings.Join(denied.Hooks, "\n"), "hook guard (BeforeTool): denied: forbidden commands are not run here") ||
		!strings.Contains(strings.Join(denied.Hooks, "\n"), "guard said no") {
		t.Errorf("denied call %+v", denied)
	}
	if allowed.Status != tools.StatusSuccess || !strings.Contains(strings.Join(allowed.Hooks, "\n"), "hook guard (BeforeTool): allowed") {
		t.Errorf("allowed call %+v", allowed)
	}
	read := callsByName(res)["read_file"]
	hooks := strings.Join(read.Hooks, "\n")
	if read.Status != tools.StatusSuccess || !strings.Contains(read.Output, "the other file") ||
		!strings.Contains(hooks, "hook reroute (BeforeTool): rewrote the arguments file_path") ||
		!strings.Contains(hooks, "hook after (AfterTool): added context") {
		t.Errorf("read_file %+v", read)
	}
	reqs, err := srv.GenerateRequests()
	if err != nil || len(reqs) != 2 {
		t.Fatalf("%d requests (%v)", len(reqs), err)
	}
	got := responses(t, reqs[1])
	var readResp struct{ Output string }
	if err := json.Unmarshal([]byte(got["read_file"]), &readResp); err != nil {
		t.Fatal(err)
	}
	if r := readResp.Output; !strings.Contains(r, "the other file") || !strings.Contains(r, "<hook_context>before-context</hook_context>") ||
		!strings.Contains(r, "<hook_context>after-context</hook_context>") || !strings.Contains(r, "were modified by a hook") {
		t.Errorf("the model was told of read_file: %s", r)
	}
	if all, _ := json.Marshal(reqs[1].Contents[len(reqs[1].Contents)-1]); !strings.Contains(string(all), "Tool execution blocked by a hook: forbidden commands are not run here") {
		t.Errorf("the model was not told of the denial: %s", all)
	}
}

// TestHooksAfterToolStops: an AfterTool hook with continue: false ends the turn after
// the call: the model is not asked again.
func TestHooksAfterToolStops(t *testing.T) {
	p := newHookPlace(t)
	stop := p.script(t, "stop.sh", `cat >/dev/null; echo '{"continue":false,"stopReason":"enough for today"}'`)
	writeHooks(t, p.userSettings(), map[string][]hook{"AfterTool": {{Hooks: []hookCommand{command("stop", stop)}}}})
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{{Name: "read_file", Args: json.RawMessage(`{"file_path": "hello.txt"}`)}}},
		{Text: "never asked"},
	}})
	defer srv.Close()
	res, o := p.prompt(t, srv, nil, "go")
	reqs, _ := srv.GenerateRequests()
	if res.StopReason != session.StopEndTurn || len(reqs) != 1 || len(res.ToolCalls) != 1 || res.ToolCalls[0].Stop != "enough for today" ||
		res.ToolCalls[0].Status != tools.StatusSuccess {
		t.Errorf("%d requests, result %+v\nstderr: %s", len(reqs), res, o.stderr)
	}
}

// TestHooksThatFail: a hook that hangs past its timeout, one that fails and one that
// answers something that is not JSON each decide nothing: the call runs, in time,
// and its card says what happened to each.
func TestHooksThatFail(t *testing.T) {
	p := newHookPlace(t)
	hang := p.script(t, "hang.sh", `sleep 30; echo '{"decision":"deny"}'`)
	fail := p.script(t, "fail.sh", `echo '{"decision":"deny"}'; echo 'cannot reach the policy server' >&2; exit 1`)
	garbled := p.script(t, "garbled.sh", `echo 'I think this call is fine'`)
	writeHooks(t, p.userSettings(), map[string][]hook{"BeforeTool": {{Hooks: []hookCommand{
		{Type: "command", Command: hang, Name: "hang", Timeout: 500}, command("fail", fail), command("garbled", garbled)}}}})
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{{Name: "read_file", Args: json.RawMessage(`{"file_path": "hello.txt"}`)}}},
		{Text: "done"},
	}})
	defer srv.Close()
	start := time.Now()
	res, o := p.prompt(t, srv, nil, "go")
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the prompt took %v: the hanging hook held it", took)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Status != tools.StatusSuccess {
		t.Fatalf("result %+v\nstderr: %s", res, o.stderr)
	}
	hooks := strings.Join(res.ToolCalls[0].Hooks, "\n")
	for _, want := range []string{
		"hook hang (BeforeTool): did not finish within its timeout of 500ms and was stopped; ignored",
		"hook fail (BeforeTool): failed with exit status 1: cannot reach the policy server; ignored",
		`hook garbled (BeforeTool): answered something that is not a JSON object ("I think this call is fine"); ignored`,
	} {
		if !strings.Contains(hooks, want) {
			t.Errorf("the card does not say %q:\n%s", want, hooks)
		}
	}
}

// TestHooksAgentEvents: SessionStart and BeforeAgent add context to the prompt,
// BeforeToolSelection narrows the tools and asks for calls only (mode ANY), AfterModel replaces the answer's text,
// AfterAgent sends the model back once, SessionEnd runs as agentls exits.
func TestHooksAgentEvents(t *testing.T) {
	p := newHookPlace(t)
	ctx := func(event, text string) string {
		return fmt.Sprintf(`cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"%s"}}'`, event, text)
	}
	writeHooks(t, p.userSettings(), map[string][]hook{
		"SessionStart": {{Matcher: "startup", Hooks: []hookCommand{command("start", p.script(t, "start.sh", ctx("SessionStart", "start-context")))}}},
		"BeforeAgent":  {{Hooks: []hookCommand{command("before-agent", p.script(t, "ba.sh", ctx("BeforeAgent", "agent-context")))}}},
		"BeforeToolSelection": {{Hooks: []hookCommand{command("select", p.script(t, "select.sh",
			`cat >/dev/null; echo '{"hookSpecificOutput":{"toolConfig":{"mode":"ANY","allowedFunctionNames":["read_file","glob"]}}}'`))}}},
		"AfterModel": {{Hooks: []hookCommand{command("redact", p.script(t, "redact.sh", `input=$(cat)
case "$input" in
*'secret is'*) echo '{"hookSpecificOutput":{"llm_response":{"candidates":[{"content":{"role":"model","parts":["[redacted]"]}}]}}}' ;;
*) echo '{}' ;;
esac`))}}},
		"AfterAgent": {{Hooks: []hookCommand{command("review", p.script(t, "review.sh", `input=$(cat)
case "$input" in
*'"stop_hook_active":true'*) echo '{}' ;;
*) echo '{"decision":"deny","reason":"check your answer again"}' ;;
esac`))}}},
		"SessionEnd": {{Hooks: []hookCommand{command("end", p.script(t, "end.sh", `cat > session-end.json`))}}},
	})
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Text: "the secret is 42"},
		{Text: "checked: fine"},
	}})
	defer srv.Close()
	res, o := p.prompt(t, srv, nil, "what is the secret?")
	if res.StopReason != session.StopEndTurn || res.Response != "checked: fine" {
		t.Fatalf("result %+v\nstderr: %s", res, o.stderr)
	}
	reqs, err := srv.GenerateRequests()
	if err != nil || len(reqs) != 2 {
		t.Fatalf("%d requests (%v)", len(reqs), err)
	}
	var first []string
	for _, part := range reqs[0].Contents[0].Parts {
		first = append(first, part.Text)
	}
	if len(first) != 3 || first[0] != "<hook_context>start-context</hook_context>" || first[1] != "what is the secret?" ||
		first[2] != "<hook_context>agent-context</hook_context>" {
		t.Errorf("first prompt sent as %q", first)
	}
	var names []string
	for _, tool := range reqs[0].Tools {
		for _, d := range tool.FunctionDeclarations {
			names = append(names, d.Name)
		}
	}
	if strings.Join(names, ",") != "read_file,glob" && strings.Join(names, ",") != "glob,read_file" {
		t.Errorf("tools offered: %v", names)
	}
	// Mode ANY: the model is asked for calls only.
	if got := string(reqs[0].ToolConfig); !strings.Contains(got, `"mode":"ANY"`) {
		t.Errorf("toolConfig sent %s, want function calling mode ANY", got)
	}
	// The model's redacted answer, then the hook's reason as the next prompt.
	hist := reqs[1].Contents
	if len(hist) != 3 || hist[1].Parts[0].Text != "[redacted]" || hist[2].Parts[0].Text != "check your answer again" {
		t.Errorf("second request's history: %+v", hist)
	}
	if strings.Contains(o.stdout+o.stderr, "secret is") {
		t.Errorf("the redacted text reached the person:\n%s%s", o.stdout, o.stderr)
	}
	data, err := os.ReadFile(filepath.Join(p.ws, "session-end.json"))
	var end struct {
		Event  string `json:"hook_event_name"`
		Reason string `json:"reason"`
	}
	if err != nil || json.Unmarshal(data, &end) != nil || end.Event != "SessionEnd" || end.Reason != "exit" {
		t.Errorf("SessionEnd hook: %v %s", err, data)
	}
}

// TestHooksBlockPromptAndModel: a BeforeAgent hook that blocks drops the prompt with no
// model request; a BeforeModel hook answers in the model's place.
func TestHooksBlockPromptAndModel(t *testing.T) {
	for _, tt := range []struct {
		event, body string
		stop        session.StopReason
		response    string
	}{
		{"BeforeAgent", `echo 'prompts about passwords are not sent' >&2; exit 2`, session.StopRefusal, ""},
		{"BeforeModel", `cat >/dev/null; echo '{"hookSpecificOutput":{"llm_response":{"candidates":[{"content":{"role":"model","parts":["answered from cache"]}}]}}}'`,
			session.StopEndTurn, "answered from cache"},
	} {
		t.Run(tt.event, func(t *testing.T) {
			p := newHookPlace(t)
			writeHooks(t, p.userSettings(), map[string][]hook{tt.event: {{Hooks: []hookCommand{command("h", p.script(t, "h.sh", tt.body))}}}})
			srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Text: "from the model"}}})
			defer srv.Close()
			res, o := p.prompt(t, srv, nil, "my password is hunter2")
			reqs, _ := srv.GenerateRequests()
			if res.StopReason != tt.stop || res.Response != tt.response || len(reqs) != 0 {
				t.Errorf("%d requests, result %+v\nstderr: %s", len(reqs), res, o.stderr)
			}
		})
	}
}

// TestHooksContained: a hook that writes outside the workspace is refused by the
// sandbox; the same hook with the sandbox unavailable writes there, so the payload is
// live.
func TestHooksContained(t *testing.T) {
	p := newHookPlace(t)
	requireContained(t, p.sandboxPlace)
	marker := filepath.Join(p.outside, "marker")
	escape := p.script(t, "escape.sh", "cat >/dev/null; echo pwned > "+marker+"; echo ran > hook-ran; echo '{}'")
	writeHooks(t, p.userSettings(), map[string][]hook{"BeforeTool": {{Hooks: []hookCommand{command("escape", escape)}}}})
	for _, contained := range []bool{true, false} {
		os.Remove(filepath.Join(p.ws, "hook-ran"))
		var env []string
		if !contained {
			env = []string{"AGENTLS_SANDBOX_MACHINE=none"}
		}
		srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
			{Calls: []clients.ScriptCall{{Name: "read_file", Args: json.RawMessage(`{"file_path": "hello.txt"}`)}}},
			{Text: "done"},
		}})
		res, o := p.prompt(t, srv, env, "go")
		srv.Close()
		if !exists(filepath.Join(p.ws, "hook-ran")) {
			t.Fatalf("contained=%t: the hook did not run: %+v\n%s", contained, res, o.stderr)
		}
		if exists(marker) == contained {
			t.Errorf("contained=%t: the marker outside the workspace written %t", contained, exists(marker))
		}
	}
}

// TestHooksUntrustedWorkspace: the hooks of an untrusted workspace's settings do not
// run; trusted, they do. Gemini CLI's user settings' hooks run either way.
func TestHooksUntrustedWorkspace(t *testing.T) {
	p := newHookPlace(t)
	wsHook := p.script(t, "ws.sh", "cat > ws-hook-ran")
	userHook := p.script(t, "user.sh", "cat > user-hook-ran")
	writeHooks(t, filepath.Join(p.ws, ".gemini", "settings.json"), map[string][]hook{"BeforeAgent": {{Hooks: []hookCommand{command("ws", wsHook)}}}})
	writeHooks(t, filepath.Join(p.home, ".gemini", "settings.json"), map[string][]hook{"BeforeAgent": {{Hooks: []hookCommand{command("user", userHook)}}}})
	for _, trusted := range []bool{false, true} {
		os.Remove(filepath.Join(p.ws, "ws-hook-ran"))
		os.Remove(filepath.Join(p.ws, "user-hook-ran"))
		env := []string{"AGENTLS_TRUST_WORKSPACE=0"}
		if trusted {
			env = []string{"AGENTLS_TRUST_WORKSPACE=1"}
		}
		srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Text: "done"}}})
		res, o := p.prompt(t, srv, env, "go")
		srv.Close()
		if res.StopReason != session.StopEndTurn {
			t.Fatalf("trusted=%t: %+v\n%s", trusted, res, o.stderr)
		}
		if ran := exists(filepath.Join(p.ws, "ws-hook-ran")); ran != trusted {
			t.Errorf("trusted=%t: the workspace's hook ran %t", trusted, ran)
		}
		if !exists(filepath.Join(p.ws, "user-hook-ran")) {
			t.Errorf("trusted=%t: the hook of Gemini CLI's user settings did not run", trusted)
		}
	}
}

// TestHooksBeforeModelRequest: a BeforeModel hook's llm_request switches the model of the
// request and sets its sampling (Gemini CLI's stable form: model, config), through the
// real Gemini client; the conversation is sent as it was (session's TestApplyLLMRequest
// has the rest).
func TestHooksBeforeModelRequest(t *testing.T) {
	p := newHookPlace(t)
	writeHooks(t, p.userSettings(), map[string][]hook{"BeforeModel": {{Hooks: []hookCommand{command("h", p.script(t, "h.sh",
		`cat >/dev/null; echo '{"hookSpecificOutput":{"llm_request":{"model":"gemini-2.5-pro","config":{"temperature":0.1,"topK":5,"maxOutputTokens":100,"stopSequences":["END"]}}}}'`))}}}})
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Text: "from the pro model"}}})
	defer srv.Close()
	res, o := p.prompt(t, srv, nil, "hello")
	if res.StopReason != session.StopEndTurn || res.Response != "from the pro model" {
		t.Fatalf("result %+v\nstderr: %s", res, o.stderr)
	}
	var gen []fakegemini.Request
	for _, r := range srv.Requests() {
		if r.Action == "streamGenerateContent" {
			gen = append(gen, r)
		}
	}
	if len(gen) != 1 || gen[0].Model != "gemini-2.5-pro" {
		t.Fatalf("%d generate requests (the first to %q), want one to gemini-2.5-pro", len(gen), gen[0].Model)
	}
	var body struct {
		Contents         []fakegemini.Content `json:"contents"`
		GenerationConfig struct {
			Temperature     float64  `json:"temperature"`
			TopK            float64  `json:"topK"`
			MaxOutputTokens int      `json:"maxOutputTokens"`
			StopSequences   []string `json:"stopSequences"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(gen[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	g := body.GenerationConfig
	if g.Temperature < 0.09 || g.Temperature > 0.11 || g.TopK != 5 || g.MaxOutputTokens != 100 || !slices.Equal(g.StopSequences, []string{"END"}) {
		t.Errorf("generationConfig %+v", g)
	}
	if len(body.Contents) != 1 || body.Contents[0].Parts[0].Text != "hello" {
		t.Errorf("the conversation sent: %+v", body.Contents)
	}
}

// TestExtensionHooksAndPolicies: an extension of ~/.gemini/extensions brings a
// BeforeTool hook (hooks/hooks.json, its script in the extension's folder) that denies
// a shell command, and a policy (policies/*.toml) that denies another, even in yolo
// mode; a third command runs. With the extension disabled in Gemini CLI's enablement
// file, the same calls all run: the hook and the policy were what refused them.
func TestExtensionHooksAndPolicies(t *testing.T) {
	p := newHookPlace(t)
	requireContained(t, p.sandboxPlace)
	ext := filepath.Join(p.home, ".gemini", "extensions", "guard")
	files := map[string]string{
		"gemini-extension.json": `{"name": "guard", "version": "0.1.0"}`,
		"hooks/hooks.json": `{"hooks": {"BeforeTool": [{"matcher": "run_shell_command",
			"hooks": [{"type": "command", "name": "guard-check", "command": "sh ${extensionPath}${/}check.sh"}]}]}}`,
		"check.sh": `input=$(cat)
case "$input" in
*forbidden*) echo '{"decision":"deny","reason":"the guard extension refuses forbidden files"}' ;;
*) echo '{"decision":"allow"}' ;;
esac`,
		"policies/deny.toml": `[[rule]]
toolName = "run_shell_command"
commandPrefix = "touch"
decision = "deny"
priority = 100
denyMessage = "blocked files are not made"

[[rule]]
toolName = "run_shell_command"
decision = "allow"
`,
	}
	for name, content := range files {
		path := filepath.Join(ext, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	calls := []clients.ScriptCall{
		{Name: "run_shell_command", Args: json.RawMessage(`{"command": "echo forbidden > forbidden.txt"}`)},
		{Name: "run_shell_command", Args: json.RawMessage(`{"command": "touch blocked.txt"}`)},
		{Name: "run_shell_command", Args: json.RawMessage(`{"command": "echo fine > fine.txt"}`)},
	}
	run := func() (promptResult, outcome) {
		t.Helper()
		for _, f := range []string{"forbidden.txt", "blocked.txt", "fine.txt"} {
			os.Remove(filepath.Join(p.ws, f))
		}
		srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Calls: calls}, {Text: "done"}}})
		defer srv.Close()
		return p.prompt(t, srv, nil, "go")
	}

	o := p.run(t, nil, "extensions", "list")
	for _, want := range []string{"hooks: " + filepath.Join(ext, "hooks", "hooks.json") + " (BeforeTool)", "policies: " + filepath.Join(ext, "policies", "deny.toml") + " (rules applied: 1,",
		`warning: ` + filepath.Join(ext, "policies", "deny.toml") + `: rule 2 refused: decision "allow": an extension may not allow`} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("extensions list lacks %q:\n%s%s", want, o.stdout, o.stderr)
		}
	}

	res, o := run()
	if len(res.ToolCalls) != 3 {
		t.Fatalf("result %+v\nstderr: %s", res, o.stderr)
	}
	hooked, policed, fine := res.ToolCalls[0], res.ToolCalls[1], res.ToolCalls[2]
	if hooked.Status != tools.StatusError || hooked.Error == nil || !strings.Contains(hooked.Error.Message, "the guard extension refuses forbidden files") ||
		!strings.Contains(strings.Join(hooked.Hooks, "\n"), "hook guard-check (BeforeTool): denied") {
		t.Errorf("the hook's call: %+v", hooked)
	}
	if policed.Status != tools.StatusError || policed.Error == nil || !strings.Contains(policed.Error.Message, "from extension guard (deny.toml)") ||
		!strings.Contains(policed.Error.Message, "blocked files are not made") {
		t.Errorf("the policy's call: %+v", policed)
	}
	if fine.Status != tools.StatusSuccess || !strings.Contains(strings.Join(fine.Hooks, "\n"), "hook guard-check (BeforeTool): allowed") {
		t.Errorf("the allowed call: %+v", fine)
	}
	if exists(filepath.Join(p.ws, "forbidden.txt")) || exists(filepath.Join(p.ws, "blocked.txt")) || !exists(filepath.Join(p.ws, "fine.txt")) {
		t.Errorf("forbidden.txt %t, blocked.txt %t, fine.txt %t", exists(filepath.Join(p.ws, "forbidden.txt")),
			exists(filepath.Join(p.ws, "blocked.txt")), exists(filepath.Join(p.ws, "fine.txt")))
	}
	if !strings.Contains(o.stderr, "rule 2 refused") {
		t.Errorf("the refused rule is not in the log:\n%s", o.stderr)
	}

	// The control: the extension disabled, nothing refuses the calls.
	enablement := `{"guard": {"overrides": ["!` + filepath.ToSlash(p.ws) + `/"]}}`
	if err := os.WriteFile(filepath.Join(filepath.Dir(ext), "extension-enablement.json"), []byte(enablement), 0o644); err != nil {
		t.Fatal(err)
	}
	res, o = run()
	for i, c := range res.ToolCalls {
		if c.Status != tools.StatusSuccess || len(c.Hooks) != 0 {
			t.Errorf("disabled: call %d %+v\n%s", i, c, o.stderr)
		}
	}
	if len(res.ToolCalls) != 3 || !exists(filepath.Join(p.ws, "forbidden.txt")) || !exists(filepath.Join(p.ws, "blocked.txt")) {
		t.Errorf("disabled: the calls did not all run: %+v", res.ToolCalls)
	}
}

// TestHooksAfterToolChains: an AfterTool hook's tailToolCallRequest runs another call
// after the model's, whose result the model gets instead; the chained call's own hooks
// chain nothing further; and the chained call is judged as any call is (a user's deny
// rule refuses it, the control run without the rule runs it).
func TestHooksAfterToolChains(t *testing.T) {
	p := newHookPlace(t)
	chain := p.script(t, "chain.sh", `if grep -q hello.txt; then
  echo '{"hookSpecificOutput":{"hookEventName":"AfterTool","tailToolCallRequest":{"name":"read_file","args":{"file_path":"other.txt"}}}}'
else
  echo '{"hookSpecificOutput":{"tailToolCallRequest":{"name":"read_file","args":{"file_path":"hello.txt"}}}}'
fi`)
	writeHooks(t, p.userSettings(), map[string][]hook{"AfterTool": {{Matcher: "read_file", Hooks: []hookCommand{command("chain", chain)}}}})
	script := clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{{Name: "read_file", Args: json.RawMessage(`{"file_path": "hello.txt"}`)}}},
		{Text: "Read."},
	}}
	srv := fakegemini.Start(script)
	res, o := p.prompt(t, srv, nil, "go")
	reqs, _ := srv.GenerateRequests()
	srv.Close()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2\nstderr: %s", len(reqs), o.stderr)
	}
	if got := responses(t, reqs[1])["read_file"]; !strings.Contains(got, "the other file") || strings.Contains(got, `hello\n`) {
		t.Errorf("the model was told %s, want the chained call's result", got)
	}
	// Two cards: the model's call, saying what was chained, and the chained call, saying
	// that its own request was not followed.
	noted := func(c tools.CallResult, note string) bool {
		return slices.ContainsFunc(c.Hooks, func(n string) bool { return strings.Contains(n, note) })
	}
	if len(res.ToolCalls) != 2 || !noted(res.ToolCalls[0], "chained read_file") || !strings.HasSuffix(res.ToolCalls[1].CallID, "/tail") ||
		!noted(res.ToolCalls[1], "not chained to a chained call") {
		t.Errorf("the cards: %+v", res.ToolCalls)
	}

	// A chained shell command is refused by the user's rule, and runs without it.
	touch := p.script(t, "touch.sh", `cat >/dev/null; echo '{"hookSpecificOutput":{"tailToolCallRequest":{"name":"run_shell_command","args":{"command":"touch tail-marker"}}}}'`)
	writeHooks(t, p.userSettings(), map[string][]hook{"AfterTool": {{Matcher: "read_file", Hooks: []hookCommand{command("touch", touch)}}}})
	policy := filepath.Join(p.home, ".gemini", "policies", "no-touch.toml")
	if err := os.MkdirAll(filepath.Dir(policy), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte("[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"touch\"\ndecision = \"deny\"\ndenyMessage = \"No touching.\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(p.ws, "tail-marker")
	for _, ruled := range []bool{true, false} {
		if !ruled {
			if err := os.Remove(policy); err != nil {
				t.Fatal(err)
			}
		}
		srv := fakegemini.Start(script)
		_, o := p.prompt(t, srv, nil, "go")
		reqs, _ := srv.GenerateRequests()
		srv.Close()
		if len(reqs) != 2 {
			t.Fatalf("rule %t: %d model requests\nstderr: %s", ruled, len(reqs), o.stderr)
		}
		got := responses(t, reqs[1])["read_file"]
		if ruled && (exists(marker) || !strings.Contains(got, "No touching.")) {
			t.Errorf("with the rule: marker %t, the model was told %s", exists(marker), got)
		}
		if !ruled && !exists(marker) {
			t.Errorf("without the rule the chained command did not run: the model was told %s\nstderr: %s", got, o.stderr)
		}
	}
}
