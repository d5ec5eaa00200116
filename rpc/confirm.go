package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
)

// Confirmations: the server is the scheduler's confirm.Asker. How a question reaches a
// person depends on the client:
//
//   - rich clients (experimental.agentls.confirm) get agentls/confirm with the
//     ConfirmDetails of docs/protocol.md and answer with an Outcome;
//   - others get window/showMessageRequest where they advertise window.showMessage,
//     with a choice of titles (an answer that is not one of them, none, an error,
//     MethodNotFound or no answer within Options.ConfirmTimeout is a refusal);
//   - clients with neither (Helix) see the pending confirmation as a diagnostic, with
//     code actions that answer it (askWithoutUI).
//
// Whatever the path, a pending confirmation can also be answered by its id with
// agentls.confirm (the code actions of the diagnostic path use that), and the first
// answer wins. No answer is ever consent.

// confirmations are the confirmations waiting for an answer, by id.
type confirmations struct {
	mu      sync.Mutex
	pending map[string]chan confirm.Answer
}

// add registers the confirmation id and returns the channel its out-of-band answer
// arrives on, and the function that unregisters it.
func (c *confirmations) add(id string) (<-chan confirm.Answer, func()) {
	ch := make(chan confirm.Answer, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.pending = map[string]chan confirm.Answer{}
	}
	c.pending[id] = ch
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		if c.pending[id] == ch {
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}
}

// answer delivers an answer to the pending confirmation id; it reports false if there
// is none (or it has been answered already).
func (c *confirmations) answer(id string, a confirm.Answer) bool {
	c.mu.Lock()
	ch, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
	}
	c.mu.Unlock()
	if ok {
		ch <- a
	}
	return ok
}

// answerFields are the fields of an answer to a confirmation, in agentls/confirm's
// result and agentls.confirm's argument: the chosen choice's id, or an outcome (and
// the content modify_with_editor carries), with the hunks accepted and the scope to
// save the approval in, any of which may be absent.
type answerFields struct {
	Choice        string  `json:"choice,omitzero"`
	Outcome       string  `json:"outcome,omitzero"`
	Content       *string `json:"content,omitzero"`
	AcceptedHunks []int   `json:"acceptedHunks,omitzero"`
	Persist       string  `json:"persist,omitzero"`
}

// parseAnswer validates the fields of an answer. Whether a choice was offered is the
// scheduler's to check, against the question (confirm.Answer.Resolve).
func parseAnswer(f answerFields) (confirm.Answer, error) {
	o := confirm.Outcome(f.Outcome)
	if !o.Valid() && (f.Choice == "" || f.Outcome != "") {
		return confirm.Answer{}, fmt.Errorf("%q is not an outcome (want a \"choice\" id of the question's choices, or an outcome: proceed_once, proceed_always, proceed_always_server, proceed_always_tool, modify_with_editor, cancel or reject_always)", f.Outcome)
	}
	a := confirm.Answer{Choice: f.Choice, Outcome: o, AcceptedHunks: f.AcceptedHunks, Persist: confirm.Scope(f.Persist)}
	content := f.Content
	if o == confirm.ModifyWithEditor {
		if content == nil {
			return confirm.Answer{}, errors.New(`modify_with_editor must carry "content", the edited version of the proposal`)
		}
		a.Content = *content
	}
	return a, nil
}

// Ask implements confirm.Asker.
func (s *Server) Ask(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // takes down the editor's dialog when the answer came another way

	caps := s.capabilities()
	if req.Details.Type == confirm.TypeAsk {
		// Questions are answered with the person's words, which agentls.confirm (an
		// outcome) does not carry: it is not registered for them, so that it says no
		// such confirmation is pending instead of accepting an answer it drops.
		return s.askQuestions(ctx, caps, req)
	}
	answered, unregister := s.confirms.add(req.ID)
	defer unregister()
	type reply struct {
		a   confirm.Answer
		err error
	}
	asked := make(chan reply, 1)
	var ask func(context.Context, confirm.Request) (confirm.Answer, error)
	switch {
	case caps.RichConfirm():
		ask = s.askRich
	case caps.ShowMessageRequest():
		ask = s.askMessage
	default:
		hide, err := s.askWithoutUI(caps, req)
		if err != nil {
			return confirm.Answer{}, err
		}
		// Taken down before the answer is acted on.
		defer hide()
		ask = s.awaitAnswer
	}
	go func() {
		a, err := ask(ctx, req)
		asked <- reply{a, err}
	}()
	var a confirm.Answer
	select {
	case r := <-asked:
		if r.err != nil {
			return r.a, r.err
		}
		a = r.a
	case a = <-answered:
		s.log.Info("confirmation answered with agentls.confirm", "id", req.ID, "outcome", a.Outcome)
	case <-ctx.Done():
		return confirm.Answer{}, ctx.Err()
	}
	// The scheduler checks the answer against the question, and refuses the call
	// when it is invalid.
	return a, nil
}

