package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"unicode/utf8"
)

// Script is a recorded conversation for a model that replays it: the scripted client
// (NewScripted) and the fake Gemini and OpenAI servers used by tests and benchmarks all
// read this format. Each model call consumes the next turn.
//
// The JSON form, as LoadScript reads it (every field optional except turns; a bare array
// of turns is accepted too):
//
//	{
//	  "model": "scripted",          // what Model() reports
//	  "contextWindow": 1048576,     // what ContextWindow() reports
//	  "chunkDelayMs": 40,           // pause between streamed chunks, for demos
//	  "turns": [
//	    {"thought": "The user wants a file read.", "text": "Let me look.",
//	     "calls": [{"name": "read_file", "args": {"absolute_path": "/w/a.go"}, "id": "c1"}],
//	     "usage": {"inputTokens": 1200, "outputTokens": 40}},
//	    {"text": "The file declares package a.", "chunks": 4},
//	    {"httpError": {"status": 429, "message": "quota exceeded", "retryAfter": "2"}},
//	    {"text": "Half an answer", "error": "the stream broke"}
//	  ]
//	}
//
// A turn streams its thought first, then its text split into "chunks" pieces (3 unless
// set), then its function calls together, then usage and the finish reason ("STOP"
// unless finishReason says otherwise). Calls without an id get "call-T-N" (turn T,
// call N, both from 1) from the scripted client. "error" fails the call after whatever
// the turn streamed; "httpError" fails it before anything streams (the fake servers
// answer it with that HTTP status, which clients may retry, consuming further turns).
// "thoughtSignature" (base64, as on Gemini's wire) and "grounding" are for the fake
// Gemini server; "hang" makes the turn stream its content and then wait until the
// caller gives up, for cancellation tests; "cut" ends the stream cleanly after the
// thought and text, without calls, finish reason or usage, as a connection closed
// early by the server or a proxy.
type Script struct {
	Model         string `json:"model,omitempty"`
	ContextWindow int    `json:"contextWindow,omitempty"`
	// ChunkDelayMS pauses between streamed chunks, in milliseconds.
	ChunkDelayMS int    `json:"chunkDelayMs,omitempty"`
	Turns        []Turn `json:"turns"`
}

// Turn is one scripted model response.
type Turn struct {
	// Thought is reasoning text, streamed as one thought part before the answer.
	Thought string `json:"thought,omitempty"`
	// Text is the answer, streamed in Chunks pieces.
	Text   string `json:"text,omitempty"`
	Chunks int    `json:"chunks,omitempty"`
	// Calls are function calls, sent together after the text.
	Calls []ScriptCall `json:"calls,omitempty"`
	Usage *Usage       `json:"usage,omitempty"`
	// FinishReason overrides "STOP", e.g. "SAFETY" or "MAX_TOKENS".
	FinishReason string `json:"finishReason,omitempty"`
	// Error fails the call with this message after the turn's content streamed.
	Error string `json:"error,omitempty"`
	// HTTPError fails the call before anything streams.
	HTTPError *ScriptHTTPError `json:"httpError,omitempty"`
	// ThoughtSignature is a base64 signature the fake Gemini server attaches to the
	// first function call of the turn, or else to its last part.
	ThoughtSignature string `json:"thoughtSignature,omitempty"`
	// Grounding is the search grounding the fake Gemini server reports with the turn.
	Grounding *ScriptGrounding `json:"grounding,omitempty"`
	// Hang makes the turn, once streamed, wait until the call is cancelled.
	Hang bool `json:"hang,omitempty"`
	// Cut ends the turn's stream cleanly after its thought and text: no calls, finish
	// reason or usage follow.
	Cut bool `json:"cut,omitempty"`
}

// ScriptCall is a function call of a scripted turn.
type ScriptCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// ScriptHTTPError is an HTTP failure of a scripted turn.
type ScriptHTTPError struct {
	Status  int    `json:"status"`
	Message string `json:"message,omitempty"`
	// RetryAfter is sent as the Retry-After header: seconds or an HTTP date.
	RetryAfter string `json:"retryAfter,omitempty"`
}

