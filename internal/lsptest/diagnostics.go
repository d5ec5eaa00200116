package lsptest

import (
	"context"
	"encoding/json"
	"fmt"
)

// Diagnostic is an LSP diagnostic as the server published it.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity"`
	Source   string          `json:"source"`
	Message  string          `json:"message"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// Diagnostic severities.
const (
	SeverityError       = 1
	SeverityWarning     = 2
	SeverityInformation = 3
	SeverityHint        = 4
)

// PublishedDiagnostics are the params of textDocument/publishDiagnostics.
type PublishedDiagnostics struct {
	URI         string       `json:"uri"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// Diagnostics returns the diagnostics the server last published for uri (nil if none
// were ever published).
func (c *Client) Diagnostics(uri string) []Diagnostic {
	var last []Diagnostic
	for _, m := range c.Received("textDocument/publishDiagnostics") {
		var p PublishedDiagnostics
		if json.Unmarshal(m.Params, &p) == nil && p.URI == uri {
			last = p.Diagnostics
		}
	}
	return last
}

// WaitDiagnostics waits until the server publishes diagnostics for uri for which match
// is true, considering only what it publishes from the after-th publishDiagnostics
// notification on (0: from the start), and returns them with the number of
// publishDiagnostics notifications received by then.
func (c *Client) WaitDiagnostics(ctx context.Context, uri string, after int, match func([]Diagnostic) bool) ([]Diagnostic, int, error) {
	n := 0
	var found []Diagnostic
	_, err := c.WaitFor(ctx, "textDocument/publishDiagnostics", func(m Message) bool {
		n++
		if n <= after {
			return false
		}
		var p PublishedDiagnostics
		if json.Unmarshal(m.Params, &p) != nil || p.URI != uri || !match(p.Diagnostics) {
			return false
		}
		found = p.Diagnostics
		return true
	})
	if err != nil {
		return nil, n, fmt.Errorf("diagnostics of %s: %w (last published: %+v)", uri, err, c.Diagnostics(uri))
	}
	return found, n, nil
}
