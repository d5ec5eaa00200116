package rpc

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Code actions (textDocument/codeAction). agentls offers the answers to the pending
// confirmations shown as diagnostics (see askWithoutUI): on the line of such a
// diagnostic, or for the diagnostic itself in the request's context, one quickfix per
// choice ("Allow once", "Allow always", "Reject"; MCP tools have "Always allow this
// tool" and "Always allow this server" instead of "Allow always"), each running
// agentls.confirm with the confirmation's id and the choice's outcome. Clients without
// codeActionLiteralSupport get the commands alone. "Ask agentls to fix this" comes with
// the agent loop.

// codeActionParams are the parts of the textDocument/codeAction params agentls reads.
type codeActionParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Range   protocol.Range `json:"range"`
	Context struct {
		Diagnostics []struct {
			Data *diagnosticData `json:"data"`
		} `json:"diagnostics"`
		Only []string `json:"only"`
	} `json:"context"`
}

// codeAction is an LSP CodeAction that runs a command.
type codeAction struct {
	Title       string       `json:"title"`
	Kind        string       `json:"kind"`
	Diagnostics []diagnostic `json:"diagnostics,omitempty"`
	Command     command      `json:"command"`
}

// command is an LSP Command.
type command struct {
	Title     string `json:"title"`
	Command   string `json:"command"`
	Arguments []any  `json:"arguments"`
}

// confirmArgs are the argument of agentls.confirm.
type confirmArgs struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
}

func (s *Server) codeAction(_ context.Context, params jsonrpc2.RawMessage) (any, error) {
	none := []struct{}{}
	if len(bytes.TrimSpace(params)) == 0 {
		return none, nil
	}
	var p codeActionParams
	if err := decodeParams("textDocument/codeAction", params, &p); err != nil {
		return nil, err
	}
	if p.TextDocument.URI == "" || !wantsKind(p.Context.Only, string(protocol.CodeActionKindQuickFix)) {
		return none, nil
	}
	pending := s.pendingConfirmations()
	if len(pending) == 0 {
		return none, nil
	}
	path, err := s.docPath(p.TextDocument.URI)
	if err != nil {
		return none, nil
	}
	named := map[string]bool{}
	for _, d := range p.Context.Diagnostics {
		if d.Data != nil && d.Data.Confirmation != "" {
			named[d.Data.Confirmation] = true
		}
	}
	var here []markedConfirm
	for _, c := range pending {
		r := c.mark.diag.Range
		onLines := p.Range.Start.Line <= r.End.Line && r.Start.Line <= p.Range.End.Line
		if c.mark.path == path && (onLines || named[c.id]) {
			here = append(here, c)
		}
	}
	literals := s.capabilities().CodeActionLiterals()
	var actions []codeAction
	var commands []command
	for _, c := range here {
		titles, outcomes := messageChoices(c.typ)
		for _, t := range titles {
			title := t
			if len(here) > 1 {
				// Which question is which, when several wait on one line.
				title += " — " + abbreviate(strings.TrimPrefix(c.mark.diag.Message, "agentls asks: "), 80)
			}
			cmd := command{Title: title, Command: cmdConfirm, Arguments: []any{confirmArgs{ID: c.id, Outcome: string(outcomes[t])}}}
			commands = append(commands, cmd)
			actions = append(actions, codeAction{Title: title, Kind: string(protocol.CodeActionKindQuickFix),
				Diagnostics: []diagnostic{c.mark.diag}, Command: cmd})
		}
	}
	switch {
	case len(commands) == 0:
		return none, nil
	case literals:
		return actions, nil
	}
	return commands, nil
}

// wantsKind reports whether a code action of kind is wanted by a request restricted to
// only (empty: any). A kind is wanted by itself and by any kind it refines.
func wantsKind(only []string, kind string) bool {
	return len(only) == 0 || slices.ContainsFunc(only, func(o string) bool {
		return o == kind || strings.HasPrefix(kind, o+".")
	})
}
