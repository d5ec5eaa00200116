// Package fakeserver is the core that the scripted fake model APIs (fakegemini,
// fakeopenai) share: listening on loopback, handing out the turns of a clients.Script in
// order, recording requests, streaming server-sent events at the script's pace, and
// closing so that hanging turns end. The wire formats stay in the fakes.
package fakeserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/agentls/agentls/clients"
)

// Options configure a Server.
type Options struct {
	// Addr is the address to listen on; empty means "127.0.0.1:0".
	Addr string
	// ChunkDelay pauses between streamed chunks (the script's chunkDelayMs when zero).
	ChunkDelay time.Duration
	// Logger receives a line per request; nil logs nothing.
	Logger *slog.Logger
	// MaxRequestTokens, when positive, is the largest request a model call accepts, in
	// tokens estimated as one per four bytes of the request body (as the fakes count
	// tokens); a larger call is refused with the API's own context-length error, before
	// it consumes a turn, as a real model refuses a request beyond its context window.
	// A turn without scripted usage then reports that estimate as its prompt tokens.
	MaxRequestTokens int
	// Record, when not nil, receives each request as it is recorded, as a line of JSON:
	// how a test outside Go (the fakegemini command's -requests) reads what the model was
	// sent.
	Record io.Writer
}

// ErrorWriter answers a request with an error in a fake's wire format; retryAfter, when
// not empty, goes in a Retry-After header.
type ErrorWriter func(w http.ResponseWriter, status int, message, retryAfter string)

// Server is what the users of a fake see of it: its URL, the requests it recorded, the
// turns left, and Close. A fake embeds it, so that these become the fake's own.
type Server[R any] struct {
	// URL is the server's base URL, e.g. "http://127.0.0.1:41234".
	URL string

	core *Core[R]
}

// Close stops the server, ending hanging turns and open connections.
func (s *Server[R]) Close() {
	c := s.core
	c.closed.Do(func() {
		close(c.done)
		_ = c.srv.Close()
	})
}

// Requests returns the requests received so far, in order.
func (s *Server[R]) Requests() []R {
	c := s.core
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]R(nil), c.requests...)
}

// Remaining is the number of turns not yet consumed.
func (s *Server[R]) Remaining() int {
	c := s.core
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.script.Turns) - c.next
}

// Core is what a fake's handler works with: the script's turns, the record of requests,
// and the writing of answers, events and errors.
type Core[R any] struct {
	name       string
	script     clients.Script
	opts       Options
	writeError ErrorWriter
	srv        *http.Server
	done       chan struct{}
	closed     sync.Once

	mu       sync.Mutex
	next     int
	requests []R
}

// Start validates script, listens on opts.Addr and serves the fake that wrap makes of the
// server and its core, before any request can reach it. name ("fakegemini") prefixes log
// lines and error messages; writeError answers the errors the core finds (an unreadable
// body, an exhausted script, a turn's scripted HTTP error) in the fake's format.
func Start[R any, F http.Handler](name string, script clients.Script, opts Options, writeError ErrorWriter, wrap func(*Server[R], *Core[R]) F) (F, error) {
	var fake F
	if err := script.Validate(); err != nil {
		return fake, err
	}
	addr := cmp.Or(opts.Addr, "127.0.0.1:0")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fake, fmt.Errorf("listening on %s: %w", addr, err)
	}
	if opts.ChunkDelay == 0 {
		opts.ChunkDelay = time.Duration(script.ChunkDelayMS) * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Core[R]{
		name:       name,
		script:     script,
		opts:       opts,
		writeError: writeError,
		done:       make(chan struct{}),
	}
	fake = wrap(&Server[R]{URL: "http://" + ln.Addr().String(), core: c}, c)
	c.srv = &http.Server{Handler: fake, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := c.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.opts.Logger.Error(name+": serving", "err", err)
		}
	}()
	return fake, nil
}

// Must calls newFake with script and no options, and panics if it fails, like
// httptest.NewServer; name prefixes the panic's message. Tests start fakes with it.
func Must[F any](name string, newFake func(clients.Script, Options) (F, error), script clients.Script) F {
	fake, err := newFake(script, Options{})
	if err != nil {
		panic(fmt.Sprintf("%s: %v", name, err))
	}
	return fake
}

// Script is the script being served.
func (c *Core[R]) Script() clients.Script { return c.script }

// Logger is the logger of the options (a discarding one when they had none).
func (c *Core[R]) Logger() *slog.Logger { return c.opts.Logger }

