package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentls/agentls/tools"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Code actions (textDocument/codeAction). agentls offers:
//
//   - the answers to the pending confirmations shown as diagnostics (see askWithoutUI):
//     on the line of such a diagnostic, or for the diagnostic itself in the request's
//     context, one quickfix per choice ("Allow once", "Allow always", "Reject"; MCP
//     tools have "Always allow this tool" and "Always allow this server" instead of
//     "Allow always", and a question asked every time only "Allow once" and
//     "Reject"), each running agentls.confirm with the confirmation's id and the
//     choice's outcome;
//   - where the server has a model, "Ask agentls to fix this" (quickfix) for each
//     diagnostic in the request's context, whoever published it, which runs
//     agentls.prompt with the diagnostic's text and the lines of its range;
//   - where the server has a model, "Run agentls instruction" (refactor.rewrite) on a
//     line of the request's range that contains "agentls:", which runs agentls.prompt
//     with the rest of the line as the prompt and the file and line as its context.
//
// Clients without codeActionLiteralSupport get the commands alone.

// codeActionParams are the parts of the textDocument/codeAction params agentls reads.
type codeActionParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Range   protocol.Range `json:"range"`
	Context struct {
		// The diagnostics stay raw: they may be any server's, with data of any shape,
		// and go back as they came in the actions about them.
		Diagnostics []json.RawMessage `json:"diagnostics"`
		Only        []string          `json:"only"`
	} `json:"context"`
}

// contextDiagnostic is what agentls reads of a diagnostic of the request's context.
type contextDiagnostic struct {
	Range    protocol.Range  `json:"range"`
	Severity int             `json:"severity"`
	Source   string          `json:"source"`
	Message  string          `json:"message"`
	Data     json.RawMessage `json:"data"`
}

// confirmation returns the id of the confirmation a diagnostic of agentls's asks.
func (d contextDiagnostic) confirmation() string {
	var data diagnosticData
	if d.Source != sourceAgentls || len(d.Data) == 0 || json.Unmarshal(d.Data, &data) != nil {
		return ""
	}
	return data.Confirmation
}

// codeAction is an LSP CodeAction that runs a command.
type codeAction struct {
	Title       string  `json:"title"`
	Kind        string  `json:"kind"`
	Diagnostics []any   `json:"diagnostics,omitempty"`
	Command     command `json:"command"`
}

// command is an LSP Command.
type command struct {
	Title     string `json:"title"`
	Command   string `json:"command"`
	Arguments []any  `json:"arguments"`
}

// confirmArgs are the argument of agentls.confirm.
type confirmArgs struct {
	ID string `json:"id"`
	answerFields
}

// The titles of the code actions that prompt.
const (
	titleFix         = "Ask agentls to fix this"
	titleInstruction = "Run agentls instruction"
	// instructionMarker marks a line whose rest is an instruction for agentls.
	instructionMarker = "agentls:"
	// maxInstructionLines bounds the lines of a range searched for an instruction.
	maxInstructionLines = 200
)

func (s *Server) codeAction(_ context.Context, params jsonrpc2.RawMessage) (any, error) {
	none := []struct{}{}
	if len(bytes.TrimSpace(params)) == 0 {
		return none, nil
	}
	var p codeActionParams
	if err := decodeParams("textDocument/codeAction", params, &p); err != nil {
		return nil, err
	}
	if p.TextDocument.URI == "" {
		return none, nil
	}
	path, err := s.docPath(p.TextDocument.URI)
	if err != nil {
		return none, nil
	}
	diags := make([]contextDiagnostic, len(p.Context.Diagnostics))
	for i, raw := range p.Context.Diagnostics {
		if err := json.Unmarshal(raw, &diags[i]); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params for textDocument/codeAction: context.diagnostics[%d]: %v", i, err)
		}
	}
	var actions []codeAction
	if wantsKind(p.Context.Only, string(protocol.CodeActionKindQuickFix)) {
		actions = append(actions, s.confirmationActions(path, p.Range, diags)...)
		if s.opts.NewClient != nil {
			actions = append(actions, s.fixActions(p.TextDocument.URI, path, p.Context.Diagnostics, diags)...)
		}
	}
	if s.opts.NewClient != nil && wantsKind(p.Context.Only, string(protocol.CodeActionKindRefactorRewrite)) {
		actions = append(actions, s.instructionActions(p.TextDocument.URI, path, p.Range)...)
	}
	switch {
	case len(actions) == 0:
		return none, nil
	case s.capabilities().CodeActionLiterals():
		return actions, nil
	}
	commands := make([]command, len(actions))
	for i, a := range actions {
		commands[i] = a.Command
	}
	return commands, nil
}

