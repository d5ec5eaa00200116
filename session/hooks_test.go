package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/hooks"
	"github.com/agentls/agentls/settings"
)

// TestPreCompressHook: the PreCompress hooks run before the history is compressed,
// told the trigger, and what they say reaches the person; they cannot stop it.
func TestPreCompressHook(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Here is a lot of context about the task. ", 50)
	h := newHarness(t, nil, clients.Script{ContextWindow: 60000, Turns: []clients.Turn{
		{Text: "answer one", Usage: &clients.Usage{PromptTokens: 10000}},
		{Text: "answer two", Usage: &clients.Usage{PromptTokens: 50000}},
		{Text: "<state_snapshot>\n<overall_goal>test</overall_goal>\n</state_snapshot>", Usage: &clients.Usage{PromptTokens: 900}},
		{Text: "answer three", Usage: &clients.Usage{PromptTokens: 1200}},
	}})
	marker := filepath.Join(h.root, "precompress.json")
	var s settings.Settings
	s.Hooks.Events = map[string][]settings.HookGroup{"PreCompress": {{Matcher: "auto", Hooks: []settings.HookCommand{{Type: "command",
		Command: `cat > ` + marker + `; echo '{"systemMessage":"saving the state first","continue":false}'`}}}}}
	runner, err := hooks.New(hooks.Options{Settings: s, Dir: h.root, Environ: os.Environ})
	if err != nil {
		t.Fatal(err)
	}
	sess := h.session(func(o *Options) { o.Hooks = func() *hooks.Runner { return runner } })
	for _, p := range []string{"one: " + long, "two", "three"} {
		if _, err := sess.Prompt(context.Background(), p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(h.updatesOf(UpdateCompression)); n != 1 {
		t.Fatalf("%d compressions", n)
	}
	data, err := os.ReadFile(marker)
	var in struct {
		Event   string `json:"hook_event_name"`
		Trigger string `json:"trigger"`
	}
	if err != nil || json.Unmarshal(data, &in) != nil || in.Event != "PreCompress" || in.Trigger != "auto" {
		t.Errorf("the hook's input: %v %s", err, data)
	}
	if m := h.messages(); !strings.Contains(m, "[agentls: hook ") || !strings.Contains(m, "saving the state first") {
		t.Errorf("the person was not told: %q", m)
	}
}

// TestHookErrorsTold: a hook the settings get wrong is left out, and the session says
// so before its first prompt; the other hooks run.
func TestHookErrorsTold(t *testing.T) {
	t.Parallel()
	config := t.TempDir()
	hh := newHostHarness(t, "", clients.Script{Turns: []clients.Turn{{Text: "fine"}}}, func(o *HostOptions) {
		o.Toolbox.ConfigDir = config
	})
	marker := filepath.Join(hh.root, "ran")
	data, _ := json.Marshal(map[string]any{"hooks": map[string]any{"BeforeAgent": []any{
		map[string]any{"matcher": "(", "hooks": []any{map[string]any{"type": "command", "command": "true"}}},
		map[string]any{"hooks": []any{map[string]any{"type": "http", "command": "x"}}},
		map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "cat > " + marker}}},
	}}})
	if err := os.WriteFile(filepath.Join(config, "settings.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := hh.host.Reconfigure(settings.Settings{}); err != nil {
		t.Fatal(err)
	}
	hh.prompt("", "hello")
	var msgs strings.Builder
	for _, u := range hh.of(UpdateMessage) {
		msgs.WriteString(u.Text)
	}
	if m := msgs.String(); !strings.Contains(m, "hooks left out of the settings") || !strings.Contains(m, `only "command" hooks exist`) {
		t.Errorf("messages %q", m)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the good hook did not run: %v", err)
	}
}

// TestSessionEndHookBounded: a SessionEnd hook that hangs holds the host's Close for
// closeHookWait at most, not its whole timeout, and is stopped.
func TestSessionEndHookBounded(t *testing.T) {
	t.Parallel()
	config := t.TempDir()
	hh := newHostHarness(t, "", clients.Script{Turns: []clients.Turn{{Text: "fine"}}}, func(o *HostOptions) {
		o.Toolbox.ConfigDir = config
	})
	started := filepath.Join(hh.root, "started")
	data, _ := json.Marshal(map[string]any{"hooks": map[string]any{"SessionEnd": []any{
		map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "cat > " + started + "; sleep 120"}}},
	}}})
	if err := os.WriteFile(filepath.Join(config, "settings.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := hh.host.Reconfigure(settings.Settings{}); err != nil {
		t.Fatal(err)
	}
	hh.prompt("", "hello")
	start := time.Now()
	hh.host.Close()
	if took := time.Since(start); took < closeHookWait/2 || took > closeHookWait+10*time.Second {
		t.Errorf("Close took %v with a hanging SessionEnd hook (wait at most %v)", took, closeHookWait)
	}
	if data, err := os.ReadFile(started); err != nil || !strings.Contains(string(data), `"reason":"exit"`) {
		t.Errorf("the SessionEnd hook's input: %v %s", err, data)
	}
}

