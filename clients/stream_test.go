package clients_test

import (
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/agentls/agentls/clients"
)

// bodies is a transport that counts the response bodies it handed out and that were
// closed, to check that a client releases its connection.
type bodies struct {
	mu             sync.Mutex
	opened, closed int
}

func (b *bodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.opened++
	b.mu.Unlock()
	resp.Body = &countedBody{ReadCloser: resp.Body, b: b}
	return resp, nil
}

func (b *bodies) open() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.opened - b.closed
}

type countedBody struct {
	io.ReadCloser
	b    *bodies
	once sync.Once
}

func (c *countedBody) Close() error {
	c.once.Do(func() {
		c.b.mu.Lock()
		c.b.closed++
		c.b.mu.Unlock()
	})
	return c.ReadCloser.Close()
}

// TestStreamStopsWhenTheCallerStops: a caller that breaks out of the range loop after
// the first chunk, while the server holds the stream open, gets control back at once
// and the response body is closed by then, for every client.
func TestStreamStopsWhenTheCallerStops(t *testing.T) {
	t.Parallel()
	turn := clients.Turn{Text: "first chunk, then the server waits", Chunks: 1, Hang: true}
	tests := []struct {
		name string
		make func(t *testing.T, tr http.RoundTripper) clients.Client
	}{
		{"gemini", func(t *testing.T, tr http.RoundTripper) clients.Client {
			return newGemini(t, startGemini(t, turn), clients.GeminiOptions{Transport: tr})
		}},
		{"openai", func(t *testing.T, tr http.RoundTripper) clients.Client {
			return newOpenAI(t, startOpenAI(t, turn), clients.OpenAIOptions{Transport: tr})
		}},
		{"text mode over openai", func(t *testing.T, tr http.RoundTripper) clients.Client {
			return clients.NewTextMode(newOpenAI(t, startOpenAI(t, turn), clients.OpenAIOptions{Transport: tr}))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := &bodies{}
			c := tt.make(t, b)
			n := 0
			for _, err := range c.Stream(t.Context(), clients.Request{History: []clients.Content{userText("hi")}}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				break
			}
			if n != 1 {
				t.Fatalf("%d chunks before the break", n)
			}
			if open := b.open(); open != 0 || b.opened == 0 {
				t.Errorf("%d of %d response bodies still open after the caller stopped", open, b.opened)
			}
		})
	}
}
