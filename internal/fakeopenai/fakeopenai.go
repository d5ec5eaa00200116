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
// call after the last turn gets a 400 saying the script is exhausted. With
// Options.MaxRequestTokens set, a completion estimated above it gets OpenAI's 400
// context_length_exceeded error and consumes no turn.
//
// Every request is recorded for tests to inspect.
package fakeopenai

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakeserver"
)

// Options configure a Server: the address, the pause between streamed chunks and the
// logger, and the quirks of other servers to imitate.
type Options struct {
	fakeserver.Options
	// IndexlessCalls streams each tool call whole in one delta without an "index", as
	// Gemini's OpenAI-compatible endpoint does.
	IndexlessCalls bool
}

// Server is a running fake endpoint. Its URL is the server's address (clients take
// URL + "/v1" as their base URL); Close, Requests and Remaining come with it from
// fakeserver.Server.
type Server struct {
	*server
	core *fakeserver.Core[Request]
	opts Options
}

// server is what a Server shows of fakeserver's: URL, Close, Requests and Remaining.
type server = fakeserver.Server[Request]

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
	ToolChoice    any       `json:"tool_choice,omitempty"`
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
	return fakeserver.DecodeBody[ChatRequest](r.Path, r.Body)
}

func (r Request) consumed() bool { return r.Turn != 0 }

// Start serves script on a loopback port and panics if it cannot listen, like
// httptest.NewServer; tests call it.
func Start(script clients.Script) *Server { return StartWith(script, Options{}) }

// StartWith serves script with opts on a loopback port and panics if it cannot listen.
func StartWith(script clients.Script, opts Options) *Server {
	srv, err := New(script, opts)
	if err != nil {
		panic("fakeopenai: " + err.Error())
	}
	return srv
}

// New serves script with the given options.
func New(script clients.Script, opts Options) (*Server, error) {
	return fakeserver.Start("fakeopenai", script, opts.Options, writeError, func(s *server, c *fakeserver.Core[Request]) *Server {
		return &Server{server: s, core: c, opts: opts}
	})
}

// ChatRequests returns the completions that consumed a turn, decoded.
func (s *Server) ChatRequests() ([]ChatRequest, error) {
	return fakeserver.Decode(s.Requests(), Request.consumed, Request.Chat)
}

func (s *Server) record(req Request) {
	s.core.Record(req, "method", req.Method, "path", req.Path, "turn", req.Turn, "bytes", len(req.Body))
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := s.core.ReadBody(w, r)
	if !ok {
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.complete(w, r, req)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.record(req)
		s.core.WriteJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{
			"id": cmp.Or(s.core.Script().Model, "scripted"), "object": "model", "created": 0, "owned_by": "fakeopenai",
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
	tokens, budget, over := s.core.OverBudget(req.Body)
	if over {
		s.record(req)
		writeContextError(w, tokens, budget)
		return
	}
	t, n := s.core.NextTurn()
	req.Turn = n
	s.record(req)
	if s.core.WriteTurnError(w, t, n) {
		return
	}
	if t.Usage == nil && budget > 0 {
		t.Usage = &clients.Usage{PromptTokens: tokens}
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
		s.core.WriteJSON(w, resp)
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
	if t.Cut {
		// The stream ends early: no calls, finish reason, usage or [DONE].
		s.core.Stream(r.Context(), w, events)
		return
	}
	for i, c := range calls {
		fn := c["function"].(map[string]any)
		if s.opts.IndexlessCalls {
			events = append(events, chunk(map[string]any{"tool_calls": []any{map[string]any{
				"id": c["id"], "type": "function", "function": fn,
			}}}, nil))
			continue
		}
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

	if !s.core.Stream(r.Context(), w, events) {
		return
	}
	if t.Error != "" {
		s.core.WriteEvent(w, map[string]any{"error": map[string]any{"message": t.Error, "type": "server_error"}})
		return
	}
	if t.Hang {
		s.core.Hang(r.Context())
		return
	}
	if !s.core.WriteEvent(w, chunk(map[string]any{}, finishReason(t, len(calls) > 0))) {
		return
	}
	if chat.StreamOptions != nil && chat.StreamOptions.IncludeUsage {
		u := cmp.Or(t.Usage, &clients.Usage{})
		if !s.core.WriteEvent(w, map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 0, "model": chat.Model,
			"choices": []any{}, "usage": usage(*u),
		}) {
			return
		}
	}
	fakeserver.WriteData(w, []byte("[DONE]"))
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

// writeContextError answers as OpenAI answers a request beyond the model's context
// window.
func writeContextError(w http.ResponseWriter, tokens, budget int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. "+
			"Please reduce the length of the messages.", budget, tokens),
		"type":  "invalid_request_error",
		"param": "messages",
		"code":  "context_length_exceeded",
	}})
	_, _ = w.Write(body)
}
