package clients_test

import (
	"context"
	"encoding/json"
	"iter"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
)

// result is everything a stream yielded.
type result struct {
	chunks     []clients.Chunk
	parts      []clients.Part
	text       string
	thought    string
	textChunks int
	calls      []clients.FunctionCall
	usage      *clients.Usage
	finish     string
	err        error
}

func collect(seq iter.Seq2[clients.Chunk, error]) result {
	var r result
	var text, thought strings.Builder
	for c, err := range seq {
		if err != nil {
			r.err = err
			break
		}
		r.chunks = append(r.chunks, c)
		for _, p := range c.Parts {
			r.parts = append(r.parts, p)
			switch {
			case p.FunctionCall != nil:
				r.calls = append(r.calls, *p.FunctionCall)
			case p.Thought:
				thought.WriteString(p.Text)
			case p.Text != "":
				r.textChunks++
				text.WriteString(p.Text)
			}
		}
		if c.Usage != nil {
			if r.usage != nil {
				panic("usage reported twice")
			}
			r.usage = c.Usage
		}
		if c.FinishReason != "" {
			r.finish = c.FinishReason
		}
	}
	r.text, r.thought = text.String(), thought.String()
	return r
}

// modelContent is the model's turn as the session keeps it: every part as received.
func (r result) modelContent() clients.Content {
	return clients.Content{Role: clients.RoleModel, Parts: r.parts}
}

// sleeps records the retry waits instead of sleeping.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// closedURL is the URL of a loopback port nobody listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("not JSON: %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("not JSON: %s: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}

func userText(s string) clients.Content {
	return clients.Content{Role: clients.RoleUser, Parts: []clients.Part{{Text: s}}}
}

var readFileDecl = clients.Declaration{
	Name:        "read_file",
	Description: "Reads a file.",
	Parameters:  json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"absolute_path":{"type":"string"}},"required":["absolute_path"]}`),
}

// cancelAfterFirstChunk streams a request from c and cancels it as soon as the first
// chunk arrives, while the server holds the stream open; it returns what arrived and
// the error the stream ended with, or fails the test if the stream does not stop.
func cancelAfterFirstChunk(t *testing.T, c clients.Client) result {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan result, 1)
	go func() {
		var r result
		for ch, err := range c.Stream(ctx, clients.Request{History: []clients.Content{userText("hi")}}) {
			if err != nil {
				r.err = err
				break
			}
			for _, p := range ch.Parts {
				r.text += p.Text
			}
			cancel()
		}
		done <- r
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the stream did not stop after the cancellation")
		return result{}
	}
}
