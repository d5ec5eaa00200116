package clients_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakeopenai"
)

func startOpenAI(t *testing.T, turns ...clients.Turn) *fakeopenai.Server {
	t.Helper()
	srv := fakeopenai.Start(clients.Script{Turns: turns})
	t.Cleanup(srv.Close)
	return srv
}

func newOpenAI(t *testing.T, srv *fakeopenai.Server, o clients.OpenAIOptions) *clients.OpenAI {
	t.Helper()
	o.BaseURL = srv.URL + "/v1"
	o.Model = "qwen3:8b"
	if o.APIKey == "" {
		o.APIKey = testKey
	}
	if o.Retry.BaseDelay == 0 {
		o.Retry.BaseDelay = time.Millisecond
	}
	c, err := clients.NewOpenAI(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpenAIStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		turn  clients.Turn
		check func(t *testing.T, r result)
	}{{
		name: "text in chunks",
		turn: clients.Turn{Text: "The answer is forty-two.", Chunks: 5},
		check: func(t *testing.T, r result) {
			if r.text != "The answer is forty-two." || r.textChunks != 5 {
				t.Errorf("text %q in %d chunks", r.text, r.textChunks)
			}
			if r.finish != clients.FinishStop {
				t.Errorf("finish %q", r.finish)
			}
		},
	}, {
		name: "reasoning as thought",
		turn: clients.Turn{Thought: "Simple arithmetic.", Text: "4"},
		check: func(t *testing.T, r result) {
			if r.thought != "Simple arithmetic." || r.text != "4" {
				t.Errorf("thought %q text %q", r.thought, r.text)
			}
		},
	}, {
		name: "tool-call deltas assembled by index",
		turn: clients.Turn{Text: "Let me look.", Calls: []clients.ScriptCall{
			{ID: "call_a", Name: "read_file", Args: json.RawMessage(`{"absolute_path":"/w/a very long path/with spaces/a.go"}`)},
			{Name: "search_file_content", Args: json.RawMessage(`{"pattern":"func main","dir_path":"/w"}`)},
		}},
		check: func(t *testing.T, r result) {
			if len(r.calls) != 2 {
				t.Fatalf("got %d calls", len(r.calls))
			}
			a, b := r.calls[0], r.calls[1]
			if a.ID != "call_a" || a.Name != "read_file" || !jsonEqual(t, string(a.Args), `{"absolute_path":"/w/a very long path/with spaces/a.go"}`) {
				t.Errorf("first call %s %s %s", a.ID, a.Name, a.Args)
			}
			if b.ID != "call_1_2" || b.Name != "search_file_content" || !jsonEqual(t, string(b.Args), `{"pattern":"func main","dir_path":"/w"}`) {
				t.Errorf("second call %s %s %s", b.ID, b.Name, b.Args)
			}
			if r.finish != clients.FinishStop {
				t.Errorf("finish %q", r.finish)
			}
		},
	}, {
		name: "usage from the final chunk",
		turn: clients.Turn{Text: "ok", Usage: &clients.Usage{PromptTokens: 900, OutputTokens: 7, ThoughtTokens: 3}},
		check: func(t *testing.T, r result) {
			want := clients.Usage{PromptTokens: 900, OutputTokens: 7, ThoughtTokens: 3, TotalTokens: 907}
			if r.usage == nil || *r.usage != want {
				t.Errorf("usage %+v, want %+v", r.usage, want)
			}
		},
	}, {
		name: "length maps to MAX_TOKENS",
		turn: clients.Turn{Text: "cut", FinishReason: clients.FinishMaxTokens},
		check: func(t *testing.T, r result) {
			if r.finish != clients.FinishMaxTokens {
				t.Errorf("finish %q", r.finish)
			}
		},
	}, {
		name: "error inside the stream",
		turn: clients.Turn{Text: "some", Error: "model crashed"},
		check: func(t *testing.T, r result) {
			if r.err == nil || !strings.Contains(r.err.Error(), "model crashed") {
				t.Errorf("error %v", r.err)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startOpenAI(t, tt.turn)
			c := newOpenAI(t, srv, clients.OpenAIOptions{})
			r := collect(c.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
			if r.err != nil && tt.turn.Error == "" {
				t.Fatal(r.err)
			}
			tt.check(t, r)
		})
	}
}

func TestOpenAIRequestMapping(t *testing.T) {
	t.Parallel()
	srv := startOpenAI(t,
		clients.Turn{Thought: "hmm", Text: "Reading.", Calls: []clients.ScriptCall{
			{ID: "call_1", Name: "read_file", Args: json.RawMessage(`{"absolute_path":"/w/a.go"}`)},
			{ID: "call_2", Name: "read_file", Args: json.RawMessage(`{"absolute_path":"/w/b.png"}`)},
		}},
		clients.Turn{Text: "Done."},
	)
	c := newOpenAI(t, srv, clients.OpenAIOptions{})
	req := clients.Request{
		System:  "You are agentls.",
		History: []clients.Content{userText("read them")},
		Tools:   []clients.Declaration{readFileDecl},
	}
	first := collect(c.Stream(t.Context(), req))
	if first.err != nil {
		t.Fatal(first.err)
	}
	req.History = append(req.History, first.modelContent(), clients.Content{Role: clients.RoleUser, Parts: []clients.Part{
		{FunctionResponse: &clients.FunctionResponse{ID: "call_1", Name: "read_file", Response: map[string]any{"output": "package a"}}},
		{FunctionResponse: &clients.FunctionResponse{ID: "call_2", Name: "read_file", Response: map[string]any{"error": "too big"},
			Parts: []clients.Blob{{MIMEType: "image/png", Data: []byte("png")}}}},
	}})
	if r := collect(c.Stream(t.Context(), req)); r.err != nil || r.text != "Done." {
		t.Fatalf("%q, %v", r.text, r.err)
	}
	reqs, err := srv.ChatRequests()
	if err != nil {
		t.Fatal(err)
	}
	got := reqs[1]
	if !got.Stream || got.StreamOptions == nil || !got.StreamOptions.IncludeUsage || got.Model != "qwen3:8b" {
		t.Errorf("stream %v, options %+v, model %q", got.Stream, got.StreamOptions, got.Model)
	}
	var roles []string
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
	}
	if want := []string{"system", "user", "assistant", "tool", "tool", "user"}; !slices.Equal(roles, want) {
		t.Fatalf("roles %v, want %v", roles, want)
	}
	m := got.Messages
	if m[0].Text() != "You are agentls." || m[1].Text() != "read them" {
		t.Errorf("system %q user %q", m[0].Text(), m[1].Text())
	}
	if m[2].Text() != "Reading." || len(m[2].ToolCalls) != 2 || m[2].ToolCalls[1].ID != "call_2" ||
		m[2].ToolCalls[0].Function.Name != "read_file" || !jsonEqual(t, m[2].ToolCalls[0].Function.Arguments, `{"absolute_path":"/w/a.go"}`) {
		t.Errorf("assistant message %+v (the thought must stay out)", m[2])
	}
	if m[3].ToolCallID != "call_1" || m[3].Text() != "package a" {
		t.Errorf("first tool message %q %q", m[3].ToolCallID, m[3].Text())
	}
	if m[4].ToolCallID != "call_2" || !jsonEqual(t, m[4].Text(), `{"error":"too big"}`) {
		t.Errorf("second tool message %q %q", m[4].ToolCallID, m[4].Text())
	}
	if !strings.Contains(string(m[5].Content), "data:image/png;base64,") {
		t.Errorf("the image does not follow as the user's: %s", m[5].Content)
	}
	if len(got.Tools) != 1 || got.Tools[0].Type != "function" || got.Tools[0].Function.Name != "read_file" ||
		strings.Contains(string(got.Tools[0].Function.Parameters), "$schema") {
		t.Errorf("tools %+v", got.Tools)
	}
	if auth := srv.Requests()[0].Header.Get("Authorization"); auth != "Bearer "+testKey {
		t.Errorf("authorization %q", auth)
	}
	if got.ToolChoice != nil {
		t.Errorf("tool_choice %v, want none sent", got.ToolChoice)
	}
}

// TestOpenAIToolsRequired: a request that requires calls (a hook's toolConfig mode
// ANY) sends tool_choice "required"; one without tools sends none.
func TestOpenAIToolsRequired(t *testing.T) {
	t.Parallel()
	srv := startOpenAI(t, clients.Turn{Text: "a"}, clients.Turn{Text: "b"})
	c := newOpenAI(t, srv, clients.OpenAIOptions{})
	for _, req := range []clients.Request{
		{History: []clients.Content{userText("go")}, Tools: []clients.Declaration{readFileDecl}, ToolsRequired: true},
		{History: []clients.Content{userText("go")}, ToolsRequired: true},
	} {
		if r := collect(c.Stream(t.Context(), req)); r.err != nil {
			t.Fatal(r.err)
		}
	}
	reqs, err := srv.ChatRequests()
	if err != nil || len(reqs) != 2 {
		t.Fatalf("%d requests, %v", len(reqs), err)
	}
	if reqs[0].ToolChoice != "required" || reqs[1].ToolChoice != nil {
		t.Errorf("tool_choice %v and %v, want required and none", reqs[0].ToolChoice, reqs[1].ToolChoice)
	}
}

func TestOpenAIErrors(t *testing.T) {
	t.Parallel()
	ok := clients.Turn{Text: "recovered"}
	tests := []struct {
		name      string
		turns     []clients.Turn
		wantText  string
		wantErr   []string
		wantWaits []time.Duration
	}{{
		name:      "429 with Retry-After, then success",
		turns:     []clients.Turn{{HTTPError: &clients.ScriptHTTPError{Status: 429, Message: "slow down", RetryAfter: "2"}}, ok},
		wantText:  "recovered",
		wantWaits: []time.Duration{2 * time.Second},
	}, {
		name:      "Retry-After as an HTTP date",
		turns:     []clients.Turn{{HTTPError: &clients.ScriptHTTPError{Status: 503, RetryAfter: "Mon, 02 Jan 2006 15:04:05 GMT"}}, ok},
		wantText:  "recovered",
		wantWaits: []time.Duration{0},
	}, {
		name:      "502 then success",
		turns:     []clients.Turn{{HTTPError: &clients.ScriptHTTPError{Status: 502, Message: "bad gateway"}}, ok},
		wantText:  "recovered",
		wantWaits: []time.Duration{time.Millisecond},
	}, {
		name:    "400 with the server's message",
		turns:   []clients.Turn{{HTTPError: &clients.ScriptHTTPError{Status: 400, Message: "context length exceeded: 140000 > 131072"}}},
		wantErr: []string{"rejected", "context length exceeded: 140000 > 131072"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startOpenAI(t, tt.turns...)
			var s sleeps
			c := newOpenAI(t, srv, clients.OpenAIOptions{Retry: clients.RetryPolicy{BaseDelay: time.Millisecond, Sleep: s.sleep}})
			r := collect(c.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
			t.Logf("error: %v", r.err)
			if tt.wantErr == nil && r.err != nil {
				t.Fatal(r.err)
			}
			for _, w := range tt.wantErr {
				if r.err == nil || !strings.Contains(r.err.Error(), w) {
					t.Errorf("error %v, want it to contain %q", r.err, w)
				}
			}
			if r.text != tt.wantText {
				t.Errorf("text %q, want %q", r.text, tt.wantText)
			}
			if got := s.got(); !slices.Equal(got, tt.wantWaits) {
				t.Errorf("waits %v, want %v", got, tt.wantWaits)
			}
		})
	}
}

// TestOpenAIRejectedKey is not parallel: it sets the environment.
func TestOpenAIRejectedKey(t *testing.T) {
	const secret = "sk-very-secret"
	srv := startOpenAI(t, clients.Turn{HTTPError: &clients.ScriptHTTPError{Status: 401, Message: "Incorrect API key provided"}})
	t.Setenv("OPENAI_API_KEY", secret)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	c, err := clients.NewOpenAI(clients.OpenAIOptions{Model: "gpt-x"})
	if err != nil {
		t.Fatal(err)
	}
	r := collect(c.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
	if r.err == nil {
		t.Fatal("no error")
	}
	t.Logf("error: %v", r.err)
	if msg := r.err.Error(); !strings.Contains(msg, "the API key in OPENAI_API_KEY was rejected") ||
		!strings.Contains(msg, "Incorrect API key provided") || strings.Contains(msg, secret) {
		t.Errorf("error %q, want it to name OPENAI_API_KEY, give the server's message and hide the key", msg)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer "+secret {
		t.Errorf("authorization %q", got)
	}
}

// TestOpenAINoKey checks that without a key no Authorization header goes out, as local
// servers expect. Not parallel: it sets the environment.
func TestOpenAINoKey(t *testing.T) {
	srv := startOpenAI(t, clients.Turn{Text: "local"})
	t.Setenv("OPENAI_API_KEY", "")
	c, err := clients.NewOpenAI(clients.OpenAIOptions{Model: "llama", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if r := collect(c.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}})); r.err != nil || r.text != "local" {
		t.Fatalf("%q %v", r.text, r.err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "" {
		t.Errorf("authorization %q, want none", got)
	}
	if c.ContextWindow() != clients.DefaultOpenAIContextWindow || c.Model() != "llama" {
		t.Errorf("window %d model %q", c.ContextWindow(), c.Model())
	}
	if _, err := clients.NewOpenAI(clients.OpenAIOptions{}); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("no model: %v", err)
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	t.Parallel()
	url := closedURL(t) + "/v1"
	c, err := clients.NewOpenAI(clients.OpenAIOptions{Model: "m", BaseURL: url, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	r := collect(c.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
	if r.err == nil || !strings.Contains(r.err.Error(), url) || !strings.Contains(r.err.Error(), "connection refused") {
		t.Errorf("error %v, want it to name %s", r.err, url)
	}
}

func TestOpenAICancelMidStream(t *testing.T) {
	t.Parallel()
	srv := startOpenAI(t, clients.Turn{Text: "partial", Chunks: 1, Hang: true})
	c := newOpenAI(t, srv, clients.OpenAIOptions{})
	r := cancelAfterFirstChunk(t, c)
	if r.text != "partial" || !errors.Is(r.err, context.Canceled) {
		t.Errorf("text %q error %v, want the first chunk and context.Canceled", r.text, r.err)
	}
}

func TestOpenAIScriptExhausted(t *testing.T) {
	t.Parallel()
	srv := startOpenAI(t, clients.Turn{Text: "only one"})
	c := newOpenAI(t, srv, clients.OpenAIOptions{})
	req := clients.Request{History: []clients.Content{userText("hi")}}
	if r := collect(c.Stream(t.Context(), req)); r.err != nil {
		t.Fatal(r.err)
	}
	r := collect(c.Stream(t.Context(), req))
	if r.err == nil || !strings.Contains(r.err.Error(), "no turn left") {
		t.Errorf("error %v, want the script's exhaustion", r.err)
	}
}

// TestOpenAIIndexlessCalls: Gemini's OpenAI-compatible endpoint streams parallel calls
// whole, each in its own delta without an index; they stay separate calls rather than
// merging into one with both names and both argument objects run together.
func TestOpenAIIndexlessCalls(t *testing.T) {
	t.Parallel()
	srv := fakeopenai.StartWith(clients.Script{Turns: []clients.Turn{{Calls: []clients.ScriptCall{
		{ID: "function-call-1", Name: "read_file", Args: json.RawMessage(`{"absolute_path":"/w/a.go"}`)},
		{ID: "function-call-2", Name: "read_file", Args: json.RawMessage(`{"absolute_path":"/w/b.go"}`)},
		{ID: "function-call-3", Name: "glob", Args: json.RawMessage(`{"pattern":"*.md"}`)},
	}}}}, fakeopenai.Options{IndexlessCalls: true})
	t.Cleanup(srv.Close)
	c := newOpenAI(t, srv, clients.OpenAIOptions{})
	r := collect(c.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := []struct{ id, name, args string }{
		{"function-call-1", "read_file", `{"absolute_path":"/w/a.go"}`},
		{"function-call-2", "read_file", `{"absolute_path":"/w/b.go"}`},
		{"function-call-3", "glob", `{"pattern":"*.md"}`},
	}
	if len(r.calls) != len(want) {
		t.Fatalf("got %d calls %+v, want %d", len(r.calls), r.calls, len(want))
	}
	for i, w := range want {
		c := r.calls[i]
		if c.ID != w.id || c.Name != w.name || !jsonEqual(t, string(c.Args), w.args) {
			t.Errorf("call %d = %s %s %s, want %s %s %s", i, c.ID, c.Name, c.Args, w.id, w.name, w.args)
		}
	}
}