// Record keeps req for Requests (and writes it to Options.Record) and logs it with
// attrs (slog key-value pairs).
func (c *Core[R]) Record(req R, attrs ...any) {
	c.mu.Lock()
	c.requests = append(c.requests, req)
	if c.opts.Record != nil {
		line, err := json.Marshal(req)
		if err == nil {
			_, err = c.opts.Record.Write(append(line, '\n'))
		}
		if err != nil {
			c.opts.Logger.Error(c.name+": recording a request", "err", err)
		}
	}
	c.mu.Unlock()
	c.opts.Logger.Info(c.name+": request", attrs...)
}

// ReadBody reads the request's body; when it cannot, it answers 400 and returns false.
func (c *Core[R]) ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		c.writeError(w, http.StatusBadRequest, "reading the body: "+err.Error(), "")
		return nil, false
	}
	return body, true
}

// EstimateTokens is the fakes' token count of a request body: one token per four bytes,
// roughly what real tokenizers give for English and code.
func EstimateTokens(body []byte) int { return (len(body) + 3) / 4 }

// OverBudget reports whether a model call with body exceeds Options.MaxRequestTokens,
// with the body's estimated tokens and the budget, for the fake's error message.
func (c *Core[R]) OverBudget(body []byte) (tokens, budget int, over bool) {
	tokens, budget = EstimateTokens(body), c.opts.MaxRequestTokens
	return tokens, budget, budget > 0 && tokens > budget
}

// NextTurn consumes the next turn of the script and returns it with its number, from 1;
// the number is 0 when the script has no turn left.
func (c *Core[R]) NextTurn() (clients.Turn, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next >= len(c.script.Turns) {
		return clients.Turn{}, 0
	}
	c.next++
	return c.script.Turns[c.next-1], c.next
}

// WriteTurnError answers with an error when the call has no turn (n is 0: the script is
// exhausted) or the turn scripts an HTTP error, and reports whether it did.
func (c *Core[R]) WriteTurnError(w http.ResponseWriter, t clients.Turn, n int) bool {
	if n == 0 {
		c.writeError(w, http.StatusBadRequest, fmt.Sprintf("%s: the script has no turn left (it has %d turns)", c.name, len(c.script.Turns)), "")
		return true
	}
	if h := t.HTTPError; h != nil {
		c.writeError(w, h.Status, h.Message, h.RetryAfter)
		return true
	}
	return false
}

// WriteJSON answers with v as JSON.
func (c *Core[R]) WriteJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		c.writeError(w, http.StatusInternalServerError, "encoding the answer: "+err.Error(), "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// Stream starts a server-sent-events answer and writes events, pausing the chunk delay
// between them; false when the request or the server ended, or a write failed.
func (c *Core[R]) Stream(ctx context.Context, w http.ResponseWriter, events []any) bool {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for i, e := range events {
		if i > 0 && !c.pause(ctx) {
			return false
		}
		if !c.WriteEvent(w, e) {
			return false
		}
	}
	return true
}

// pause waits the chunk delay; false when the request or the server ended.
func (c *Core[R]) pause(ctx context.Context) bool {
	if c.opts.ChunkDelay <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(c.opts.ChunkDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-c.done:
		return false
	}
}

// WriteEvent writes v as one "data: {json}" event and flushes it; false when it could
// not.
func (c *Core[R]) WriteEvent(w http.ResponseWriter, v any) bool {
	data, err := json.Marshal(v)
	if err != nil {
		c.opts.Logger.Error(c.name+": encoding a chunk", "err", err)
		return false
	}
	return WriteData(w, data)
}

// WriteData writes one "data: …" event of data as it is and flushes it; false when the
// write failed.
func WriteData(w http.ResponseWriter, data []byte) bool {
	if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
		return false
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return true
}

// Hang waits until the request ends or the server closes, for turns scripted to hang.
func (c *Core[R]) Hang(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-c.done:
	}
}

// DecodeBody decodes body, the JSON body of a request received at path.
func DecodeBody[T any](path string, body []byte) (T, error) {
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		return v, fmt.Errorf("decoding the body of %s: %w", path, err)
	}
	return v, nil
}

// Decode decodes, in order, the requests that consumed a turn (for which consumed is
// true).
func Decode[R, T any](reqs []R, consumed func(R) bool, decode func(R) (T, error)) ([]T, error) {
	var out []T
	for _, r := range reqs {
		if !consumed(r) {
			continue
		}
		v, err := decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
