package clients_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
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
