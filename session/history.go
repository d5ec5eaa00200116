package session

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/tools"
)

// curate returns the history the model is sent, built from the comprehensive one as
// Gemini CLI builds it: runs of model contents of which one is invalid (no parts, or an
// empty part, as safety stops and broken streams leave) are dropped, and the user turn
// before them stays (it then merges with the next user turn); thoughts that carry no
// signature are left out (the model does not need its own summaries back); adjacent
// text parts of a model turn are merged; consecutive contents of one role become one.
func curate(hist []clients.Content) []clients.Content {
	return curateAppend(make([]clients.Content, 0, len(hist)), hist)
}

// curateAppend is curate of hist appended to out, the curated form of the contents
// before hist; they must not end with a model content (whose run hist may continue).
func curateAppend(out, hist []clients.Content) []clients.Content {
	for i := 0; i < len(hist); {
		if hist[i].Role != clients.RoleModel {
			out = appendMerged(out, hist[i])
			i++
			continue
		}
		j, valid := i, true
		for ; j < len(hist) && hist[j].Role == clients.RoleModel; j++ {
			valid = valid && validContent(hist[j])
		}
		if valid {
			for _, c := range hist[i:j] {
				out = appendMerged(out, clients.Content{Role: c.Role, Parts: mergeText(dropThoughts(c.Parts))})
			}
		}
		i = j
	}
	return out
}

// curation is the curated form of a prefix of a session's history, kept so that each
// request curates only what the history gained since the last: a long session must not
// cost more per request for being long.
type curation struct {
	gen uint64            // the history's generation (Session.histGen) it was made from
	n   int               // how many contents of the history it covers
	out []clients.Content // curate(hist[:n]); never changed once made
}

// of returns curate(hist), for hist of generation gen, and keeps it for the next call
// when hist ends with a content that is not the model's (as the history of a request
// does).
func (c *curation) of(hist []clients.Content, gen uint64) []clients.Content {
	if c.gen != gen || c.n > len(hist) {
		*c = curation{gen: gen}
	}
	out := make([]clients.Content, len(c.out), len(c.out)+len(hist)-c.n)
	copy(out, c.out)
	out = curateAppend(out, hist[c.n:])
	if len(hist) > 0 && hist[len(hist)-1].Role != clients.RoleModel {
		c.n, c.out = len(hist), out
	}
	return out
}

// validContent reports whether c has parts and none of them is empty.
func validContent(c clients.Content) bool {
	return len(c.Parts) > 0 && !slices.ContainsFunc(c.Parts, emptyPart)
}

// emptyPart reports whether p carries nothing: no text, call, response, data or
// signature, and no other field in its wire form. A thought part with empty text is not
// empty, as in Gemini CLI.
func emptyPart(p clients.Part) bool {
	return p.Text == "" && !p.Thought && len(p.ThoughtSignature) == 0 &&
		p.FunctionCall == nil && p.FunctionResponse == nil && p.InlineData == nil && !rawContent(p.Raw)
}

// rawContent reports whether a part's wire form holds a field other than an empty text:
// one agentls does not model (code execution, file data), which goes back as it came.
func rawContent(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	for k, v := range fields {
		if k != "text" || (string(v) != `""` && string(v) != "null") {
			return true
		}
	}
	return false
}

// dropThoughts leaves out thought parts that carry no signature.
func dropThoughts(parts []clients.Part) []clients.Part {
	if !slices.ContainsFunc(parts, plainThought) {
		return parts
	}
	return slices.DeleteFunc(slices.Clone(parts), plainThought)
}

func plainThought(p clients.Part) bool { return p.Thought && len(p.ThoughtSignature) == 0 }

// plainText reports whether p is answer text that may merge with its neighbours: not a
// thought, no signature, nothing but text.
func plainText(p clients.Part) bool {
	return p.Text != "" && !p.Thought && len(p.ThoughtSignature) == 0 &&
		p.FunctionCall == nil && p.FunctionResponse == nil && p.InlineData == nil
}

// mergeText merges runs of adjacent plain text parts, and runs of adjacent unsigned
// thoughts, into one part each. A merged part loses its wire form (Raw): it is
// re-encoded from its fields, which are all it has.
func mergeText(parts []clients.Part) []clients.Part {
	if !mergeable(parts) {
		// Most contents: nothing to merge, and nothing to copy. The history is curated
		// for every request, and must not cost more for being long than it has to.
		return parts
	}
	var out []clients.Part
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		for _, kind := range []func(clients.Part) bool{plainText, plainThought} {
			if kind(p) && i+1 < len(parts) && kind(parts[i+1]) {
				text := p.Text
				for i+1 < len(parts) && kind(parts[i+1]) {
					i++
					text += parts[i].Text
				}
				p = clients.Part{Text: text, Thought: p.Thought}
			}
		}
		out = append(out, p)
	}
	return out
}

