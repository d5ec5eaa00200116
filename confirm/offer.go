package confirm

import (
	"fmt"
	"strings"
)

// Offer returns the answers a person is offered when asked about c, in the order to
// show them: allow once; allow always, for the session, with what it covers spelled
// out (the command's programs, the tool, the MCP server's tool or the server, or every
// edit); allow always and save it as a rule in the user's settings; reject; and
// reject always, for the session. Every front end shows exactly these, so an answer
// means the same wherever it is given. "Always" is offered only where RememberIn
// would remember it (never for a command asked about every time), and "save" only
// where RuleFor gives a rule the user's settings can keep; a question asked every
// time (NoAlways) offers allow once and reject alone. A question with choices of its
// own gets those, with their IDs; ask_user's questions get none.
func (p *Policy) Offer(c Call) []Choice {
	if c.Details == nil {
		return nil
	}
	if len(c.Details.Choices) > 0 {
		return WithIDs(c.Details.Choices)
	}
	var ex *execInfo
	if c.Details.Type == TypeExecute {
		ex = p.analyze(c.Details)
	}
	return p.offer(c, ex)
}

// offer is Offer for a call without choices of its own, with its analysis ex.
func (p *Policy) offer(c Call, ex *execInfo) []Choice {
	d := c.Details
	if d.Type == TypeAsk {
		return nil
	}
	basic := OnceOrReject()
	once, reject := basic[0], basic[1]
	if d.NoAlways {
		return basic
	}
	out := []Choice{once}
	// what is what an "always" answer allows, in words; saved is the outcome whose
	// rule the "save" choice writes, with the same reach for the session.
	var what string
	saved := ProceedAlways
	switch d.Type {
	case TypeExecute:
		if keys := allowKeys(c, ex, ProceedAlways); len(keys) > 0 {
			what = strings.Join(ex.analysis.Roots, ", ")
			out = append(out, Choice{ID: ChoiceAlways, Outcome: ProceedAlways, Covers: what,
				Label: "Always allow " + what + " for this session"})
		}
	case TypeMCP:
		what = fmt.Sprintf("%s of %s", d.Tool, serverOf(c))
		saved = ProceedAlwaysTool
		out = append(out, Choice{ID: ChoiceAlways, Outcome: ProceedAlwaysTool, Covers: what,
			Label: "Always allow " + what + " for this session"})
		if server := serverOf(c); server != "" {
			out = append(out, Choice{ID: ChoiceAlwaysServer, Outcome: ProceedAlwaysServer, Covers: "every tool of " + server,
				Label: "Always allow every tool of " + server + " for this session"})
		}
	case TypeEdit:
		out = append(out, Choice{ID: ChoiceAlways, Outcome: ProceedAlways, Covers: "every edit",
			Label: "Allow every edit for this session"})
		// The saved rule is the tool's, not every edit: the settings keep it for
		// every session, where the session's "every edit" ends with it.
		what, saved = c.Tool, ProceedAlwaysTool
	default:
		what = c.Tool
		out = append(out, Choice{ID: ChoiceAlways, Outcome: ProceedAlways, Covers: what,
			Label: "Always allow " + what + " for this session"})
	}
	if what != "" && p.savable(c, saved) {
		out = append(out, Choice{ID: ChoiceAlwaysSave, Outcome: saved, Covers: what, Persist: ScopeUser,
			Label: "Always allow " + what + ", and save it in your settings"})
	}
	out = append(out, reject)
	rejected := c.Tool
	switch {
	case ex != nil && len(ex.analysis.Roots) > 0:
		rejected = strings.Join(ex.analysis.Roots, ", ")
	case ex != nil:
		rejected = "this command line"
	case d.Type == TypeMCP:
		rejected = fmt.Sprintf("%s of %s", d.Tool, serverOf(c))
	}
	return append(out, Choice{ID: ChoiceRejectAlways, Outcome: RejectAlways, Covers: rejected,
		Label: "Always reject " + rejected + " for this session"})
}

// OnceOrReject returns the answers of a question whose answer holds for this call
// alone: allow once, and reject.
func OnceOrReject() []Choice {
	return []Choice{
		{ID: ChoiceOnce, Outcome: ProceedOnce, Label: "Allow once"},
		{ID: ChoiceReject, Outcome: Cancel, Label: "Reject"},
	}
}

// savable reports whether an "always" answer o to c can be saved in the user's
// settings: RuleFor gives a rule for it, and no program of the rule is run by its
// path, which would be another program in every other workspace.
func (p *Policy) savable(c Call, o Outcome) bool {
	r, err := p.RuleFor(c, o)
	if err != nil {
		return false
	}
	for _, prefix := range r.CommandPrefix {
		if RunByPath(prefix) {
			return false
		}
	}
	return true
}

// RunByPath reports whether a command prefix runs its program by a path ("./x",
// "bin/x") rather than by a name looked up in PATH, after any assignments.
func RunByPath(prefix string) bool {
	for _, w := range strings.Fields(prefix) {
		if strings.Contains(w, "=") && !strings.HasPrefix(w, "=") {
			continue // NAME=value before the program
		}
		return strings.ContainsRune(w, '/')
	}
	return false
}

// WithIDs returns a question's own choices with an ID each: its outcome where it has
// none.
func WithIDs(choices []Choice) []Choice {
	out := make([]Choice, len(choices))
	for i, c := range choices {
		if c.ID == "" {
			c.ID = string(c.Outcome)
		}
		out[i] = c
	}
	return out
}
