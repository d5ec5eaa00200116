package clients_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
)

func TestScriptedReplay(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "script.json")
	script := `{
	  "model": "demo",
	  "contextWindow": 32000,
	  "turns": [
	    {"thought": "Look first.", "text": "Reading the file now.", "chunks": 2,
	     "calls": [{"name": "read_file", "args": {"absolute_path": "/w/a.go"}}, {"id": "mine", "name": "glob"}],
	     "usage": {"inputTokens": 100, "outputTokens": 20}},
	    {"text": "Half", "error": "stream broke"},
	    {"httpError": {"status": 429, "message": "slow down"}}
	  ]
	}`
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := clients.LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	c := clients.NewScripted(s)
	if c.Model() != "demo" || c.ContextWindow() != 32000 {
		t.Errorf("model %q window %d", c.Model(), c.ContextWindow())
	}
	req := clients.Request{System: "sys", History: []clients.Content{userText("go")}}

	r := collect(c.Stream(t.Context(), req))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.thought != "Look first." || r.text != "Reading the file now." || r.textChunks != 2 {
		t.Errorf("thought %q text %q in %d chunks", r.thought, r.text, r.textChunks)
	}
	if len(r.calls) != 2 || r.calls[0].ID != "call-1-1" || r.calls[1].ID != "mine" || string(r.calls[1].Args) != "{}" ||
		!jsonEqual(t, string(r.calls[0].Args), `{"absolute_path":"/w/a.go"}`) {
		t.Errorf("calls %+v", r.calls)
	}
	if r.usage == nil || r.usage.PromptTokens != 100 || r.finish != clients.FinishStop {
		t.Errorf("usage %+v finish %q", r.usage, r.finish)
	}

	r = collect(c.Stream(t.Context(), req))
	if r.text != "Half" || r.err == nil || !strings.Contains(r.err.Error(), "stream broke") {
		t.Errorf("text %q error %v", r.text, r.err)
	}
	r = collect(c.Stream(t.Context(), req))
	var ce *clients.Error
	if !errors.As(r.err, &ce) || ce.StatusCode != 429 || len(r.chunks) != 0 {
		t.Errorf("error %v, want a 429 before any chunk", r.err)
	}
	r = collect(c.Stream(t.Context(), req))
	if r.err == nil || !strings.Contains(r.err.Error(), "no turn left") {
		t.Errorf("after the last turn: %v", r.err)
	}
	if got := len(c.Requests()); got != 4 || c.Requests()[0].System != "sys" || c.Remaining() != 0 {
		t.Errorf("%d requests recorded, %d remaining", got, c.Remaining())
	}
}

func TestScriptedCancel(t *testing.T) {
	t.Parallel()
	c := clients.NewScripted(clients.Script{Turns: []clients.Turn{{Text: "wait", Chunks: 1, Hang: true}}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var text string
	var err error
	for ch, e := range c.Stream(ctx, clients.Request{}) {
		if e != nil {
			err = e
			break
		}
		text += ch.Parts[0].Text
		cancel()
	}
	if text != "wait" || !errors.Is(err, context.Canceled) {
		t.Errorf("text %q error %v", text, err)
	}
}

func TestParseScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		turns   int
		wantErr string
	}{
		{"bare array", `[{"text":"a"},{"text":"b"}]`, 2, ""},
		{"object", `{"turns":[{"text":"a"}]}`, 1, ""},
		{"unknown field", `{"turns":[{"txt":"a"}]}`, 0, "txt"},
		{"call without name", `[{"calls":[{"args":{}}]}]`, 0, "no name"},
		{"args not an object", `[{"calls":[{"name":"a","args":[1]}]}]`, 0, "JSON object"},
		{"bad status", `[{"httpError":{"status":200}}]`, 0, "not an HTTP error"},
		{"support outside text", `[{"text":"ab","grounding":{"sources":[{"title":"t","uri":"u"}],"supports":[{"start":0,"end":5,"sources":[0]}]}}]`, 0, "outside the text"},
		{"support citing a missing source", `[{"text":"ab","grounding":{"sources":[],"supports":[{"start":0,"end":1,"sources":[0]}]}}]`, 0, "cites source"},
		{"not JSON", `turns:`, 0, "not a valid script"},
	}
	for _, tt := range tests {
		s, err := clients.ParseScript([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(s.Turns) != tt.turns {
			t.Errorf("%s: %d turns, %v", tt.name, len(s.Turns), err)
		}
	}
	if _, err := clients.LoadScript(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing file loads")
	}
}

func TestTextChunks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		turn clients.Turn
		want []string
	}{
		{clients.Turn{Text: "abcdef"}, []string{"ab", "cd", "ef"}},
		{clients.Turn{Text: "ab"}, []string{"a", "b"}},
		{clients.Turn{Text: "héllo wörld", Chunks: 2}, []string{"héllo", " wörld"}},
		{clients.Turn{Text: ""}, nil},
	}
	for _, tt := range tests {
		if got := tt.turn.TextChunks(); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%q in %d: %q, want %q", tt.turn.Text, tt.turn.Chunks, got, tt.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 15, 4, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"Fri, 02 Jan 2026 15:04:05 GMT", 5 * time.Second, true},
		{"Fri, 02 Jan 2026 15:03:00 GMT", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := clients.ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	body := `{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12.5s"}]}}`
	if d, ok := clients.RetryAfterBody([]byte(body)); !ok || d != 12500*time.Millisecond {
		t.Errorf("RetryInfo: %v, %v", d, ok)
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct{ body, want string }{
		{`{"error":{"code":400,"message":"bad schema","status":"INVALID_ARGUMENT"}}`, "bad schema"},
		{`[{"error":{"code":400,"message":"wrapped"}}]`, "wrapped"},
		{`{"error":"model \"x\" not found, try pulling it first"}`, `model "x" not found, try pulling it first`},
		{`{"message":"plain"}`, "plain"},
		{"Bad Gateway\n", "Bad Gateway"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := clients.ErrorMessage([]byte(tt.body)); got != tt.want {
			t.Errorf("ErrorMessage(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}
