package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/settings"
)

// TestMain makes the test binary its own sandbox helper, as agentls is.
func TestMain(m *testing.M) {
	sandbox.Enter()
	os.Exit(m.Run())
}

// script writes an executable shell script with body into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// runner returns a runner of the hooks of event e, uncontained, in dir.
func runner(t *testing.T, dir string, e Event, groups ...settings.HookGroup) *Runner {
	t.Helper()
	var s settings.Settings
	s.Hooks.Events = map[string][]settings.HookGroup{string(e): groups}
	r, err := New(Options{Settings: s, Dir: dir, Environ: os.Environ})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func cmd(command string, timeout int) settings.HookCommand {
	return settings.HookCommand{Type: "command", Command: command, Timeout: timeout}
}

// TestDecisions: each way a hook answers, and what the outcome makes of it.
func TestDecisions(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, body string
		timeout    int
		check      func(t *testing.T, o Outcome)
	}{
		{"silent allow", `cat >/dev/null; exit 0`, 0, func(t *testing.T, o Outcome) {
			if o.Deny || o.Stop || o.Failed() || len(o.Notes) != 0 {
				t.Errorf("%+v", o)
			}
		}},
		{"deny", `cat >/dev/null; echo '{"decision":"deny","reason":"no rm here"}'`, 0, func(t *testing.T, o Outcome) {
			if !o.Deny || o.Reason != "no rm here" || !strings.Contains(o.Notes[0], "denied: no rm here") {
				t.Errorf("%+v", o)
			}
		}},
		{"block is deny", `echo '{"decision":"block"}'`, 0, func(t *testing.T, o Outcome) {
			if !o.Deny || !strings.Contains(o.Reason, "blocked by hook") {
				t.Errorf("%+v", o)
			}
		}},
		{"exit 2 blocks with stderr", `echo 'too dangerous' >&2; exit 2`, 0, func(t *testing.T, o Outcome) {
			if !o.Deny || o.Reason != "too dangerous" {
				t.Errorf("%+v", o)
			}
		}},
		{"rewrite and context", `echo '{"hookSpecificOutput":{"tool_input":{"command":"echo safe"},"additionalContext":"ran in CI"},"systemMessage":"checked"}'`, 0,
			func(t *testing.T, o Outcome) {
				if o.Deny || string(o.ToolInput["command"]) != `"echo safe"` || o.Context != "ran in CI" || len(o.Notes) != 3 {
					t.Errorf("%+v", o)
				}
			}},
		{"continue false stops", `echo '{"continue":false,"stopReason":"enough"}'`, 0, func(t *testing.T, o Outcome) {
			if !o.Stop || o.StopReason != "enough" || o.Deny {
				t.Errorf("%+v", o)
			}
		}},
		{"failure decides nothing", `echo '{"decision":"deny"}'; echo oops >&2; exit 1`, 0, func(t *testing.T, o Outcome) {
			if o.Deny || !o.Failed() || !strings.Contains(o.Notes[0], "failed with exit status 1: oops") {
				t.Errorf("%+v", o)
			}
		}},
		{"malformed decides nothing", `echo 'Deny it!'`, 0, func(t *testing.T, o Outcome) {
			if o.Deny || !o.Failed() || !strings.Contains(o.Notes[0], "not a JSON object") {
				t.Errorf("%+v", o)
			}
		}},
		{"hang past the timeout", `sleep 30 & sleep 30; echo '{"decision":"deny"}'`, 300, func(t *testing.T, o Outcome) {
			if o.Deny || !o.Failed() || !strings.Contains(o.Notes[0], "timeout of 300ms") || o.Results[0].Duration > 5*time.Second {
				t.Errorf("%+v", o)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runner(t, dir, BeforeTool, settings.HookGroup{Hooks: []settings.HookCommand{cmd(tt.body, tt.timeout)}})
			tt.check(t, r.Run(t.Context(), BeforeTool, Call{Target: "run_shell_command", Fields: map[string]any{"tool_name": "run_shell_command"}}))
		})
	}
}

// TestInput: a hook reads Gemini CLI's input fields on stdin and its environment, with
// the settings of the extension that brought it, which cannot replace Gemini CLI's
// variables.
func TestInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "input.json")
	env := filepath.Join(dir, "env.txt")
	r := runner(t, dir, BeforeTool, settings.HookGroup{Matcher: "run_.*", Hooks: []settings.HookCommand{
		cmd("cat > "+out+"; echo \"$GEMINI_PROJECT_DIR|$GEMINI_SESSION_ID|$CLAUDE_PROJECT_DIR|$(pwd)|$TRACKER_URL\" > "+env, 0)},
		Env: map[string]string{"TRACKER_URL": "https://tracker.example", "GEMINI_PROJECT_DIR": "/elsewhere"}})
	o := r.Run(t.Context(), BeforeTool, Call{SessionID: "s1", TranscriptPath: "/t.jsonl", Target: "run_shell_command",
		Fields: map[string]any{"tool_name": "run_shell_command", "tool_input": json.RawMessage(`{"command":"ls"}`)}})
	if o.Failed() {
		t.Fatal(o.Notes)
	}
	var in map[string]any
	data, _ := os.ReadFile(out)
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	if in["session_id"] != "s1" || in["transcript_path"] != "/t.jsonl" || in["hook_event_name"] != "BeforeTool" ||
		in["tool_name"] != "run_shell_command" || in["tool_input"].(map[string]any)["command"] != "ls" || in["timestamp"] == "" {
		t.Errorf("input %s", data)
	}
	if got, _ := os.ReadFile(env); strings.TrimSpace(string(got)) != dir+"|s1|"+dir+"|"+dir+"|https://tracker.example" {
		t.Errorf("environment and directory: %q", got)
	}
}