// mergeable reports whether mergeText would merge any parts.
func mergeable(parts []clients.Part) bool {
	for i := 1; i < len(parts); i++ {
		if plainText(parts[i-1]) && plainText(parts[i]) || plainThought(parts[i-1]) && plainThought(parts[i]) {
			return true
		}
	}
	return false
}

// appendMerged appends c to out, merging it into the last content when their roles
// match. It never changes the parts slices of its arguments.
func appendMerged(out []clients.Content, c clients.Content) []clients.Content {
	if len(c.Parts) == 0 {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Role == c.Role {
		out[n-1].Parts = append(slices.Clip(out[n-1].Parts), c.Parts...)
		return out
	}
	return append(out, clients.Content{Role: c.Role, Parts: slices.Clip(c.Parts)})
}

// summaryAck is the model's answer to the summary that replaces compressed history, so
// that the kept history goes on after a model turn as it did before.
const summaryAck = "Understood. I have the state snapshot and will continue from it."

// compressed returns the history after a compression: the summary as a user turn, the
// model's acknowledgement when the kept history starts with a user turn, and kept.
func compressed(summary string, kept []clients.Content) []clients.Content {
	out := []clients.Content{{Role: clients.RoleUser, Parts: []clients.Part{{Text: summaryIntro + summary}}}}
	if len(kept) == 0 || kept[0].Role == clients.RoleUser {
		out = append(out, clients.Content{Role: clients.RoleModel, Parts: []clients.Part{{Text: summaryAck}}})
	}
	return append(out, kept...)
}

// calls returns the function calls of c, in order.
func calls(c clients.Content) []clients.FunctionCall {
	var out []clients.FunctionCall
	for _, p := range c.Parts {
		if p.FunctionCall != nil {
			out = append(out, *p.FunctionCall)
		}
	}
	return out
}

// responseTo turns a call's result into the function response the model receives:
// {"output": text} on success, {"error": "<type>: message"} otherwise, with the
// result's binary parts.
func responseTo(fc clients.FunctionCall, r tools.CallResult) clients.Part {
	resp := &clients.FunctionResponse{ID: fc.ID, Name: fc.Name}
	switch {
	case r.Status == tools.StatusSuccess:
		resp.Response = map[string]any{"output": r.Output}
	case r.Error != nil:
		resp.Response = map[string]any{"error": string(r.Error.Type) + ": " + r.Error.Message}
	default:
		resp.Response = map[string]any{"error": fmt.Sprintf("%s: the call ended %s", tools.ErrUnhandledException, r.Status)}
	}
	for _, p := range r.Parts {
		resp.Parts = append(resp.Parts, clients.Blob{MIMEType: p.MIMEType, Data: p.Data})
	}
	return clients.Part{FunctionResponse: resp}
}

// notRun is the response to a call that did not run, for the reason given.
func notRun(fc clients.FunctionCall, t tools.ErrorType, why string) clients.Part {
	return clients.Part{FunctionResponse: &clients.FunctionResponse{ID: fc.ID, Name: fc.Name,
		Response: map[string]any{"error": string(t) + ": " + why}}}
}

// responsesNotRun returns the user content answering every call of c that did not run,
// or false when c has no calls.
func responsesNotRun(c clients.Content, t tools.ErrorType, why string) (clients.Content, bool) {
	fcs := calls(c)
	if len(fcs) == 0 {
		return clients.Content{}, false
	}
	out := clients.Content{Role: clients.RoleUser}
	for _, fc := range fcs {
		out.Parts = append(out.Parts, notRun(fc, t, why))
	}
	return out, true
}

// unanswered returns the user content answering the calls of the last content of hist
// when it is a model turn whose calls never got responses (the session ended while they
// ran), or false.
func unanswered(hist []clients.Content) (clients.Content, bool) {
	if len(hist) == 0 || hist[len(hist)-1].Role != clients.RoleModel {
		return clients.Content{}, false
	}
	return responsesNotRun(hist[len(hist)-1], tools.ErrCancelled, "the session ended before the call finished.")
}

// requests turns function calls into scheduler requests.
func requests(fcs []clients.FunctionCall) []tools.Request {
	reqs := make([]tools.Request, len(fcs))
	for i, fc := range fcs {
		args := fc.Args
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		reqs[i] = tools.Request{CallID: fc.ID, Name: fc.Name, Args: args}
	}
	return reqs
}

// declarations converts the registry's declarations to the client's.
func declarations(decls []tools.Declaration) []clients.Declaration {
	out := make([]clients.Declaration, len(decls))
	for i, d := range decls {
		out[i] = clients.Declaration{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
	}
	return out
}

// size is the size of contents in bytes of JSON, what compression splits by.
func size(c clients.Content) int {
	b, err := json.Marshal(c)
	if err != nil {
		return 0
	}
	return len(b)
}
