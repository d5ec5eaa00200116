package clients_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testutil"
)

// TestErrorsRedactBaseURL checks that the secrets of a base URL (the password of its
// userinfo, a key in its query) appear in no error of a client, whose messages name the
// URL so that a person knows which endpoint failed.
func TestErrorsRedactBaseURL(t *testing.T) {
	t.Parallel()
	notFound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"no such model"}}`, http.StatusNotFound)
	}))
	t.Cleanup(notFound.Close)
	withSecrets := func(base string) string {
		return strings.Replace(base, "http://", "http://user:hunter2@", 1) + "/v1?api_key=SECRET&x=1"
	}
	for _, tt := range []struct {
		name, base, want string
	}{
		{"connection refused", withSecrets(closedURL(t)), "connection refused"},
		{"not found", withSecrets(notFound.URL), "not found at"},
	} {
		newClients := map[string]func() (clients.Client, error){
			"openai": func() (clients.Client, error) {
				return clients.NewOpenAI(clients.OpenAIOptions{Model: "m", BaseURL: tt.base, APIKey: "sk-test-0123456789"})
			},
			"gemini": func() (clients.Client, error) {
				return clients.NewGemini(t.Context(), clients.GeminiOptions{APIKey: testKey, BaseURL: tt.base})
			},
		}
		for kind, newClient := range newClients {
			c, err := newClient()
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			r := collect(c.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
			if r.err == nil {
				t.Errorf("%s, %s: no error", kind, tt.name)
				continue
			}
			msg := r.err.Error()
			if strings.Contains(msg, "hunter2") || strings.Contains(msg, "SECRET") {
				t.Errorf("%s, %s: the error shows the base URL's secrets: %s", kind, tt.name, msg)
			}
			if !strings.Contains(msg, tt.want) || !strings.Contains(msg, "api_key=xxxxx") {
				t.Errorf("%s, %s: error %q, want it to say %q and name the URL", kind, tt.name, msg, tt.want)
			}
			var ce *clients.Error
			if !errors.As(r.err, &ce) {
				t.Errorf("%s, %s: %T is not a *clients.Error", kind, tt.name, r.err)
			}
		}
	}
}

// TestRetriesLogged checks that each retry of a busy endpoint is logged through the
// client's Logger, naming the URL with its secrets masked and never the key.
func TestRetriesLogged(t *testing.T) {
	t.Parallel()
	busy := clients.Turn{HTTPError: &clients.ScriptHTTPError{Status: 503, Message: "overloaded", RetryAfter: "0"}}
	ok := clients.Turn{Text: "recovered"}
	const key = "sk-test-0123456789"
	withSecrets := func(base string) string {
		return strings.Replace(base, "http://", "http://user:hunter2@", 1)
	}
	newClients := map[string]func(log *slog.Logger) (clients.Client, string){
		"openai": func(log *slog.Logger) (clients.Client, string) {
			srv := startOpenAI(t, busy, ok)
			c, err := clients.NewOpenAI(clients.OpenAIOptions{Model: "m", BaseURL: withSecrets(srv.URL) + "/v1", APIKey: key, Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			return c, srv.URL
		},
		"gemini": func(log *slog.Logger) (clients.Client, string) {
			srv := startGemini(t, busy, ok)
			c, err := clients.NewGemini(t.Context(), clients.GeminiOptions{APIKey: key, BaseURL: withSecrets(srv.URL), Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			return c, srv.URL
		},
	}
	for kind, newClient := range newClients {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var buf testutil.Buffer
			c, url := newClient(slog.New(slog.NewTextHandler(&buf, nil)))
			r := collect(c.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}))
			if r.err != nil || r.text != "recovered" {
				t.Fatalf("got %q, %v; want the retried answer", r.text, r.err)
			}
			log := buf.String()
			t.Logf("log:\n%s", log)
			host := strings.TrimPrefix(url, "http://")
			if !strings.Contains(log, "retrying") || !strings.Contains(log, "status=503") ||
				!strings.Contains(log, "url=") || !strings.Contains(log, "http://user:xxxxx@"+host+"/") {
				t.Errorf("log %q, want a retry of a 503 naming the URL %s with its password masked", log, url)
			}
			if strings.Contains(log, "hunter2") || strings.Contains(log, key) {
				t.Errorf("the log shows a secret: %s", log)
			}
		})
	}
}
