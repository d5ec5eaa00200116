// Package fakeopenai is a scripted stand-in for an OpenAI-compatible chat completions
// endpoint on loopback, for tests of agentls's OpenAI client.
//
// It answers POST …/chat/completions (streamed as server-sent events ending with
// "data: [DONE]", or as one JSON answer) and GET …/models, under any path prefix ("/v1"
// as OpenAI, Ollama and vLLM use it). Each completion consumes the next turn of a
// clients.Script: reasoning streams as "reasoning_content" deltas, the text in pieces,
// each tool call as a first delta with its id and name and then its arguments split over
// several deltas; a last chunk carries the finish reason, and, when the request asked
// through stream_options.include_usage, a chunk without choices carries the usage. A
// call after the last turn gets a 400 saying the script is exhausted.
//
// Every request is recorded for tests to inspect.
package fakeopenai

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
	"strings"
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
}

// Server is a running fake endpoint.
type Server struct {
	// URL is the server's address; clients take URL + "/v1" as their base URL.
	URL string

	script clients.Script
	opts   Options
	srv    *http.Server
	done   chan struct{}
	closed sync.Once

	mu       sync.Mutex
	next     int
	requests []Request
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   json.RawMessage
	// Turn is the script turn (from 1) the request consumed; 0 when it consumed none.
	Turn int
}

