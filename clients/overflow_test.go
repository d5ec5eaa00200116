package clients_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/fakeopenai"
	"github.com/agentls/agentls/internal/fakeserver"
)

// TestIsContextOverflow: a request beyond the context window is told from other
// failures, as the Gemini and OpenAI clients report it from their APIs' own answers.
func TestIsContextOverflow(t *testing.T) {
	t.Parallel()
	big := userText(strings.Repeat("many words ", 400))
	small := userText("hi")
	budget := fakeserver.Options{MaxRequestTokens: 500}

	gsrv, err := fakegemini.New(clients.Script{Turns: []clients.Turn{
		{HTTPError: &clients.ScriptHTTPError{Status: 400, Message: "Request contains an invalid argument."}},
		{HTTPError: &clients.ScriptHTTPError{Status: 429, Message: "Resource has been exhausted (e.g. check quota)."}},
	}}, budget)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gsrv.Close)
	gemini := newGemini(t, gsrv, clients.GeminiOptions{Retry: clients.RetryPolicy{Attempts: 1}})

	osrv := fakeopenai.StartWith(clients.Script{Turns: []clients.Turn{
		{HTTPError: &clients.ScriptHTTPError{Status: 400, Message: "Invalid 'messages': empty array."}},
	}}, fakeopenai.Options{Options: budget})
	t.Cleanup(osrv.Close)
	openai := newOpenAI(t, osrv, clients.OpenAIOptions{Retry: clients.RetryPolicy{Attempts: 1}})

	tests := []struct {
		name    string
		client  clients.Client
		content clients.Content
		want    bool
	}{
		{"gemini, too large", gemini, big, true},
		{"gemini, another 400", gemini, small, false},
		{"gemini, 429", gemini, small, false},
		{"openai, too large", openai, big, true},
		{"openai, another 400", openai, small, false},
	}
	for _, tt := range tests {
		r := collect(tt.client.Stream(t.Context(), clients.Request{History: []clients.Content{tt.content}}))
		if r.err == nil {
			t.Fatalf("%s: no error", tt.name)
		}
		if got := clients.IsContextOverflow(r.err); got != tt.want {
			t.Errorf("%s: IsContextOverflow(%v) = %v, want %v", tt.name, r.err, got, tt.want)
		}
		if wrapped := fmt.Errorf("model: %w", r.err); clients.IsContextOverflow(wrapped) != tt.want {
			t.Errorf("%s: not seen through wrapping", tt.name)
		}
	}
	// Only a server's answer counts, not any text that says so.
	if clients.IsContextOverflow(errors.New("the input token count exceeds the maximum number of tokens")) {
		t.Error("a plain error taken for a context overflow")
	}
}
