package rpc

import (
	"context"
	"encoding/json"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// runningServer returns a server initialized on root and running, with no client: for
// tests that call its handlers directly.
func runningServer(tb testing.TB, root string) *Server {
	tb.Helper()
	s := New(Options{ConfigDir: tb.TempDir()})
	if _, err := s.initialize(context.Background(), params(tb, map[string]any{"rootUri": "file://" + root, "capabilities": map[string]any{}})); err != nil {
		tb.Fatal(err)
	}
	s.phase = phaseRunning
	return s
}

// params returns v as the params of a message.
func params(tb testing.TB, v any) jsonrpc2.RawMessage {
	tb.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
