package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakeopenai"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/settings"
)

// TestModelClientsLogRetries checks that the model clients of a process log through its
// logger, so that an endpoint's retries show in agentls serve's --log-file.
func TestModelClientsLogRetries(t *testing.T) {
	t.Parallel()
	srv := fakeopenai.Start(clients.Script{Turns: []clients.Turn{
		{HTTPError: &clients.ScriptHTTPError{Status: 429, Message: "slow down", RetryAfter: "0"}},
		{Text: "recovered"},
	}})
	t.Cleanup(srv.Close)
	var buf testutil.Buffer
	newClient := modelClients(slog.New(slog.NewTextHandler(&buf, nil)))
	var s settings.Settings
	s.Provider = settings.ProviderSettings{Type: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-test-key"}
	s.Model.Name = "m"
	c, err := newClient(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for chunk, err := range c.Stream(t.Context(), clients.Request{History: []clients.Content{{Role: clients.RoleUser, Parts: []clients.Part{{Text: "hi"}}}}}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range chunk.Parts {
			text.WriteString(p.Text)
		}
	}
	if text.String() != "recovered" {
		t.Errorf("answer %q, want the retried one", text.String())
	}
	if log := buf.String(); !strings.Contains(log, "retrying") || !strings.Contains(log, "status=429") {
		t.Errorf("log %q, want the retry of the 429", log)
	}
}