// confirmDetails are the params of agentls/confirm (ConfirmDetails in docs/protocol.md):
// the common fields and those of the confirmation's type; the others are left out.
type confirmDetails struct {
	ID         string       `json:"id"`
	ToolCallID string       `json:"toolCallId"`
	ToolName   string       `json:"toolName"`
	Type       confirm.Type `json:"type"`
	Title      string       `json:"title"`

	// edit: originalContent is a JSON string, or null for a new file.
	URI             string          `json:"uri,omitzero"`
	Path            string          `json:"path,omitzero"`
	Diff            *string         `json:"diff,omitzero"`
	OriginalContent json.RawMessage `json:"originalContent,omitzero"`
	NewContent      *string         `json:"newContent,omitzero"`
	Hunks           []confirm.Hunk  `json:"hunks,omitzero"`

	// execute
	Command      *string  `json:"command,omitzero"`
	RootCommands []string `json:"rootCommands,omitzero"`
	Directory    *string  `json:"directory,omitzero"`

	// mcp
	Server    *string         `json:"server,omitzero"`
	Tool      *string         `json:"tool,omitzero"`
	Arguments json.RawMessage `json:"arguments,omitzero"`

	// info
	Prompt *string  `json:"prompt,omitzero"`
	URLs   []string `json:"urls,omitzero"`

	// ask_user (an extension, to clients that declared experimental.agentls.askUser)
	Questions []confirm.Question `json:"questions,omitzero"`

	Choices []confirm.Choice `json:"choices,omitzero"`
}

func newConfirmDetails(req confirm.Request) confirmDetails {
	d := req.Details
	cd := confirmDetails{ID: req.ID, ToolCallID: req.ToolCallID, ToolName: req.ToolName, Type: d.Type, Title: d.Title,
		Choices: d.Choices}
	switch d.Type {
	case confirm.TypeEdit:
		cd.URI, cd.Path, cd.Diff, cd.NewContent = string(uri.File(d.Path)), d.Path, &d.Diff, &d.NewContent
		cd.Hunks = d.Hunks
		cd.OriginalContent = json.RawMessage("null")
		if d.OriginalContent != nil {
			orig, err := json.Marshal(*d.OriginalContent)
			if err == nil {
				cd.OriginalContent = orig
			}
		}
	case confirm.TypeExecute:
		cd.Command, cd.Directory = &d.Command, &d.Directory
		cd.RootCommands = append([]string{}, d.RootCommands...)
	case confirm.TypeMCP:
		cd.Server, cd.Tool, cd.Arguments = &d.Server, &d.Tool, d.Arguments
		if len(cd.Arguments) == 0 {
			cd.Arguments = json.RawMessage("{}")
		}
	case confirm.TypeInfo:
		cd.Prompt, cd.URLs = &d.Prompt, d.URLs
	case confirm.TypeAsk:
		cd.Questions = d.Questions
	}
	return cd
}

// confirmResult is the result of agentls/confirm.
type confirmResult struct {
	answerFields
	// Answers answer the questions of an ask_user confirmation.
	Answers map[string]string `json:"answers"`
}

// askRich puts the confirmation to a rich client with agentls/confirm.
func (s *Server) askRich(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	var res *confirmResult
	if err := s.call(ctx, "agentls/confirm", newConfirmDetails(req), &res); err != nil {
		return confirm.Answer{}, fmt.Errorf("agentls/confirm failed: %w", err)
	}
	if res == nil {
		return confirm.Answer{}, errors.New("the editor answered agentls/confirm with null")
	}
	a, err := parseAnswer(res.answerFields)
	if err != nil {
		return confirm.Answer{}, fmt.Errorf("the editor's answer to agentls/confirm is invalid: %w", err)
	}
	a.Answers = res.Answers
	return a, nil
}

