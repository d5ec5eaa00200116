// Package fakegemini is a scripted stand-in for the Gemini API on loopback, speaking its
// REST and server-sent-events formats, for tests of agentls's Gemini client and for
// benchmarks that point real programs (Gemini CLI, through GOOGLE_GEMINI_BASE_URL) at
// it.
//
// It answers
//
//	POST /{version}/models/{model}:streamGenerateContent?alt=sse  (lines "data: {json}" only)
//	POST /{version}/models/{model}:generateContent
//	POST /{version}/models/{model}:countTokens
//	GET  /{version}/models and /{version}/models/{model}
//
// (Vertex AI paths, …/publishers/google/models/{model}:…, work too). Each generate call
// consumes the next turn of a clients.Script, except side calls: a call whose
// generationConfig asks for JSON (responseMimeType "application/json", or a response
// schema) is answered, without consuming a turn, with the smallest JSON value its schema
// allows (first enum values, "" strings, 0 numbers, false, empty arrays, objects with
// their required properties). Gemini CLI makes such calls to decide who speaks next, to
// route between models and to check for loops; the first enum values make it hand the
// turn back to the user, pick flash, and see no loop. countTokens estimates one token per
// four characters of the request's text. A generate call after the last turn gets a 400
// saying the script is exhausted. With Options.MaxRequestTokens set, a generate call
// estimated above it gets the 400 the real API gives a request beyond the model's
// context window ("The input token count (N) exceeds the maximum number of tokens
// allowed (M).") and consumes no turn. A turn whose finish reason starts with "BLOCKED:"
// is a refused prompt: the answer has no candidate, only promptFeedback with the block
// reason that follows the colon, as the real API sends it.
//
// Every request is recorded for tests to inspect, and logged; a generate call's log line
// gives the bytes of its system instruction, tool entries and contents, and how many
// functions it declares, which benchmarks read (bench/agent.sh).
package fakegemini

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakeserver"
)

// Options configure a Server: the address, the pause between streamed chunks and the
// logger.
type Options = fakeserver.Options

// Server is a running fake Gemini API. Its URL, e.g. "http://127.0.0.1:41234", is the
// base URL to give the client; Close, Requests and Remaining come with it from
// fakeserver.Server.
type Server struct {
	*server
	core *fakeserver.Core[Request]
}

// server is what a Server shows of fakeserver's: URL, Close, Requests and Remaining.
type server = fakeserver.Server[Request]

// Request is a request the server received.
type Request struct {
	Method string
	// Path is the URL path, e.g. "/v1beta/models/gemini-2.5-flash:streamGenerateContent".
	Path  string
	Query string
	// Model and Action are read from the path ("gemini-2.5-flash",
	// "streamGenerateContent"); empty for other paths.
	Model  string
	Action string
	Header http.Header
	Body   json.RawMessage
	// Turn is the script turn (from 1) the request consumed; 0 when it consumed none.
	Turn int
	// Side tells a JSON side call, answered without consuming a turn.
	Side bool
	// Rejected tells a generate call refused for exceeding Options.MaxRequestTokens.
	Rejected bool
}

// Start serves script on a loopback port and panics if it cannot listen, like
// httptest.NewServer; tests call it.
func Start(script clients.Script) *Server { return fakeserver.Must("fakegemini", New, script) }

// New serves script with the given options.
func New(script clients.Script, opts Options) (*Server, error) {
	return fakeserver.Start("fakegemini", script, opts, writeError, func(s *server, c *fakeserver.Core[Request]) *Server {
		return &Server{server: s, core: c}
	})
}

// GenerateRequest is a generateContent request body as the wire carries it.
type GenerateRequest struct {
	Contents          []Content       `json:"contents"`
	SystemInstruction *Content        `json:"systemInstruction,omitempty"`
	Tools             []Tool          `json:"tools,omitempty"`
	ToolConfig        json.RawMessage `json:"toolConfig,omitempty"`
	GenerationConfig  json.RawMessage `json:"generationConfig,omitempty"`
}

// Content is a turn of a request's history.
type Content struct {
	Role  string `json:"role,omitempty"`
	Parts []Part `json:"parts"`
}

// Part is a part of a request's content. ThoughtSignature keeps the base64 text as sent.
type Part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
}

// FunctionCall is a call in a request's model turn.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// FunctionResponse is a tool result in a request's user turn.
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response,omitempty"`
	Parts    []struct {
		InlineData *Blob `json:"inlineData,omitempty"`
	} `json:"parts,omitempty"`
}