// TestMatchers: tool events match a regular expression of the whole name, others an
// exact string; "" and "*" match everything.
func TestMatchers(t *testing.T) {
	dir := t.TempDir()
	deny := func(m string) settings.HookGroup {
		return settings.HookGroup{Matcher: m, Hooks: []settings.HookCommand{cmd(`echo '{"decision":"deny","reason":"`+m+`"}'`, 0)}}
	}
	for _, tt := range []struct {
		e       Event
		matcher string
		target  string
		match   bool
	}{
		{BeforeTool, "read_.*", "read_file", true},
		{BeforeTool, "read_.*", "run_shell_command", false},
		{BeforeTool, "write_file|replace", "replace", true},
		{BeforeTool, "file", "read_file", false}, // the whole name
		{AfterTool, "*", "anything", true},
		{AfterTool, "", "anything", true},
		{SessionStart, "startup", "startup", true},
		{SessionStart, "startup", "resume", false},
		{SessionStart, "start.*", "startup", false}, // exact, not a pattern
	} {
		r := runner(t, dir, tt.e, deny(tt.matcher))
		if got := r.Run(t.Context(), tt.e, Call{Target: tt.target}).Deny; got != tt.match {
			t.Errorf("%s %q on %q: matched %t", tt.e, tt.matcher, tt.target, got)
		}
	}
}

// TestSequential: in a sequential group each hook sees the tool_input the previous
// one rewrote; the outcome merges the rewrites.
func TestSequential(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen.json")
	r := runner(t, dir, BeforeTool, settings.HookGroup{Sequential: true, Hooks: []settings.HookCommand{
		cmd(`cat >/dev/null; echo '{"hookSpecificOutput":{"tool_input":{"command":"echo one"}}}'`, 0),
		cmd(`cat > `+seen+`; echo '{"hookSpecificOutput":{"tool_input":{"description":"two"}}}'`, 0),
	}})
	o := r.Run(t.Context(), BeforeTool, Call{Target: "run_shell_command", Fields: map[string]any{"tool_input": map[string]any{"command": "rm -rf /", "dir_path": "x"}}})
	if string(o.ToolInput["command"]) != `"echo one"` || string(o.ToolInput["description"]) != `"two"` {
		t.Errorf("merged rewrite %v", o.ToolInput)
	}
	data, _ := os.ReadFile(seen)
	var in struct {
		ToolInput map[string]string `json:"tool_input"`
	}
	if err := json.Unmarshal(data, &in); err != nil || in.ToolInput["command"] != "echo one" || in.ToolInput["dir_path"] != "x" {
		t.Errorf("the second hook saw %s", data)
	}
}