// askQuestions puts ask_user's questions: with agentls/confirm to clients that declared
// experimental.agentls.askUser, else one window/showMessageRequest per question where
// every question has choices (a free-form answer has no place there). Elsewhere it
// refuses, saying why; no answer is never an answer.
func (s *Server) askQuestions(ctx context.Context, caps ClientCapabilities, req confirm.Request) (confirm.Answer, error) {
	if caps.RichAsk() {
		return s.askRich(ctx, req)
	}
	if !caps.ShowMessageRequest() {
		return confirm.Answer{}, errors.New("the editor cannot put questions to the user: it supports neither agentls/confirm with ask_user (experimental.agentls.askUser) nor window/showMessageRequest")
	}
	for i, q := range req.Details.Questions {
		if len(q.Choices()) == 0 {
			return confirm.Answer{}, fmt.Errorf("question %d asks for a free-form answer, which the editor cannot take: it supports only window/showMessageRequest, whose answers are choices; ask with options instead", i+1)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConfirmTimeout)
	defer cancel()
	answers := map[string]string{}
	for i, q := range req.Details.Questions {
		choices := q.Choices()
		actions := make([]protocol.MessageActionItem, len(choices))
		for j, c := range choices {
			actions[j] = protocol.MessageActionItem{Title: c}
		}
		var chosen *protocol.MessageActionItem
		err := s.call(ctx, "window/showMessageRequest", protocol.ShowMessageRequestParams{
			Type: protocol.MessageTypeInfo, Message: questionMessage(i, len(req.Details.Questions), q), Actions: actions,
		}, &chosen)
		switch {
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
			return confirm.Answer{}, fmt.Errorf("no answer to the questions within %s", s.opts.ConfirmTimeout)
		case err != nil:
			return confirm.Answer{}, fmt.Errorf("window/showMessageRequest failed: %w", err)
		case chosen == nil:
			// Dismissing a question dismisses them all, as closing Gemini CLI's dialog does.
			return confirm.Answer{Outcome: confirm.Cancel}, nil
		case !slices.Contains(choices, chosen.Title):
			return confirm.Answer{}, fmt.Errorf("the editor answered %q, which is not one of the choices offered (%s)", chosen.Title, strings.Join(choices, ", "))
		}
		answers[strconv.Itoa(i)] = chosen.Title
	}
	return confirm.Answer{Outcome: confirm.ProceedOnce, Answers: answers}, nil
}

// questionMessage is the text of one question put with window/showMessageRequest.
func questionMessage(i, n int, q confirm.Question) string {
	var b strings.Builder
	b.WriteString("agentls asks")
	if n > 1 {
		fmt.Fprintf(&b, " (%d of %d)", i+1, n)
	}
	if q.Header != "" {
		fmt.Fprintf(&b, " [%s]", q.Header)
	}
	b.WriteString(": " + q.Question)
	for _, o := range q.Options {
		if o.Description != "" {
			fmt.Fprintf(&b, "\n- %s: %s", o.Label, o.Description)
		}
	}
	if q.MultiSelect {
		b.WriteString("\n(Choose the one that matters most: this editor offers one choice.)")
	}
	return b.String()
}

// messageChoices returns the titles offered for a confirmation, the labels of its
// choices (confirm.Details.Choices, the same in every front end), and the answer of
// each.
func messageChoices(d confirm.Details) ([]string, map[string]confirm.Answer) {
	titles := make([]string, len(d.Choices))
	answers := make(map[string]confirm.Answer, len(d.Choices))
	for i, c := range d.Choices {
		titles[i], answers[c.Label] = c.Label, confirm.Answer{Choice: c.ID, Outcome: c.Outcome, Persist: c.Persist}
	}
	return titles, answers
}

// askMessage puts the confirmation with window/showMessageRequest.
func (s *Server) askMessage(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	titles, answers := messageChoices(req.Details)
	actions := make([]protocol.MessageActionItem, len(titles))
	for i, t := range titles {
		actions[i] = protocol.MessageActionItem{Title: t}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConfirmTimeout)
	defer cancel()
	var chosen *protocol.MessageActionItem
	err := s.call(ctx, "window/showMessageRequest", protocol.ShowMessageRequestParams{
		Type: protocol.MessageTypeWarning, Message: confirmMessage(req), Actions: actions,
	}, &chosen)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return confirm.Answer{}, fmt.Errorf("no answer to the confirmation within %s", s.opts.ConfirmTimeout)
	case err != nil:
		return confirm.Answer{}, fmt.Errorf("window/showMessageRequest failed: %w", err)
	case chosen == nil:
		return confirm.Answer{}, errors.New("the confirmation was dismissed without a choice")
	}
	a, ok := answers[chosen.Title]
	if !ok {
		return confirm.Answer{}, fmt.Errorf("the editor answered %q, which is not one of the choices offered (%s)", chosen.Title, strings.Join(titles, ", "))
	}
	return a, nil
}

