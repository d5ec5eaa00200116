// Package clients holds the model clients of agentls behind one small interface: Gemini
// (through google.golang.org/genai), OpenAI-compatible endpoints (through openai-go),
// text-only models that cannot call functions, and a scripted replay for demos and
// tests.
//
// The types here are the lingua franca of the agent loop (package session): a history of
// Contents made of Parts. A client converts them to and from its wire format; a Part a
// client received keeps its wire form in Raw, so that what the model said goes back to it
// unchanged (Gemini's parts carry thought signatures that must be returned as they came).
package clients

import (
	"context"
	"encoding/json"
	"iter"
)

// Roles of a Content.
const (
	RoleUser  = "user"
	RoleModel = "model"
)

// Content is one turn of the conversation: the user's (prompts and function responses)
// or the model's (text, thoughts and function calls).
type Content struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is one piece of a Content. Exactly one of Text, FunctionCall, FunctionResponse and
// InlineData is set (Text may be empty for a part that carries only a thought signature).
type Part struct {
	Text string `json:"text,omitempty"`
	// Thought marks Text as the model's reasoning rather than its answer.
	Thought bool `json:"thought,omitempty"`
	// ThoughtSignature is Gemini's opaque signature of the model's reasoning; it must be
	// sent back unchanged with the part that carried it.
	ThoughtSignature []byte            `json:"thoughtSignature,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
	// Raw is the part exactly as the client's wire format carried it, when it came from
	// a model; the client that produced it sends Raw instead of re-encoding the fields.
	// Other clients ignore it.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// FunctionCall is the model asking for a tool call.
type FunctionCall struct {
	// ID identifies the call; the response carries it back. Clients make one up when
	// the model gave none.
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// FunctionResponse is a tool call's result going back to the model.
type FunctionResponse struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Response is the JSON object the model receives: {"output": …} on success,
	// {"error": …} on failure.
	Response map[string]any `json:"response"`
	// Parts are inline binary parts of the result (images, PDFs).
	Parts []Blob `json:"parts,omitempty"`
}

// Blob is inline binary data with its MIME type.
type Blob struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

// Declaration is a tool as the model is told of it.
type Declaration struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is a JSON Schema (an object schema) without $schema.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// Request is one model call: the system instruction, the curated history (ending with
// the user's turn) and the tools the model may call.
type Request struct {
	System  string
	History []Content
	Tools   []Declaration
	// ToolsRequired asks the model to answer with calls of Tools only, no text
	// (Gemini's function calling mode ANY, OpenAI's tool_choice "required"): what a
	// BeforeToolSelection hook's toolConfig mode ANY asks for.
	ToolsRequired bool
	// Model, when set, is the model of this request instead of the client's own: a
	// BeforeModel hook's llm_request.model.
	Model string
	// Sampling, when set, overrides the model's sampling settings for this request: a
	// BeforeModel hook's llm_request.config.
	Sampling *Sampling
}

// Sampling are the generation settings a request may set; a nil field keeps the
// model's default.
type Sampling struct {
	Temperature     *float64 `json:"temperature,omitempty"`
	TopP            *float64 `json:"topP,omitempty"`
	TopK            *int     `json:"topK,omitempty"`
	MaxOutputTokens *int     `json:"maxOutputTokens,omitempty"`
	StopSequences   []string `json:"stopSequences,omitempty"`
}

// Usage counts the tokens of one model call, as the model reported them.
type Usage struct {
	// PromptTokens is the size of the request: what compression watches.
	PromptTokens int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	// ThoughtTokens are the tokens spent on reasoning, when reported.
	ThoughtTokens int `json:"thoughtTokens,omitempty"`
	TotalTokens   int `json:"totalTokens,omitempty"`
}

// Chunk is a piece of a streamed response: new parts (text arrives in pieces; a
// function call arrives whole), and, usually on the last chunk, usage and the reason
// the model stopped.
type Chunk struct {
	Parts        []Part
	Usage        *Usage
	FinishReason string
}

// Client is a model. Implementations are safe for concurrent use.
type Client interface {
	// Stream sends req and yields the response as it arrives. A failure is yielded as
	// the last element, with a zero Chunk; cancelling ctx stops the stream. Clients
	// retry 429 and 5xx answers before the first chunk, honouring Retry-After.
	Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error]
	// Model names the model in use, for people and logs.
	Model() string
	// ContextWindow is the model's input limit in tokens, which compression watches.
	ContextWindow() int
}

// TokenCounter is implemented by clients that can count the tokens of a request without
// running it.
type TokenCounter interface {
	CountTokens(ctx context.Context, req Request) (int, error)
}

// Searcher is implemented by clients that can answer a query with web search grounding
// (google_web_search).
type Searcher interface {
	Search(ctx context.Context, query string) (SearchResult, error)
}

// SearchResult is a grounded answer and the sources it cites, in citation order.
type SearchResult struct {
	Text    string
	Sources []Source
}

// Source is one web page a grounded answer cites.
type Source struct {
	Title string
	URI   string
}