// confirmationActions are the answers to the confirmations pending at path on the lines
// of r, or named by a diagnostic of the context.
func (s *Server) confirmationActions(path string, r protocol.Range, diags []contextDiagnostic) []codeAction {
	pending := s.pendingConfirmations()
	if len(pending) == 0 {
		return nil
	}
	named := map[string]bool{}
	for _, d := range diags {
		if id := d.confirmation(); id != "" {
			named[id] = true
		}
	}
	var here []markedConfirm
	for _, c := range pending {
		cr := c.mark.diag.Range
		onLines := r.Start.Line <= cr.End.Line && cr.Start.Line <= r.End.Line
		if c.mark.path == path && (onLines || named[c.id]) {
			here = append(here, c)
		}
	}
	var actions []codeAction
	for _, c := range here {
		titles, answers := messageChoices(c.details)
		for _, t := range titles {
			title := t
			if len(here) > 1 {
				// Which question is which, when several wait on one line.
				title += " — " + tools.Abbreviate(strings.TrimPrefix(c.mark.diag.Message, "agentls asks: "), 80)
			}
			cmd := command{Title: title, Command: cmdConfirm, Arguments: []any{confirmArgs{ID: c.id, answerFields: answerFields{Choice: answers[t].Choice, Outcome: string(answers[t].Outcome)}}}}
			actions = append(actions, codeAction{Title: title, Kind: string(protocol.CodeActionKindQuickFix),
				Diagnostics: []any{c.mark.diag}, Command: cmd})
		}
	}
	return actions
}

// fixActions are "Ask agentls to fix this" for the diagnostics of the context: every
// one but agentls's own notes on pending calls and its questions.
func (s *Server) fixActions(docURI, path string, raw []json.RawMessage, diags []contextDiagnostic) []codeAction {
	var idx []int
	for i, d := range diags {
		own := d.Source == sourceAgentls && (d.Severity == severityInformation || d.confirmation() != "")
		if strings.TrimSpace(d.Message) != "" && !own {
			idx = append(idx, i)
		}
	}
	var actions []codeAction
	for _, i := range idx {
		d := diags[i]
		text := oneLine(d.Message, maxDiagnosticMessage)
		if d.Source != "" {
			text = d.Source + ": " + text
		}
		first, last := d.Range.Start.Line, d.Range.End.Line
		if last > first && d.Range.End.Character == 0 {
			last--
		}
		where := s.relPath(path) + ":" + strconv.Itoa(int(first)+1)
		if last > first {
			where += "-" + strconv.Itoa(int(last)+1)
		}
		args := promptArgs{
			Prompt: fmt.Sprintf("Fix this problem reported at %s: %s", where, text),
			URI:    docURI,
			// The whole lines of the diagnostic: they are its selection.
			Range:      &protocol.Range{Start: protocol.Position{Line: first}, End: protocol.Position{Line: last + 1}},
			Diagnostic: text,
		}
		title := titleFix
		if len(idx) > 1 {
			title = "Ask agentls to fix: " + tools.Abbreviate(oneLine(d.Message, 200), 80)
		}
		actions = append(actions, codeAction{Title: title, Kind: string(protocol.CodeActionKindQuickFix),
			Diagnostics: []any{raw[i]}, Command: command{Title: title, Command: cmdPrompt, Arguments: []any{args}}})
	}
	return actions
}

// instructionActions is "Run agentls instruction" for the first line of r that
// contains "agentls:" followed by an instruction.
func (s *Server) instructionActions(docURI, path string, r protocol.Range) []codeAction {
	text, ok := s.documentText(path)
	if !ok {
		return nil
	}
	line := uint32(0)
	for l := range strings.Lines(text) {
		if line > r.End.Line || line >= r.Start.Line+maxInstructionLines {
			break
		}
		if line >= r.Start.Line {
			if instr := instruction(l); instr != "" {
				args := promptArgs{Prompt: instr, URI: docURI,
					Range: &protocol.Range{Start: protocol.Position{Line: line}, End: protocol.Position{Line: line + 1}}}
				return []codeAction{{Title: titleInstruction, Kind: string(protocol.CodeActionKindRefactorRewrite),
					Command: command{Title: titleInstruction, Command: cmdPrompt, Arguments: []any{args}}}}
			}
		}
		line++
	}
	return nil
}

// instruction returns what follows "agentls:" on line, without the end of a comment
// that may close it; "" if there is none.
func instruction(line string) string {
	_, rest, ok := strings.Cut(line, instructionMarker)
	if !ok {
		return ""
	}
	rest = strings.TrimSpace(rest)
	for _, closer := range []string{"*/", "-->", "--}}", "#}", "%>", "*)", "-}"} {
		rest = strings.TrimSpace(strings.TrimSuffix(rest, closer))
	}
	return rest
}

// wantsKind reports whether a code action of kind is wanted by a request restricted to
// only (empty: any). A kind is wanted by itself and by any kind it refines.
func wantsKind(only []string, kind string) bool {
	return len(only) == 0 || slices.ContainsFunc(only, func(o string) bool {
		return o == kind || strings.HasPrefix(kind, o+".")
	})
}