// ChatRequest is a chat completions request body as the wire carries it.
type ChatRequest struct {
	Model         string    `json:"model"`
	Messages      []Message `json:"messages"`
	Tools         []Tool    `json:"tools,omitempty"`
	Stream        bool      `json:"stream,omitempty"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
}

// Message is a chat message; Content is a string or an array of parts, as sent.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// Text returns the message's text: the string content, or its text parts joined.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// ToolCall is a tool call of an assistant message.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a declared function of a request.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// Chat decodes the body of a chat completions request.
func (r Request) Chat() (ChatRequest, error) {
	var c ChatRequest
	if err := json.Unmarshal(r.Body, &c); err != nil {
		return c, fmt.Errorf("decoding the body of %s: %w", r.Path, err)
	}
	return c, nil
}

// Start serves script on a loopback port and panics if it cannot listen, like
// httptest.NewServer; tests call it.
func Start(script clients.Script) *Server {
	s, err := New(script, Options{})
	if err != nil {
		panic(fmt.Sprintf("fakeopenai: %v", err))
	}
	return s
}

// New serves script with the given options.
func New(script clients.Script, opts Options) (*Server, error) {
	if err := script.Validate(); err != nil {
		return nil, err
	}
	addr := cmp.Or(opts.Addr, "127.0.0.1:0")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	if opts.ChunkDelay == 0 {
		opts.ChunkDelay = time.Duration(script.ChunkDelayMS) * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script, opts: opts, done: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.opts.Logger.Error("fakeopenai: serving", "err", err)
		}
	}()
	return s, nil
}

// Close stops the server, ending hanging turns and open connections.
func (s *Server) Close() {
	s.closed.Do(func() {
		close(s.done)
		_ = s.srv.Close()
	})
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ChatRequests returns the completions that consumed a turn, decoded.
func (s *Server) ChatRequests() ([]ChatRequest, error) {
	var out []ChatRequest
	for _, r := range s.Requests() {
		if r.Turn == 0 {
			continue
		}
		c, err := r.Chat()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Remaining is the number of turns not yet consumed.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Turns) - s.next
}

func (s *Server) record(req Request) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	s.opts.Logger.Info("fakeopenai: request", "method", req.Method, "path", req.Path, "turn", req.Turn, "bytes", len(req.Body))
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading the body: "+err.Error(), "")
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.complete(w, r, req)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.record(req)
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{
			"id": cmp.Or(s.script.Model, "scripted"), "object": "model", "created": 0, "owned_by": "fakeopenai",
		}}})
	default:
		s.record(req)
		writeError(w, http.StatusNotFound, fmt.Sprintf("fakeopenai serves no %s %s", r.Method, r.URL.Path), "")
	}
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request, req Request) {
	var chat ChatRequest
	if err := json.Unmarshal(req.Body, &chat); err != nil {
		s.record(req)
		writeError(w, http.StatusBadRequest, "the body is not JSON: "+err.Error(), "")
		return
	}
	s.mu.Lock()
	n := s.next
	if n < len(s.script.Turns) {
		s.next++
		req.Turn = n + 1
	}
	s.mu.Unlock()
	s.record(req)
	if req.Turn == 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("fakeopenai: the script has no turn left (it has %d turns)", len(s.script.Turns)), "")
		return
	}
	t := s.script.Turns[n]
	if h := t.HTTPError; h != nil {
		writeError(w, h.Status, h.Message, h.RetryAfter)
		return
	}
	id := fmt.Sprintf("chatcmpl-%d", req.Turn)
	calls := toolCalls(req.Turn, t)
	if !chat.Stream {
		msg := map[string]any{"role": "assistant", "content": t.Text}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		if t.Thought != "" {
			msg["reasoning_content"] = t.Thought
		}
		resp := map[string]any{
			"id": id, "object": "chat.completion", "created": 0, "model": chat.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(t, len(calls) > 0)}},
		}
		if t.Usage != nil {
			resp["usage"] = usage(*t.Usage)
		}
		writeJSON(w, resp)
		return
	}

	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 0, "model": chat.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	events := []any{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	if t.Thought != "" {
		events = append(events, chunk(map[string]any{"reasoning_content": t.Thought}, nil))
	}
	for _, piece := range t.TextChunks() {
		events = append(events, chunk(map[string]any{"content": piece}, nil))
	}
	for i, c := range calls {
		fn := c["function"].(map[string]any)
		events = append(events, chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""},
		}}}, nil))
		for _, piece := range (clients.Turn{Text: fn["arguments"].(string), Chunks: 3}).TextChunks() {
			events = append(events, chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": piece},
			}}}, nil))
		}
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for i, e := range events {
		if i > 0 && !s.pause(r.Context()) {
			return
		}
		if !s.writeEvent(w, e) {
			return
		}
	}
	if t.Error != "" {
		s.writeEvent(w, map[string]any{"error": map[string]any{"message": t.Error, "type": "server_error"}})
		return
	}
	if t.Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	if !s.writeEvent(w, chunk(map[string]any{}, finishReason(t, len(calls) > 0))) {
		return
	}
	if chat.StreamOptions != nil && chat.StreamOptions.IncludeUsage {
		u := cmp.Or(t.Usage, &clients.Usage{})
		if !s.writeEvent(w, map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 0, "model": chat.Model,
			"choices": []any{}, "usage": usage(*u),
		}) {
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// toolCalls renders the turn's calls as the wire has them; ids are made up when the
// script gives none.
func toolCalls(turn int, t clients.Turn) []map[string]any {
	out := make([]map[string]any, 0, len(t.Calls))
	for i, c := range t.Calls {
		id := cmp.Or(c.ID, fmt.Sprintf("call_%d_%d", turn, i+1))
		out = append(out, map[string]any{
			"id": id, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": cmp.Or(string(c.Args), "{}")},
		})
	}
	return out
}

func finishReason(t clients.Turn, calls bool) string {
	switch t.FinishReason {
	case "":
		if calls {
			return "tool_calls"
		}
		return "stop"
	case clients.FinishMaxTokens:
		return "length"
	case clients.FinishSafety:
		return "content_filter"
	default:
		return strings.ToLower(t.FinishReason)
	}
}

func usage(u clients.Usage) map[string]any {
	m := map[string]any{
		"prompt_tokens":     u.PromptTokens,
		"completion_tokens": u.OutputTokens,
		"total_tokens":      cmp.Or(u.TotalTokens, u.PromptTokens+u.OutputTokens),
	}
	if u.ThoughtTokens > 0 {
		m["completion_tokens_details"] = map[string]any{"reasoning_tokens": u.ThoughtTokens}
	}
	return m
}

func (s *Server) pause(ctx context.Context) bool {
	if s.opts.ChunkDelay <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(s.opts.ChunkDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

func (s *Server) writeEvent(w http.ResponseWriter, v any) bool {
	data, err := json.Marshal(v)
	if err != nil {
		s.opts.Logger.Error("fakeopenai: encoding a chunk", "err", err)
		return false
	}
	if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
		return false
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encoding the answer: "+err.Error(), "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// writeError answers with an OpenAI error body.
func writeError(w http.ResponseWriter, status int, message, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status >= 500:
		typ = "server_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "code": nil, "param": nil}})
	_, _ = w.Write(body)
}