// ScriptGrounding is what a search-grounded turn cites: Sources in order, and which
// byte ranges of the turn's text each support cites (indices into Sources, from 0).
type ScriptGrounding struct {
	Queries  []string        `json:"queries,omitempty"`
	Sources  []Source        `json:"sources"`
	Supports []ScriptSupport `json:"supports,omitempty"`
}

// ScriptSupport ties the text between byte offsets Start and End to sources.
type ScriptSupport struct {
	Start   int   `json:"start"`
	End     int   `json:"end"`
	Sources []int `json:"sources"`
}

// UnmarshalJSON accepts the object form and a bare array of turns. Unknown fields are
// errors, so that a misspelt field does not silently change a script.
func (s *Script) UnmarshalJSON(data []byte) error {
	type plain Script
	var target any = (*plain)(s)
	if d := bytes.TrimSpace(data); len(d) > 0 && d[0] == '[' {
		*s = Script{}
		target = &s.Turns
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(target)
}

// LoadScript reads and checks a script file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("reading the script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return Script{}, fmt.Errorf("script %s: %w", path, err)
	}
	return s, nil
}

// ParseScript decodes and checks a script.
func ParseScript(data []byte) (Script, error) {
	var s Script
	if err := json.Unmarshal(data, &s); err != nil {
		return Script{}, fmt.Errorf("not a valid script: %w", err)
	}
	if err := s.Validate(); err != nil {
		return Script{}, err
	}
	return s, nil
}

// Validate reports the first problem of the script: a call without a name or with
// arguments that are not a JSON object, an HTTP error that is not an error status, a
// grounding support citing a source that does not exist.
func (s Script) Validate() error {
	for i, t := range s.Turns {
		for j, c := range t.Calls {
			if c.Name == "" {
				return fmt.Errorf("turn %d, call %d: no name", i+1, j+1)
			}
			if len(c.Args) > 0 {
				var obj map[string]any
				if err := json.Unmarshal(c.Args, &obj); err != nil || obj == nil {
					return fmt.Errorf("turn %d, call %s: args must be a JSON object", i+1, c.Name)
				}
			}
		}
		if t.HTTPError != nil && (t.HTTPError.Status < 400 || t.HTTPError.Status > 599) {
			return fmt.Errorf("turn %d: httpError status %d is not an HTTP error status", i+1, t.HTTPError.Status)
		}
		if g := t.Grounding; g != nil {
			for _, sup := range g.Supports {
				if sup.Start < 0 || sup.End < sup.Start || sup.End > len(t.Text) {
					return fmt.Errorf("turn %d: grounding support %d..%d is outside the text (%d bytes)", i+1, sup.Start, sup.End, len(t.Text))
				}
				for _, n := range sup.Sources {
					if n < 0 || n >= len(g.Sources) {
						return fmt.Errorf("turn %d: grounding support cites source %d of %d", i+1, n, len(g.Sources))
					}
				}
			}
		}
	}
	return nil
}

// TextChunks splits the turn's text into the pieces it streams in: Chunks pieces (3 when
// unset), cut on rune boundaries, fewer when the text is short.
func (t Turn) TextChunks() []string {
	if t.Text == "" {
		return nil
	}
	n := t.Chunks
	if n <= 0 {
		n = 3
	}
	runes := utf8.RuneCountInString(t.Text)
	n = min(n, runes)
	out := make([]string, 0, n)
	rest := t.Text
	for i := n; i > 0; i-- {
		size := utf8.RuneCountInString(rest) / i
		cut := 0
		for range size {
			_, w := utf8.DecodeRuneInString(rest[cut:])
			cut += w
		}
		out = append(out, rest[:cut])
		rest = rest[cut:]
	}
	return out
}
