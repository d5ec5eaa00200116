package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
)

// NewTextMode wraps a client of a model that cannot call functions. The tools are
// described in the system instruction, with the instruction to call them by answering
// with fenced ```json blocks holding {"name": …, "args": {…}} (or an array of such
// objects); such blocks in the reply become FunctionCall parts and the rest stays text.
// Past calls go back to the model as those blocks, and function responses as user text.
//
// The wrapper counts tokens and searches through inner when inner can; otherwise those
// methods fail with errors.ErrUnsupported. Since it has them either way, what the model
// can do is a question for inner: the returned client has an Unwrap() Client method
// giving inner back, and callers that offer a capability (google_web_search) look
// through it to the innermost client, as errors.Unwrap looks through wrapped errors.
func NewTextMode(inner Client) Client {
	return &textMode{inner: inner}
}

type textMode struct {
	inner Client
}

var (
	_ TokenCounter = (*textMode)(nil)
	_ Searcher     = (*textMode)(nil)
)

// Unwrap returns the client of the model behind the wrapper.
func (t *textMode) Unwrap() Client { return t.inner }

func (t *textMode) Model() string      { return t.inner.Model() }
func (t *textMode) ContextWindow() int { return t.inner.ContextWindow() }

func (t *textMode) CountTokens(ctx context.Context, req Request) (int, error) {
	tc, ok := t.inner.(TokenCounter)
	if !ok {
		return 0, fmt.Errorf("counting tokens with %s: %w", t.inner.Model(), errors.ErrUnsupported)
	}
	return tc.CountTokens(ctx, textModeRequest(req))
}

func (t *textMode) Search(ctx context.Context, query string) (SearchResult, error) {
	s, ok := t.inner.(Searcher)
	if !ok {
		return SearchResult{}, fmt.Errorf("web search with %s: %w", t.inner.Model(), errors.ErrUnsupported)
	}
	return s.Search(ctx, query)
}

func (t *textMode) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		var p callParser
		for c, err := range t.inner.Stream(ctx, textModeRequest(req)) {
			if err != nil {
				// What was held back is still the model's text.
				if rest := p.feed("", true); len(rest) > 0 && !yield(Chunk{Parts: rest}, nil) {
					return
				}
				yield(Chunk{}, err)
				return
			}
			out := Chunk{Usage: c.Usage, FinishReason: c.FinishReason}
			for _, part := range c.Parts {
				if part.Thought || part.FunctionCall != nil || part.InlineData != nil {
					out.Parts = append(out.Parts, p.feed("", false)...)
					out.Parts = append(out.Parts, part)
					continue
				}
				out.Parts = append(out.Parts, p.feed(part.Text, false)...)
			}
			if c.FinishReason != "" {
				out.Parts = append(out.Parts, p.feed("", true)...)
			}
			if (len(out.Parts) > 0 || out.Usage != nil || out.FinishReason != "") && !yield(out, nil) {
				return
			}
		}
		if rest := p.feed("", true); len(rest) > 0 {
			yield(Chunk{Parts: rest}, nil)
		}
	}
}

// textModeRequest rewrites req for a model without function calling.
func textModeRequest(req Request) Request {
	out := Request{System: req.System + describeTools(req.Tools)}
	for _, c := range req.History {
		nc := Content{Role: c.Role}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				nc.Parts = append(nc.Parts, Part{Text: callBlock(*p.FunctionCall)})
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				nc.Parts = append(nc.Parts, Part{Text: responseText(*fr)})
				for _, b := range fr.Parts {
					nc.Parts = append(nc.Parts, Part{InlineData: &Blob{MIMEType: b.MIMEType, Data: b.Data}})
				}
			default:
				nc.Parts = append(nc.Parts, p)
			}
		}
		out.History = append(out.History, nc)
	}
	return out
}