// Blob is inline data; Data is the base64 text as sent.
type Blob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

// Tool is a tool entry of a request.
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations,omitempty"`
	GoogleSearch         json.RawMessage       `json:"googleSearch,omitempty"`
}

// FunctionDeclaration is a declared function of a request.
type FunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
}

// Generate decodes the body of a generate call.
func (r Request) Generate() (GenerateRequest, error) {
	return fakeserver.DecodeBody[GenerateRequest](r.Path, r.Body)
}

func (r Request) consumed() bool { return r.Turn != 0 }

// GenerateRequests returns the generate calls that consumed a turn, decoded.
func (s *Server) GenerateRequests() ([]GenerateRequest, error) {
	return fakeserver.Decode(s.Requests(), Request.consumed, Request.Generate)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := s.core.ReadBody(w, r)
	if !ok {
		return
	}
	req := Request{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
		Body:   body,
	}
	req.Model, req.Action = parsePath(r.URL.Path)

	switch {
	case r.Method == http.MethodPost && (req.Action == "generateContent" || req.Action == "streamGenerateContent"):
		s.generate(w, r, req)
	case r.Method == http.MethodPost && req.Action == "countTokens":
		s.record(req)
		s.countTokens(w, body)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.record(req)
		s.core.WriteJSON(w, map[string]any{"models": []any{modelInfo(cmp.Or(s.core.Script().Model, clients.DefaultGeminiModel))}})
	case r.Method == http.MethodGet && req.Model != "" && req.Action == "":
		s.record(req)
		s.core.WriteJSON(w, modelInfo(req.Model))
	default:
		s.record(req)
		s.core.Logger().Warn("fakegemini: unknown endpoint", "method", r.Method, "path", r.URL.Path)
		writeError(w, http.StatusNotFound, fmt.Sprintf("fakegemini serves no %s %s", r.Method, r.URL.Path), "")
	}
}

func (s *Server) record(req Request) {
	attrs := []any{"method", req.Method, "path", req.Path,
		"turn", req.Turn, "side", req.Side, "bytes", len(req.Body)}
	if req.Action == "generateContent" || req.Action == "streamGenerateContent" {
		attrs = append(attrs, parts(req.Body)...)
	}
	s.core.Record(req, attrs...)
}

// parts returns, for the log of a generate call, the bytes of its parts as sent: the
// system instruction, the tool entries and the contents (the history), and the number
// of function declarations. Benchmarks read what a request carries from them.
func parts(body []byte) []any {
	var b struct {
		SystemInstruction json.RawMessage `json:"systemInstruction"`
		Tools             json.RawMessage `json:"tools"`
		Contents          json.RawMessage `json:"contents"`
	}
	var t struct {
		Tools []Tool `json:"tools"`
	}
	if json.Unmarshal(body, &b) != nil || json.Unmarshal(body, &t) != nil {
		return nil
	}
	decls := 0
	for _, tool := range t.Tools {
		decls += len(tool.FunctionDeclarations)
	}
	return []any{"system_bytes", len(b.SystemInstruction), "tools_bytes", len(b.Tools),
		"contents_bytes", len(b.Contents), "declarations", decls}
}

// parsePath finds the model and the action in ".../models/{model}:{action}".
func parsePath(path string) (model, action string) {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "", ""
	}
	rest := path[i+len("/models/"):]
	if strings.Contains(rest, "/") {
		return "", ""
	}
	model, action, _ = strings.Cut(rest, ":")
	return model, action
}