// TestApplyLLMRequest: BeforeModel hooks' llm_request set the request's model and
// sampling, a later hook's over an earlier's field by field; messages are not applied,
// and the person is told only when they differ from those the hooks were sent; an
// llm_request that cannot be read is told and ignored.
func TestApplyLLMRequest(t *testing.T) {
	t.Parallel()
	sent := []hookMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"}}
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	for _, tt := range []struct {
		name     string
		outputs  []string
		model    string
		sampling *clients.Sampling
		told     string
	}{
		{"none", []string{`{}`}, "", nil, ""},
		{"model and config", []string{`{"model":"gemini-2.5-pro","config":{"temperature":0.2,"topK":4}}`},
			"gemini-2.5-pro", &clients.Sampling{Temperature: f(0.2), TopK: i(4)}, ""},
		{"a later hook's fields win", []string{`{"config":{"temperature":0.2,"topP":0.5}}`, `{"config":{"temperature":0.7,"maxOutputTokens":9}}`},
			"", &clients.Sampling{Temperature: f(0.7), TopP: f(0.5), MaxOutputTokens: i(9)}, ""},
		{"messages echoed", []string{`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello"}]}`},
			"m", nil, ""},
		{"messages changed", []string{`{"messages":[{"role":"user","content":"something else"}]}`},
			"", nil, "llm_request.messages are not applied"},
		{"not usable", []string{`{"model":5}`}, "", nil, "llm_request is not usable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var specific []map[string]json.RawMessage
			for _, o := range tt.outputs {
				specific = append(specific, map[string]json.RawMessage{"llm_request": json.RawMessage(o)})
			}
			req, notes := applyLLMRequest(clients.Request{System: "be brief"}, sent, specific)
			if req.Model != tt.model {
				t.Errorf("model %q, want %q", req.Model, tt.model)
			}
			got, _ := json.Marshal(req.Sampling)
			want, _ := json.Marshal(tt.sampling)
			if string(got) != string(want) {
				t.Errorf("sampling %s, want %s", got, want)
			}
			joined := strings.Join(notes, "\n")
			if (tt.told == "") != (joined == "") || !strings.Contains(joined, tt.told) {
				t.Errorf("notes %q, want %q", joined, tt.told)
			}
		})
	}
}

// TestTailCall: the first hook's tailToolCallRequest is taken; one without a tool's
// name, or a second one, is left out with a note.
func TestTailCall(t *testing.T) {
	sp := func(s string) map[string]json.RawMessage {
		return map[string]json.RawMessage{"tailToolCallRequest": json.RawMessage(s)}
	}
	for _, tt := range []struct {
		name     string
		specific []map[string]json.RawMessage
		want     string // the tail's name, "" for none
		notes    int
	}{
		{"none", []map[string]json.RawMessage{{"additionalContext": json.RawMessage(`"x"`)}}, "", 0},
		{"one", []map[string]json.RawMessage{sp(`{"name":"read_file","args":{"file_path":"a"}}`)}, "read_file", 0},
		{"null", []map[string]json.RawMessage{sp(`null`)}, "", 0},
		{"no name", []map[string]json.RawMessage{sp(`{"args":{}}`)}, "", 1},
		{"not an object", []map[string]json.RawMessage{sp(`"read_file"`)}, "", 1},
		{"two", []map[string]json.RawMessage{sp(`{"name":"glob"}`), sp(`{"name":"read_file"}`)}, "glob", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tail, notes := tailCall(tt.specific)
			got := ""
			if tail != nil {
				got = tail.Name
			}
			if got != tt.want || len(notes) != tt.notes {
				t.Errorf("tail %q, notes %q; want %q and %d notes", got, notes, tt.want, tt.notes)
			}
		})
	}
}
