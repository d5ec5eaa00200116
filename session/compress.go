package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentls/agentls/clients"
)

// Compression thresholds: history is compressed when the last request used more than
// compressAt of the model's context window; the newest keepFraction of it (by size)
// stays verbatim.
const (
	compressAt   = 0.7
	keepFraction = 0.3
)

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
// that about keepFraction of it (by size) is kept. Cuts fall before a user turn that is
// not a set of function responses: the first after the first 1-keepFraction of hist,
// else the last before it. A history without such a turn (one long prompt) is cut
// before a model turn that follows a user turn, chosen the same way; the summary then
// stands in for that user turn. A cut never separates calls from their responses. It
// returns 0 when there is no cut.
func splitPoint(hist []clients.Content) int {
	sizes := make([]int, len(hist))
	total := 0
	for i, c := range hist {
		sizes[i] = size(c)
		total += sizes[i]
	}
	target := int(float64(total) * (1 - keepFraction))
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

// maybeCompress compresses the history when the last request passed compressAt of the
// context window. A failed summary keeps the history as it is, and no other attempt is
// made in this prompt.
func (s *Session) maybeCompress(ctx context.Context, p *promptState) {
	window := s.client.ContextWindow()
	if window <= 0 || p.noCompress || float64(s.lastPrompt) <= compressAt*float64(window) {
		return
	}
	s.mu.Lock()
	hist := slices.Clone(s.hist)
	s.mu.Unlock()
	cut := splitPoint(hist)
	if cut <= 0 {
		s.logger.Info("history near the context window but cannot be compressed: no turn to cut at",
			"promptTokens", s.lastPrompt, "window", window)
		p.noCompress = true
		return
	}
	summary, usage, err := s.summarise(ctx, hist[:cut])
	p.usage = addUsage(p.usage, usage)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Warn("history compression failed; keeping the history", "err", err)
		}
		p.noCompress = true
		return
	}
	next := compressed(summary, hist[cut:])
	before := s.lastPrompt
	after := s.estimate(ctx, next, p)
	if after >= before {
		s.logger.Warn("history compression would not shrink the history; keeping it",
			"tokensBefore", before, "tokensAfter", after)
		p.noCompress = true
		return
	}
	s.mu.Lock()
	s.hist = next
	s.mu.Unlock()
	kept := len(hist) - cut
	s.persist(record{Type: recCompression, Summary: summary, Kept: &kept})
	s.lastPrompt = after
	s.logger.Info("history compressed", "tokensBefore", before, "tokensAfter", after, "summarised", cut, "kept", kept)
	s.emit(Update{Kind: UpdateCompression,
		Text:        fmt.Sprintf("Context compressed from %d to about %d tokens.", before, after),
		Compression: &Compression{TokensBefore: before, TokensAfter: after}})
}

// summarise asks the model for a state snapshot of hist.
func (s *Session) summarise(ctx context.Context, hist []clients.Content) (string, clients.Usage, error) {
	h := append(slices.Clone(hist), clients.Content{Role: clients.RoleUser, Parts: []clients.Part{{Text: compressionRequest}}})
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
		s.logger.Warn("counting tokens failed; estimating", "err", err)
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
	return int(float64(s.lastPrompt) * float64(now) / float64(old))
}