func modelInfo(model string) map[string]any {
	return map[string]any{
		"name":                       "models/" + model,
		"displayName":                model,
		"inputTokenLimit":            clients.GeminiContextWindow(model),
		"outputTokenLimit":           65536,
		"supportedGenerationMethods": []string{"generateContent", "countTokens"},
	}
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request, req Request) {
	var body struct {
		GenerationConfig struct {
			ResponseMIMEType   string         `json:"responseMimeType"`
			ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
			ResponseSchema     map[string]any `json:"responseSchema"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		s.record(req)
		writeError(w, http.StatusBadRequest, "the body is not JSON: "+err.Error(), "")
		return
	}
	tokens, budget, over := s.core.OverBudget(req.Body)
	if over {
		req.Rejected = true
		s.record(req)
		writeError(w, http.StatusBadRequest, fmt.Sprintf(
			"The input token count (%d) exceeds the maximum number of tokens allowed (%d).", tokens, budget), "")
		return
	}
	stream := req.Action == "streamGenerateContent"
	gc := body.GenerationConfig
	if gc.ResponseMIMEType == "application/json" || gc.ResponseJSONSchema != nil || gc.ResponseSchema != nil {
		req.Side = true
		s.record(req)
		schema := gc.ResponseJSONSchema
		if schema == nil {
			schema = gc.ResponseSchema
		}
		text, _ := json.Marshal(minimalValue(schema))
		resp := response(req.Model, []map[string]any{{"text": string(text)}}, "STOP", &clients.Usage{}, nil)
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
			s.core.WriteEvent(w, resp)
			return
		}
		s.core.WriteJSON(w, resp)
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
	chunks := turnChunks(req.Model, t)
	if !stream {
		s.core.WriteJSON(w, merge(chunks))
		return
	}
	events := make([]any, len(chunks))
	for i, c := range chunks {
		events[i] = c
	}
	if !s.core.Stream(r.Context(), w, events) {
		return
	}
	if t.Error != "" {
		s.core.WriteEvent(w, map[string]any{"error": map[string]any{"code": 500, "message": t.Error, "status": "INTERNAL"}})
		return
	}
	if t.Hang {
		s.core.Hang(r.Context())
	}
}

// turnChunks renders a turn as the streamed responses Gemini would send: the thought,
// the text pieces, the calls together; the finish reason, usage and grounding ride on
// the last.
func turnChunks(model string, t clients.Turn) []map[string]any {
	if reason, ok := strings.CutPrefix(t.FinishReason, clients.FinishBlocked+":"); ok {
		return []map[string]any{{
			"promptFeedback": map[string]any{"blockReason": reason},
			"usageMetadata":  map[string]any{"promptTokenCount": cmp.Or(t.Usage, &clients.Usage{}).PromptTokens},
			"modelVersion":   model,
		}}
	}
	var partsByChunk [][]map[string]any
	if t.Thought != "" {
		partsByChunk = append(partsByChunk, []map[string]any{{"text": t.Thought, "thought": true}})
	}
	for _, piece := range t.TextChunks() {
		partsByChunk = append(partsByChunk, []map[string]any{{"text": piece}})
	}
	if t.Cut {
		// The stream ends early: no calls, and no chunk with a finish reason or usage.
		if len(partsByChunk) == 0 {
			partsByChunk = append(partsByChunk, []map[string]any{{"text": ""}})
		}
		out := make([]map[string]any, len(partsByChunk))
		for i, parts := range partsByChunk {
			out[i] = response(model, parts, "", nil, nil)
		}
		return out
	}
	var calls []map[string]any
	for _, c := range t.Calls {
		fc := map[string]any{"name": c.Name, "args": json.RawMessage(cmp.Or(string(c.Args), "{}"))}
		if c.ID != "" {
			fc["id"] = c.ID
		}
		calls = append(calls, map[string]any{"functionCall": fc})
	}
	if len(calls) > 0 {
		partsByChunk = append(partsByChunk, calls)
	}
	if len(partsByChunk) == 0 {
		partsByChunk = append(partsByChunk, []map[string]any{{"text": ""}})
	}
	if t.ThoughtSignature != "" {
		if len(calls) > 0 {
			calls[0]["thoughtSignature"] = t.ThoughtSignature
		} else {
			last := partsByChunk[len(partsByChunk)-1]
			last[len(last)-1]["thoughtSignature"] = t.ThoughtSignature
		}
	}
	out := make([]map[string]any, len(partsByChunk))
	for i, parts := range partsByChunk {
		if i < len(partsByChunk)-1 {
			out[i] = response(model, parts, "", nil, nil)
			continue
		}
		out[i] = response(model, parts, cmp.Or(t.FinishReason, clients.FinishStop), cmp.Or(t.Usage, &clients.Usage{}), t.Grounding)
	}
	return out
}

func response(model string, parts []map[string]any, finish string, u *clients.Usage, g *clients.ScriptGrounding) map[string]any {
	cand := map[string]any{
		"content": map[string]any{"role": "model", "parts": parts},
		"index":   0,
	}
	if finish != "" {
		cand["finishReason"] = finish
	}
	if g != nil {
		cand["groundingMetadata"] = grounding(g)
	}
	resp := map[string]any{
		"candidates":   []any{cand},
		"modelVersion": model,
	}
	if u != nil {
		um := map[string]any{
			"promptTokenCount":     u.PromptTokens,
			"candidatesTokenCount": u.OutputTokens,
			"totalTokenCount":      cmp.Or(u.TotalTokens, u.PromptTokens+u.OutputTokens+u.ThoughtTokens),
		}
		if u.ThoughtTokens > 0 {
			um["thoughtsTokenCount"] = u.ThoughtTokens
		}
		resp["usageMetadata"] = um
	}
	return resp
}

func grounding(g *clients.ScriptGrounding) map[string]any {
	chunks := make([]any, 0, len(g.Sources))
	for _, src := range g.Sources {
		chunks = append(chunks, map[string]any{"web": map[string]any{"uri": src.URI, "title": src.Title}})
	}
	supports := make([]any, 0, len(g.Supports))
	for _, sup := range g.Supports {
		supports = append(supports, map[string]any{
			"segment":               map[string]any{"startIndex": sup.Start, "endIndex": sup.End},
			"groundingChunkIndices": sup.Sources,
		})
	}
	return map[string]any{
		"webSearchQueries":  g.Queries,
		"groundingChunks":   chunks,
		"groundingSupports": supports,
	}
}

// merge folds streamed chunks into the one response of a unary call: text parts joined
// by kind, the rest in order, the last chunk's metadata.
func merge(chunks []map[string]any) map[string]any {
	last := chunks[len(chunks)-1]
	if _, ok := last["candidates"]; !ok {
		return last // a refused prompt: nothing to merge
	}
	var parts []map[string]any
	for _, c := range chunks {
		cand := c["candidates"].([]any)[0].(map[string]any)
		for _, p := range cand["content"].(map[string]any)["parts"].([]map[string]any) {
			if n := len(parts); n > 0 {
				prev := parts[n-1]
				pt, pok := prev["text"].(string)
				t, ok := p["text"].(string)
				if pok && ok && prev["thought"] == p["thought"] && prev["thoughtSignature"] == nil {
					merged := map[string]any{}
					for k, v := range p {
						merged[k] = v
					}
					merged["text"] = pt + t
					parts[n-1] = merged
					continue
				}
			}
			parts = append(parts, p)
		}
	}
	cand := last["candidates"].([]any)[0].(map[string]any)
	cand["content"] = map[string]any{"role": "model", "parts": parts}
	return last
}

func (s *Server) countTokens(w http.ResponseWriter, body []byte) {
	var req struct {
		Contents               []json.RawMessage `json:"contents"`
		GenerateContentRequest *GenerateRequest  `json:"generateContentRequest"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not JSON: "+err.Error(), "")
		return
	}
	// One token per four characters of the request's JSON text, roughly what the real
	// tokenizer gives for English and code.
	var size int
	for _, c := range req.Contents {
		size += len(c)
	}
	if g := req.GenerateContentRequest; g != nil {
		b, _ := json.Marshal(g)
		size += len(b)
	}
	s.core.WriteJSON(w, map[string]any{"totalTokens": (size + 3) / 4})
}

// minimalValue is the smallest JSON value schema allows; both JSON Schema (lower-case
// types) and Gemini's OpenAPI subset (upper-case types) are read.
func minimalValue(schema map[string]any) any {
	if schema == nil {
		return map[string]any{}
	}
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ := ""
	switch t := schema["type"].(type) {
	case string:
		typ = strings.ToLower(t)
	case []any:
		for _, v := range t {
			if s, ok := v.(string); ok && s != "null" {
				typ = strings.ToLower(s)
				break
			}
		}
	}
	props, _ := schema["properties"].(map[string]any)
	if typ == "" && props != nil {
		typ = "object"
	}
	switch typ {
	case "object":
		out := map[string]any{}
		required, _ := schema["required"].([]any)
		if len(required) == 0 {
			for name := range props {
				required = append(required, name)
			}
		}
		for _, r := range required {
			name, _ := r.(string)
			sub, _ := props[name].(map[string]any)
			out[name] = minimalValue(sub)
		}
		return out
	case "array":
		return []any{}
	case "string":
		return ""
	case "number", "integer":
		return 0
	case "boolean":
		return false
	default:
		return map[string]any{}
	}
}

// writeError answers with a Google API error body.
func writeError(w http.ResponseWriter, status int, message, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code":    status,
		"message": message,
		"status":  statusName(status),
	}})
	_, _ = w.Write(bytes.TrimSpace(body))
}

func statusName(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	default:
		if status >= 500 {
			return "INTERNAL"
		}
		return "FAILED_PRECONDITION"
	}
}