// confirmMessage is the text of a showMessageRequest confirmation.
func confirmMessage(req confirm.Request) string {
	d := req.Details
	var b strings.Builder
	fmt.Fprintf(&b, "agentls: allow %s? %s", req.ToolName, d.Title)
	switch d.Type {
	case confirm.TypeEdit:
		b.WriteString("\n\n")
		b.WriteString(abbreviateLines(d.Diff, 40))
	case confirm.TypeExecute:
		fmt.Fprintf(&b, "\n\nCommand: %s\nDirectory: %s", d.Command, d.Directory)
	case confirm.TypeMCP:
		fmt.Fprintf(&b, "\n\nMCP server %s, tool %s, arguments %s", d.Server, d.Tool, tools.Abbreviate(string(d.Arguments), 500))
	case confirm.TypeInfo:
		if d.Prompt != "" {
			b.WriteString("\n\n" + d.Prompt)
		}
		for _, u := range d.URLs {
			b.WriteString("\n" + u)
		}
	}
	return b.String()
}

// abbreviateLines keeps the first n lines of s, saying how many were left out.
func abbreviateLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("… (%d more lines)", len(lines)-n)
}

// askWithoutUI puts a confirmation to a client that has neither agentls/confirm nor
// window/showMessageRequest, such as Helix: as a diagnostic (Warning, source agentls)
// whose code actions (codeactions.go) answer it through agentls.confirm, which ends the
// wait in Ask. The diagnostic goes where the call is: the first of its files (or the
// file of an edit) that is open in the editor, else the first that exists, else, for a
// call that names no file (a shell command), the open document the user last opened
// or changed. With no document open, or without diagnostics, the call is refused,
// saying why. hide takes the diagnostic down.
func (s *Server) askWithoutUI(caps ClientCapabilities, req confirm.Request) (hide func(), err error) {
	const cannot = "the editor cannot ask for confirmation: it supports neither agentls/confirm nor window/showMessageRequest"
	const instead = "Allow the tool with a policy rule in the settings, or switch the approval mode with the agentls.setApprovalMode command"
	if !caps.Diagnostics() {
		return nil, fmt.Errorf("%s, nor diagnostics, where agentls would show the question. %s", cannot, instead)
	}
	path, ok := s.confirmationPath(req)
	if !ok {
		return nil, fmt.Errorf("%s, and agentls shows the question as a diagnostic on the call's file or on an open document, "+
			"but no document is open. Open a file and run the call again, or: %s", cannot, instead)
	}
	titles, _ := messageChoices(req.Details)
	msg := fmt.Sprintf("agentls asks: allow %s? %s — answer with a code action on this line: %s (agentls.confirm %s).",
		req.ToolName, questionText(req.Details), strings.Join(titles, ", "), req.ID)
	s.log.Info("confirmation shown as a diagnostic", "id", req.ID, "path", path)
	return s.showConfirmation(req, path, msg), nil
}

// questionText says in one line what a confirmation asks about, for a diagnostic.
func questionText(d confirm.Details) string {
	text := d.Title
	switch d.Type {
	case confirm.TypeExecute:
		text += ": " + d.Command
	case confirm.TypeMCP:
		text += fmt.Sprintf(" (MCP server %s, tool %s)", d.Server, d.Tool)
	case confirm.TypeInfo:
		if d.Prompt != "" {
			text += ": " + d.Prompt
		}
	}
	return oneLine(strings.ReplaceAll(text, "\n", " "), maxDiagnosticMessage)
}

// confirmationPath returns the file a confirmation without UI is shown on (see
// askWithoutUI).
func (s *Server) confirmationPath(req confirm.Request) (string, bool) {
	var candidates []string
	if req.Details.Path != "" {
		candidates = append(candidates, req.Details.Path)
	}
	for _, l := range s.callLocations(req.ToolCallID) {
		candidates = append(candidates, l.Path)
	}
	for _, p := range candidates {
		if s.docs.isOpen(p) {
			return p, true
		}
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, true
		}
	}
	return s.docs.activePath()
}

// awaitAnswer waits for an answer given with agentls.confirm (which Ask receives) for
// up to Options.ConfirmTimeout.
func (s *Server) awaitAnswer(ctx context.Context, _ confirm.Request) (confirm.Answer, error) {
	t := time.NewTimer(s.opts.ConfirmTimeout)
	defer t.Stop()
	select {
	case <-t.C:
		return confirm.Answer{}, fmt.Errorf("no answer to the confirmation within %s", s.opts.ConfirmTimeout)
	case <-ctx.Done():
		return confirm.Answer{}, ctx.Err()
	}
}