// TestConfig: hooksConfig turns hooks off, all or by name; bad entries are reported
// and the rest kept.
func TestConfig(t *testing.T) {
	off := false
	group := settings.HookGroup{Hooks: []settings.HookCommand{{Command: "true", Name: "a"}, {Command: "echo b"}}}
	s := settings.Settings{Hooks: settings.Hooks{Events: map[string][]settings.HookGroup{"BeforeTool": {group}}}}
	if r, err := New(Options{Settings: s}); err != nil || !r.Has(BeforeTool) || r.Has(AfterTool) {
		t.Fatalf("runner %v, %v", r, err)
	}
	s.HooksConfig.Enabled = &off
	if r, _ := New(Options{Settings: s}); r != nil {
		t.Error("hooksConfig.enabled false: hooks still run")
	}
	s.HooksConfig = settings.HooksConfig{Disabled: []string{"a", "echo b"}}
	if r, _ := New(Options{Settings: s}); r != nil {
		t.Error("every hook disabled: hooks still run")
	}
	s.HooksConfig = settings.HooksConfig{}
	s.Hooks.Events["AfterTool"] = []settings.HookGroup{{Matcher: "(", Hooks: []settings.HookCommand{{Command: "true"}}},
		{Hooks: []settings.HookCommand{{Type: "http", Command: "x"}}}}
	r, err := New(Options{Settings: s})
	if err == nil || !strings.Contains(err.Error(), "not a regular expression") || !strings.Contains(err.Error(), `only "command"`) || !r.Has(BeforeTool) {
		t.Errorf("runner %v, %v", r, err)
	}
}

// TestContained: a hook runs in the sandbox of run_shell_command: its write outside
// the workspace is refused while the same hook uncontained writes there.
func TestContained(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := sandbox.Probe(exe)
	if m.LandlockABI == 0 {
		if os.Getenv("AGENTLS_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("AGENTLS_REQUIRE_SANDBOX=1 but no Landlock: %s", m.LandlockError)
		}
		t.Skipf("no Landlock: %s", m.LandlockError)
	}
	for _, contained := range []bool{true, false} {
		root, outside := t.TempDir(), t.TempDir()
		t.Setenv("TMPDIR", t.TempDir()) // so that /tmp, which holds outside, is not writable
		marker := filepath.Join(outside, "marker")
		var box *sandbox.Sandbox
		if contained {
			if box, err = sandbox.New(m, sandbox.Config{}, sandbox.Options{Roots: []string{root}, Helper: exe}); err != nil {
				t.Fatal(err)
			}
		}
		var s settings.Settings
		s.Hooks.Events = map[string][]settings.HookGroup{"BeforeTool": {{Hooks: []settings.HookCommand{
			cmd("echo pwned > "+marker+"; echo in > in.txt; echo '{}'", 0)}}}}
		r, err := New(Options{Settings: s, Sandbox: box, Dir: root, Environ: os.Environ})
		if err != nil {
			t.Fatal(err)
		}
		o := r.Run(t.Context(), BeforeTool, Call{Target: "x"})
		if _, err := os.Stat(filepath.Join(root, "in.txt")); err != nil {
			t.Fatalf("contained=%t: the hook did not run: %v %v", contained, o.Notes, err)
		}
		if _, err := os.Stat(marker); (err == nil) == contained {
			t.Errorf("contained=%t: marker written %t", contained, err == nil)
		}
	}
}
