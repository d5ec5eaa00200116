package mcp

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
)

// TestUnreachableServerURLRedacted checks that the secrets of a server's URL (the
// password of its userinfo, a token in its query) appear in none of what agentls says
// about a server it cannot reach: its status, the errors of its tools and of a
// reconnection, and the log, the SDK's records included.
func TestUnreachableServerURLRedacted(t *testing.T) {
	t.Parallel()
	secrets := []string{"hunter2", "SECRET"}
	for _, kind := range []string{"http", "sse"} {
		t.Run(kind, func(t *testing.T) {
			var logs testutil.Buffer
			var mu sync.Mutex
			var statuses []ServerStatus
			cfg := ServerConfig{URL: "http://user:hunter2@127.0.0.1:1/mcp?token=SECRET&x=1", Timeout: 5000}
			if kind == "sse" {
				cfg.Type = "sse"
			}
			m := startManager(t, Options{
				Servers: map[string]ServerConfig{"remote": cfg},
				Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				OnStatus: func(st ServerStatus) {
					mu.Lock()
					statuses = append(statuses, st)
					mu.Unlock()
				},
			})
			st := requireState(t, m, "remote", StateError)
			if !strings.Contains(st.Error, "could not be reached") || !strings.Contains(st.Error, "token=xxxxx") {
				t.Errorf("status error %q, want it to say which URL could not be reached", st.Error)
			}
			err := m.Reconnect(t.Context(), "remote")
			if err == nil {
				t.Fatal("Reconnect to a closed port succeeded")
			}
			var texts []string
			for e := err; e != nil; e = errors.Unwrap(e) {
				texts = append(texts, e.Error())
			}
			_, err = m.servers["remote"].session(t.Context()) // within the backoff
			texts = append(texts, err.Error())
			mu.Lock()
			for _, st := range statuses {
				texts = append(texts, st.Error)
			}
			mu.Unlock()
			texts = append(texts, logs.String())
			all := strings.Join(texts, "\n")
			for _, s := range secrets {
				if strings.Contains(all, s) {
					t.Errorf("%q is shown:\n%s", s, all)
				}
			}
			if !strings.Contains(logs.String(), "MCP server failed to connect") {
				t.Errorf("the log lacks the failure:\n%s", logs.String())
			}
		})
	}
}