// describeTools is the system instruction's section on tools.
func describeTools(decls []Declaration) string {
	if len(decls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n# Tools\n\n")
	b.WriteString("You can call the tools listed below. To call a tool, answer with a fenced code block " +
		"in the json language holding an object with the tool's name and its arguments, for example:\n\n" +
		"```json\n{\"name\": \"tool_name\", \"args\": {\"parameter\": \"value\"}}\n```\n\n" +
		"To call several tools at once, write several such blocks, or one block holding a JSON array of " +
		"such objects. The arguments must follow the tool's parameter schema. After your calls, stop " +
		"and wait: the results come back in the next message. Use ```json blocks for tool calls only.\n")
	for _, d := range decls {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", d.Name, strings.TrimSpace(d.Description))
		if schema, err := toolSchema(d); err == nil && schema != nil {
			if js, err := json.Marshal(schema); err == nil {
				fmt.Fprintf(&b, "\nParameters (JSON Schema): %s\n", js)
			}
		}
	}
	return b.String()
}

func callBlock(fc FunctionCall) string {
	args := fc.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	b, err := json.Marshal(struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}{fc.Name, args})
	if err != nil {
		b = []byte(fmt.Sprintf(`{"name": %q, "args": {}}`, fc.Name))
	}
	return "```json\n" + string(b) + "\n```\n"
}

func responseText(fr FunctionResponse) string {
	b, err := json.Marshal(fr.Response)
	if err != nil {
		b = []byte(fmt.Sprint(fr.Response))
	}
	return fmt.Sprintf("Result of the %s tool call:\n```json\n%s\n```\n", fr.Name, b)
}

// callParser turns streamed text into text parts and function calls. Text streams on at
// once, except from a possible code fence on, which is held until its block is complete:
// a block that holds calls becomes FunctionCall parts, any other stays text.
type callParser struct {
	pending string
}

// feed adds text and returns the parts that are complete; final flushes everything.
func (p *callParser) feed(text string, final bool) []Part {
	p.pending += text
	var out []Part
	emit := func(s string) {
		if s != "" {
			out = append(out, Part{Text: s})
		}
	}
	for p.pending != "" {
		start := strings.Index(p.pending, "```")
		if start < 0 {
			if final {
				emit(p.pending)
				p.pending = ""
				break
			}
			// Hold back trailing backticks: they may start a fence.
			keep := len(p.pending) - len(strings.TrimRight(p.pending, "`"))
			emit(p.pending[:len(p.pending)-keep])
			p.pending = p.pending[len(p.pending)-keep:]
			break
		}
		emit(p.pending[:start])
		p.pending = p.pending[start:]
		nl := strings.IndexByte(p.pending, '\n')
		closing := -1
		if nl >= 0 {
			closing = strings.Index(p.pending[nl+1:], "```")
		}
		if nl < 0 || closing < 0 {
			if final {
				emit(p.pending)
				p.pending = ""
			}
			break
		}
		info := strings.TrimSpace(p.pending[3:nl])
		body := p.pending[nl+1 : nl+1+closing]
		end := nl + 1 + closing + 3
		block := p.pending[:end]
		p.pending = p.pending[end:]
		if calls, ok := parseCalls(info, body); ok {
			for _, c := range calls {
				c.ID = newCallID(c.Name)
				out = append(out, Part{FunctionCall: &c})
			}
			continue
		}
		emit(block)
	}
	return out
}

// parseCalls reads a fenced block as tool calls: the info string is "json" or empty, and
// the body an object {"name": "…", "args": {…}} ("arguments" is accepted too) or a
// non-empty array of them. Anything else is not a call.
func parseCalls(info, body string) ([]FunctionCall, bool) {
	if info != "" && !strings.EqualFold(info, "json") {
		return nil, false
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return nil, false
	}
	var raws []json.RawMessage
	if body[0] == '[' {
		if json.Unmarshal([]byte(body), &raws) != nil || len(raws) == 0 {
			return nil, false
		}
	} else {
		raws = []json.RawMessage{json.RawMessage(body)}
	}
	calls := make([]FunctionCall, 0, len(raws))
	for _, raw := range raws {
		fc, ok := parseCall(raw)
		if !ok {
			return nil, false
		}
		calls = append(calls, fc)
	}
	return calls, true
}

func parseCall(raw json.RawMessage) (FunctionCall, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return FunctionCall{}, false
	}
	var name string
	if json.Unmarshal(fields["name"], &name) != nil || strings.TrimSpace(name) == "" {
		return FunctionCall{}, false
	}
	args := json.RawMessage("{}")
	for key, v := range fields {
		switch key {
		case "name":
		case "args", "arguments":
			v = bytes.TrimSpace(v)
			if len(v) == 0 || v[0] != '{' {
				if string(v) == "null" {
					continue
				}
				return FunctionCall{}, false
			}
			args = v
		default:
			return FunctionCall{}, false
		}
	}
	return FunctionCall{Name: name, Args: args}, true
}
