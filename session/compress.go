package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/hooks"
)

// Compression thresholds, as fractions of the model's context window. History is
// compressed when the next request is estimated to pass compressAt; the newest
// keepFraction of it (by size) stays verbatim, and the function responses of that kept
// part are shortened when it would take more than keptShare. The part summarised has
// its function responses shortened to fit in summaryShare, so that the summary request
// stays well under the window. When the model refuses a request as too large all the
// same, compression runs again with the smaller overflow fractions and the request is
// sent once more.
const (
	compressAt   = 0.7
	keepFraction = 0.3
	keptShare    = 0.4
	summaryShare = 0.3

	overflowKeepFraction = 0.1
	overflowKeptShare    = 0.2
)

// minResponseCap is the fewest bytes a shortened function response keeps of a string.
const minResponseCap = 1000

// compressionPrompt is the system instruction of the summarisation request.
const compressionPrompt = `You are the component of a coding agent that condenses a long conversation into a state snapshot. The agent will see only your snapshot instead of the conversation below, followed by the most recent turns verbatim, so the snapshot must hold everything it needs to carry on the user's task without repeating work or losing decisions.

Think first about what matters: the user's goal and every explicit instruction or constraint, what was learnt about the code, which files were read, created or changed and how, which commands ran and what they showed, what failed and why, and what remains to be done. Leave out pleasantries, tool chatter and anything superseded.

Then write the snapshot as XML, exactly in this structure, and nothing after it:

<state_snapshot>
  <overall_goal>The user's high-level objective, in one sentence.</overall_goal>
  <key_knowledge>Facts, conventions, constraints and user preferences the agent must keep in mind, as bullet points (build and test commands, APIs, decisions taken).</key_knowledge>
  <file_system_state>Files and directories that matter, with what was read, created or modified in each (absolute paths).</file_system_state>
  <recent_actions>The last significant actions and their outcomes.</recent_actions>
  <current_plan>The plan, step by step, each step marked [DONE], [IN PROGRESS] or [TODO].</current_plan>
</state_snapshot>`

// compressionRequest is the user turn that asks for the snapshot.
const compressionRequest = "Condense the conversation above into the <state_snapshot> as instructed. Output only the snapshot."

// summaryIntro introduces the snapshot in the compressed history.
const summaryIntro = "The earlier part of this conversation was condensed into this state snapshot to save space:\n\n"

// splitPoint returns the index from which hist is kept verbatim when compressing, so
// that about keep of it (a fraction, by size) is kept. Cuts fall before a user turn that
// is not a set of function responses: the first after the first 1-keep of hist, else the
// last before it. A history without such a turn (one long prompt) is cut before a model
// turn that follows a user turn, chosen the same way; the summary then stands in for
// that user turn. A cut never separates calls from their responses. It returns 0 when
// there is no cut.
func splitPoint(hist []clients.Content, keep float64) int {
	sizes := make([]int, len(hist))
	total := 0
	for i, c := range hist {
		sizes[i] = size(c)
		total += sizes[i]
	}
	target := int(float64(total) * (1 - keep))
	var userAfter, userBefore, modelAfter, modelBefore int
	acc := 0
	for i, c := range hist {
		if i > 0 {
			after := acc >= target
			switch {
			case c.Role == clients.RoleUser && !hasResponses(c):
				if after && userAfter == 0 {
					userAfter = i
				} else if !after {
					userBefore = i
				}
			case c.Role == clients.RoleModel && hist[i-1].Role == clients.RoleUser:
				if after && modelAfter == 0 {
					modelAfter = i
				} else if !after {
					modelBefore = i
				}
			}
		}
		acc += sizes[i]
	}
	return cmp.Or(userAfter, userBefore, modelAfter, modelBefore)
}

func hasResponses(c clients.Content) bool {
	return slices.ContainsFunc(c.Parts, func(p clients.Part) bool { return p.FunctionResponse != nil })
}

// requestTokens estimates the prompt tokens of the next request: those the model
// reported for the last one (or the estimate after a compression or a resume), and a
// token per four bytes of what the history gained since, as the resume estimate counts.
func (s *Session) requestTokens() int { return s.lastPrompt + s.added/4 }

