package clients_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
)

// summary renders parts as "text:…" and "call:name args" lines for comparison.
func summary(t *testing.T, parts []clients.Part) []string {
	t.Helper()
	var out []string
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, "text:"+text.String())
			text.Reset()
		}
	}
	for _, p := range parts {
		if p.FunctionCall != nil {
			flush()
			var args any
			if err := json.Unmarshal(p.FunctionCall.Args, &args); err != nil {
				t.Fatalf("args of %s: %v", p.FunctionCall.Name, err)
			}
			b, _ := json.Marshal(args)
			if p.FunctionCall.ID == "" {
				t.Errorf("call %s without id", p.FunctionCall.Name)
			}
			out = append(out, "call:"+p.FunctionCall.Name+" "+string(b))
			continue
		}
		text.WriteString(p.Text)
	}
	flush()
	return out
}

func TestTextModeParsing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{{
		name: "plain text",
		in:   "Nothing to call here.",
		want: []string{"text:Nothing to call here."},
	}, {
		name: "one call after text",
		in:   "Let me read it.\n```json\n{\"name\": \"read_file\", \"args\": {\"absolute_path\": \"/w/a.go\"}}\n```\n",
		want: []string{"text:Let me read it.\n", `call:read_file {"absolute_path":"/w/a.go"}`, "text:\n"},
	}, {
		name: "several blocks",
		in:   "```json\n{\"name\":\"a\",\"args\":{}}\n```\nand\n```json\n{\"name\":\"b\",\"args\":{\"x\":1}}\n```",
		want: []string{"call:a {}", "text:\nand\n", `call:b {"x":1}`},
	}, {
		name: "an array of calls",
		in:   "```json\n[{\"name\":\"a\",\"args\":{\"p\":\"1\"}}, {\"name\":\"b\"}]\n```",
		want: []string{`call:a {"p":"1"}`, "call:b {}"},
	}, {
		name: "arguments instead of args, bare fence",
		in:   "```\n{\"name\":\"glob\",\"arguments\":{\"pattern\":\"*.go\"}}\n```",
		want: []string{`call:glob {"pattern":"*.go"}`},
	}, {
		name: "invalid JSON stays text",
		in:   "```json\n{\"name\": \"read_file\", \"args\": {\n```",
		want: []string{"text:```json\n{\"name\": \"read_file\", \"args\": {\n```"},
	}, {
		name: "unknown shape stays text",
		in:   "Config:\n```json\n{\"name\": \"my-app\", \"version\": \"1.0.0\"}\n```",
		want: []string{"text:Config:\n```json\n{\"name\": \"my-app\", \"version\": \"1.0.0\"}\n```"},
	}, {
		name: "args that are not an object stay text",
		in:   "```json\n{\"name\": \"a\", \"args\": [1]}\n```",
		want: []string{"text:```json\n{\"name\": \"a\", \"args\": [1]}\n```"},
	}, {
		name: "an array with one bad element stays text",
		in:   "```json\n[{\"name\":\"a\"}, 3]\n```",
		want: []string{"text:```json\n[{\"name\":\"a\"}, 3]\n```"},
	}, {
		name: "other languages stay text",
		in:   "```go\nfunc main() {}\n```",
		want: []string{"text:```go\nfunc main() {}\n```"},
	}, {
		name: "an unterminated fence stays text",
		in:   "Here:\n```json\n{\"name\":\"a\"}",
		want: []string{"text:Here:\n```json\n{\"name\":\"a\"}"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			whole := summary(t, clients.FeedPieces([]string{tt.in}))
			if strings.Join(whole, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got  %q\nwant %q", whole, tt.want)
			}
			// Streamed a byte at a time, the result is the same.
			var pieces []string
			for i := range len(tt.in) {
				pieces = append(pieces, tt.in[i:i+1])
			}
			if bytewise := summary(t, clients.FeedPieces(pieces)); strings.Join(bytewise, "|") != strings.Join(tt.want, "|") {
				t.Errorf("byte by byte: got %q\nwant %q", bytewise, tt.want)
			}
		})
	}
}

func TestParseCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		info, body string
		ok         bool
		n          int
	}{
		{"json", `{"name":"a","args":{}}`, true, 1},
		{"JSON", `{"name":"a"}`, true, 1},
		{"", `[{"name":"a"},{"name":"b","args":null}]`, true, 2},
		{"json", `[]`, false, 0},
		{"json", `{"name":""}`, false, 0},
		{"json", `{"name":"a","id":"x"}`, false, 0},
		{"python", `{"name":"a"}`, false, 0},
		{"json", `"just a string"`, false, 0},
	}
	for _, tt := range tests {
		calls, ok := clients.ParseCalls(tt.info, tt.body)
		if ok != tt.ok || len(calls) != tt.n {
			t.Errorf("ParseCalls(%q, %s) = %d calls, %v; want %d, %v", tt.info, tt.body, len(calls), ok, tt.n, tt.ok)
		}
	}
}

func TestTextModeRoundTrip(t *testing.T) {
	t.Parallel()
	inner := clients.NewScripted(clients.Script{Turns: []clients.Turn{
		{Text: "I'll read it.\n```json\n{\"name\": \"read_file\", \"args\": {\"absolute_path\": \"/w/a.go\"}}\n```", Chunks: 7,
			Usage: &clients.Usage{PromptTokens: 10}},
		{Text: "It declares package a."},
	}})
	c := clients.NewTextMode(inner)
	req := clients.Request{
		System:  "You are agentls.",
		History: []clients.Content{userText("read a.go")},
		Tools:   []clients.Declaration{readFileDecl},
	}
	first := collect(c.Stream(t.Context(), req))
	if first.err != nil {
		t.Fatal(first.err)
	}
	if len(first.calls) != 1 || first.calls[0].Name != "read_file" || !jsonEqual(t, string(first.calls[0].Args), `{"absolute_path":"/w/a.go"}`) {
		t.Fatalf("calls %+v", first.calls)
	}
	if first.text != "I'll read it.\n" || first.usage == nil || first.finish != clients.FinishStop {
		t.Errorf("text %q usage %v finish %q", first.text, first.usage, first.finish)
	}
	sent := inner.Requests()[0]
	if len(sent.Tools) != 0 {
		t.Errorf("tools sent to a text-only model: %+v", sent.Tools)
	}
	for _, want := range []string{"You are agentls.", "## read_file", "Reads a file.", `"absolute_path"`, "```json"} {
		if !strings.Contains(sent.System, want) {
			t.Errorf("system instruction lacks %q:\n%s", want, sent.System)
		}
	}
	if strings.Contains(sent.System, "$schema") {
		t.Error("system instruction carries $schema")
	}

	id := first.calls[0].ID
	req.History = append(req.History, first.modelContent(), clients.Content{Role: clients.RoleUser, Parts: []clients.Part{
		{FunctionResponse: &clients.FunctionResponse{ID: id, Name: "read_file", Response: map[string]any{"output": "package a"}}},
	}})
	if r := collect(c.Stream(t.Context(), req)); r.err != nil || r.text != "It declares package a." {
		t.Fatalf("%q %v", r.text, r.err)
	}
	hist := inner.Requests()[1].History
	if len(hist) != 3 {
		t.Fatalf("history of %d", len(hist))
	}
	var model, user strings.Builder
	for _, p := range hist[1].Parts {
		if p.FunctionCall != nil || p.FunctionResponse != nil {
			t.Errorf("structured part sent to a text-only model: %+v", p)
		}
		model.WriteString(p.Text)
	}
	for _, p := range hist[2].Parts {
		if p.FunctionResponse != nil {
			t.Errorf("structured part sent to a text-only model: %+v", p)
		}
		user.WriteString(p.Text)
	}
	if !strings.Contains(model.String(), `{"name":"read_file","args":{"absolute_path":"/w/a.go"}}`) {
		t.Errorf("model turn sent back as %q", model.String())
	}
	if !strings.Contains(user.String(), "read_file") || !strings.Contains(user.String(), `{"output":"package a"}`) {
		t.Errorf("function response sent as %q", user.String())
	}

	if _, err := c.(clients.TokenCounter).CountTokens(t.Context(), req); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("CountTokens over a client without it: %v", err)
	}
}

// TestTextModeUnwrap: the text-mode wrapper gives back the client it wraps, so that its
// users can ask what the model behind it can do.
func TestTextModeUnwrap(t *testing.T) {
	t.Parallel()
	inner := clients.NewScripted(clients.Script{})
	w, ok := clients.NewTextMode(inner).(interface{ Unwrap() clients.Client })
	if !ok {
		t.Fatal("the text-mode client has no Unwrap method")
	}
	if got := w.Unwrap(); got != inner {
		t.Errorf("Unwrap = %v, want the wrapped client", got)
	}
}