// maybeCompress compresses the history when the next request is estimated to pass
// compressAt of the context window. A failed or useless compression keeps the history
// as it is, and no other attempt is made in this prompt (but for a request the model
// refuses as too large).
func (s *Session) maybeCompress(ctx context.Context, p *promptState) {
	window := s.client.ContextWindow()
	if window <= 0 || p.noCompress || float64(s.requestTokens()) <= compressAt*float64(window) {
		return
	}
	if !s.compress(ctx, p, false) {
		p.noCompress = true
	}
}

// overflowed reports whether a model call failed, before the model said anything,
// because its request was larger than the model's context window.
func overflowed(ctx context.Context, out streamed) bool {
	return out.err != nil && ctx.Err() == nil && len(out.content.Parts) == 0 && clients.IsContextOverflow(out.err)
}

// compress replaces the older part of the history by the model's summary of it, and
// reports whether it did. overflow says the model refused the last request as larger
// than its window: the kept part is then smaller, and the user is told the request goes
// again.
func (s *Session) compress(ctx context.Context, p *promptState, overflow bool) bool {
	window := s.client.ContextWindow()
	if window <= 0 {
		return false
	}
	before := s.requestTokens()
	keep, share := keepFraction, keptShare
	if overflow {
		keep, share = overflowKeepFraction, overflowKeptShare
		// The model said the request does not fit, whatever the estimate says.
		before = max(before, window)
	}
	s.mu.Lock()
	hist := slices.Clone(s.hist)
	s.mu.Unlock()
	cut := splitPoint(hist, keep)
	if cut <= 0 {
		s.logger.Info("history near the context window but cannot be compressed: no turn to cut at",
			"promptTokens", before, "window", window)
		return false
	}
	// Advisory: the hooks cannot stop or change the compression.
	s.fire(ctx, hooks.PreCompress, "auto", map[string]any{"trigger": "auto"})
	summary, usage, err := s.summarise(ctx, hist[:cut], int(summaryShare*float64(window))*4)
	p.usage = addUsage(p.usage, usage)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Warn("history compression failed; keeping the history", "err", err)
		}
		return false
	}
	kept := hist[cut:]
	limit := responseCap(kept, int(share*float64(window))*4)
	next := compressed(summary, shortenResponses(kept, limit))
	after := s.estimate(ctx, next, p)
	if after >= before {
		s.logger.Warn("history compression would not shrink the history; keeping it",
			"tokensBefore", before, "tokensAfter", after)
		return false
	}
	s.mu.Lock()
	s.hist, s.histGen = next, s.histGen+1
	s.mu.Unlock()
	n := len(kept)
	s.persist(record{Type: recCompression, Summary: summary, Kept: &n, Cap: limit})
	s.lastPrompt, s.added = after, 0
	s.logger.Info("history compressed", "tokensBefore", before, "tokensAfter", after,
		"summarised", cut, "kept", n, "responseCap", limit, "overflow", overflow)
	text := fmt.Sprintf("Context compressed from about %d to about %d tokens.", before, after)
	if overflow {
		text = fmt.Sprintf("The request was larger than the model's context window of %d tokens: "+
			"context compressed to about %d tokens, and the request sent again.", window, after)
	}
	s.emit(Update{Kind: UpdateCompression, Text: text,
		Compression: &Compression{TokensBefore: before, TokensAfter: after}})
	return true
}

// responseCap returns the largest length under which the strings of the function
// responses of contents must be cut for the contents to take at most budget bytes (as
// size counts them), but at least minResponseCap; 0 when they fit whole.
func responseCap(contents []clients.Content, budget int) int {
	total := 0
	var lengths []int
	for _, c := range contents {
		total += size(c)
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				for _, v := range fr.Response {
					if str, ok := v.(string); ok {
						lengths = append(lengths, len(str))
					}
				}
			}
		}
	}
	if total <= budget || len(lengths) == 0 {
		return 0
	}
	// Fill the room the rest leaves from the shortest string up: strings shorter than
	// the cap keep their share whole, and the longer ones split what remains.
	slices.Sort(lengths)
	room := budget - total
	for _, n := range lengths {
		room += n
	}
	for i, n := range lengths {
		share := room / (len(lengths) - i)
		if n > share {
			return max(share, minResponseCap)
		}
		room -= n
	}
	return 0
}

// shortenResponses returns contents with every string of their function responses
// longer than limit bytes cut to its head and tail around a marker saying how much was
// left out, as Gemini CLI shortens tool output before summarising (the first fifth of
// what is kept, and the last four fifths). A limit of 0 keeps them whole. contents is
// not changed: it is shared with the session's record.
func shortenResponses(contents []clients.Content, limit int) []clients.Content {
	if limit <= 0 {
		return contents
	}
	out := slices.Clone(contents)
	for i, c := range contents {
		cloned := false
		for j, p := range c.Parts {
			fr := p.FunctionResponse
			if fr == nil || !hasLonger(fr.Response, limit) {
				continue
			}
			nf := *fr
			nf.Response = maps.Clone(fr.Response)
			for k, v := range nf.Response {
				if str, ok := v.(string); ok && len(str) > limit {
					nf.Response[k] = shorten(str, limit)
				}
			}
			if !cloned {
				out[i].Parts, cloned = slices.Clone(c.Parts), true
			}
			p.FunctionResponse = &nf
			out[i].Parts[j] = p
		}
	}
	return out
}

// hasLonger reports whether a function response holds a string longer than limit.
func hasLonger(resp map[string]any, limit int) bool {
	for _, v := range resp {
		if str, ok := v.(string); ok && len(str) > limit {
			return true
		}
	}
	return false
}

// shorten cuts s to about limit bytes: a note, its head, a marker saying how many
// characters were omitted, and its tail, cut on rune boundaries.
func shorten(s string, limit int) string {
	head := limit / 5
	tail := limit - head
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	count := utf8.RuneCountInString
	return fmt.Sprintf("Output too large. Showing the first %d and last %d characters.\n%s\n\n... [%d characters omitted] ...\n\n%s",
		count(s[:head]), count(s[start:]), s[:head], count(s[head:start]), s[start:])
}

// summarise asks the model for a state snapshot of hist, its function responses
// shortened to fit hist in budget bytes.
func (s *Session) summarise(ctx context.Context, hist []clients.Content, budget int) (string, clients.Usage, error) {
	h := shortenResponses(hist, responseCap(hist, budget))
	h = append(slices.Clip(h), clients.Content{Role: clients.RoleUser, Parts: []clients.Part{{Text: compressionRequest}}})
	req := clients.Request{System: compressionPrompt, History: curate(h)}
	var text strings.Builder
	var usage clients.Usage
	for chunk, err := range s.client.Stream(ctx, req) {
		if err != nil {
			return "", usage, fmt.Errorf("summarising the history: %w", err)
		}
		for _, p := range chunk.Parts {
			if !p.Thought && p.FunctionCall == nil {
				text.WriteString(p.Text)
			}
		}
		if chunk.Usage != nil {
			usage = *chunk.Usage
		}
	}
	summary := strings.TrimSpace(text.String())
	if i := strings.Index(summary, "<state_snapshot>"); i >= 0 {
		summary = summary[i:]
		if j := strings.LastIndex(summary, "</state_snapshot>"); j >= 0 {
			summary = summary[:j+len("</state_snapshot>")]
		}
	}
	if summary == "" {
		return "", usage, errors.New("summarising the history: the model's summary is empty")
	}
	return summary, usage, nil
}

// estimate returns the prompt tokens of hist: counted by the model when its client can,
// else the last prompt's count scaled by the history's size.
func (s *Session) estimate(ctx context.Context, hist []clients.Content, p *promptState) int {
	if tc, ok := s.client.(clients.TokenCounter); ok {
		n, err := tc.CountTokens(ctx, clients.Request{System: p.system, History: curate(hist), Tools: p.tools})
		if err == nil {
			return n
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			s.logger.Warn("counting tokens failed; estimating", "err", err)
		}
	}
	s.mu.Lock()
	old := 0
	for _, c := range s.hist {
		old += size(c)
	}
	s.mu.Unlock()
	now := 0
	for _, c := range hist {
		now += size(c)
	}
	if old == 0 {
		return now / 4
	}
	return int(float64(s.requestTokens()) * float64(now) / float64(old))
}
