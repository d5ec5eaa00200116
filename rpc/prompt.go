package rpc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Prompts: the protocol of agentls.prompt, agentls/prompt and agentls.listSessions over
// the workspace's session.Host, which hosts the sessions (open, resume from the store
// under Options.StateDir, one prompt at a time, the idle cache, call ids, cancellation).
//
// The host's update stream (onUpdate) reaches the editor as follows: the tool calls of
// a session go to the same observers as the calls of agentls.runTool (agentls/update,
// progress, diagnostics, confirmations); what the model says reaches rich clients
// (experimental.agentls.updates) as agentls/update (message and thought chunks,
// coalesced; turn_end; compression; plan from write_todos). Other clients get a
// Markdown transcript of the session (transcript.go), which window/showDocument opens
// when the session's first prompt in this server ends, and a window/showMessage at the
// end of every prompt. What the server keeps of a session for this is its sessionView.

// promptArgs are the arguments of agentls.prompt and the params of agentls/prompt.
type promptArgs struct {
	Prompt  string          `json:"prompt"`
	Session string          `json:"session"`
	URI     string          `json:"uri"`
	Range   *protocol.Range `json:"range"`
	// Diagnostic is the text of a diagnostic the prompt is about: an extension the
	// "Ask agentls to fix this" code action fills in.
	Diagnostic string `json:"diagnostic"`
}

// promptResult is PromptResult, with two extensions: error, for stopReason "error",
// and transcript, the file of the session's transcript for clients that get one.
type promptResult struct {
	Session    string             `json:"session"`
	StopReason session.StopReason `json:"stopReason"`
	Text       string             `json:"text"`
	Usage      *usage             `json:"usage,omitzero"`
	Error      *promptError       `json:"error,omitzero"`
	Transcript string             `json:"transcript,omitzero"`
}

type promptError struct {
	Message string `json:"message"`
}

// usage is the protocol's usage object.
type usage struct {
	InputTokens   int `json:"inputTokens"`
	OutputTokens  int `json:"outputTokens"`
	ThoughtTokens int `json:"thoughtTokens,omitzero"`
	TotalTokens   int `json:"totalTokens,omitzero"`
}

func toUsage(u *clients.Usage) *usage {
	if u == nil || *u == (clients.Usage{}) {
		return nil
	}
	return &usage{InputTokens: u.PromptTokens, OutputTokens: u.OutputTokens, ThoughtTokens: u.ThoughtTokens, TotalTokens: u.TotalTokens}
}

// errNoModel is the error of a prompt to a server without a model.
var errNoModel = jsonrpc2.Errorf(codeRequestFailed,
	"no model configured: this agentls server was started without a model client, so it cannot answer prompts")

// maxSelection bounds the selected text a prompt carries to the model.
const maxSelection = 64 << 10

// prompt runs one prompt to its end and returns its PromptResult. A cancelled prompt
// (agentls.cancel, $/cancelRequest) is answered with its result, stopReason
// "cancelled"; a model failure with stopReason "error" and the message.
func (c *commandHandler) prompt(ctx context.Context, d deps, a promptArgs) (promptResult, error) {
	s := c.s
	if strings.TrimSpace(a.Prompt) == "" {
		return promptResult{}, invalidArgs(d.callee, `"prompt" must be the text to send to the model`)
	}
	if s.opts.NewClient == nil {
		return promptResult{}, errNoModel
	}
	ec, err := c.editorContext(d, a)
	if err != nil {
		return promptResult{}, invalidArgs(d.callee, "%v", err)
	}
	ls, v, err := c.openSession(ctx, d, a.Session)
	if err != nil {
		return promptResult{}, err
	}
	s.newTurn(ls.ID())
	s.log.Info("prompt", "session", ls.ID(), "chars", len(a.Prompt))
	v.updates.send(sessionInfoNotice{Kind: updateSessionInfo, Model: ls.Model(), Provider: v.provider})
	if v.transcript != nil {
		v.transcript.prompt(time.Now(), a.Prompt, ec, s.relPath)
	}
	res, perr := ls.Prompt(ctx, a.Prompt, ec)
	v.updates.flush()
	if errors.Is(perr, session.ErrBusy) {
		return promptResult{}, jsonrpc2.Errorf(codeRequestFailed,
			"session %s is already answering a prompt: wait for its result, or cancel it with agentls.cancel {\"session\": %q}", ls.ID(), ls.ID())
	}
	if perr != nil && res.StopReason != session.StopError {
		return promptResult{}, jsonrpc2.Errorf(codeRequestFailed, "the prompt failed: %v", perr)
	}
	out := promptResult{Session: ls.ID(), StopReason: res.StopReason, Text: res.Text, Usage: toUsage(&res.Usage)}
	if perr != nil {
		out.Error = &promptError{Message: perr.Error()}
		s.log.Warn("prompt failed", "session", ls.ID(), "error", perr)
	}
	if v.transcript != nil {
		out.Transcript = v.transcript.path
		c.finishTranscript(d, v, out)
	}
	s.log.Info("prompt ended", "session", ls.ID(), "stopReason", res.StopReason)
	return out, nil
}

// editorContext makes the session's EditorContext from the prompt's uri and range: the
// file, the lines of the range and the text it selects (as the editor holds it).
func (c *commandHandler) editorContext(d deps, a promptArgs) (*session.EditorContext, error) {
	s := c.s
	if a.URI == "" {
		if a.Range != nil {
			return nil, errors.New(`"range" needs "uri", the document it is in`)
		}
		if a.Diagnostic != "" {
			return &session.EditorContext{Diagnostic: a.Diagnostic}, nil
		}
		return nil, nil
	}
	path, err := s.docPath(a.URI)
	if err != nil {
		return nil, fmt.Errorf(`"uri": %w`, err)
	}
	ec := &session.EditorContext{Path: path, Diagnostic: a.Diagnostic}
	r := a.Range
	if r == nil {
		return ec, nil
	}
	if r.End.Line < r.Start.Line || (r.End.Line == r.Start.Line && r.End.Character < r.Start.Character) {
		return nil, fmt.Errorf(`"range" ends before it starts`)
	}
	ec.StartLine, ec.EndLine = int(r.Start.Line)+1, int(r.End.Line)+1
	if r.End.Line > r.Start.Line && r.End.Character == 0 {
		// A selection of whole lines ends at the start of the next one.
		ec.EndLine--
	}
	if r.Start != r.End {
		if text, ok := s.documentText(path); ok {
			from := workspace.PositionToOffset(text, workspace.Position{Line: r.Start.Line, Character: r.Start.Character}, d.enc)
			to := workspace.PositionToOffset(text, workspace.Position{Line: r.End.Line, Character: r.End.Character}, d.enc)
			if from < to {
				ec.Selection = tools.Abbreviate(text[from:to], maxSelection)
			}
		}
	}
	return ec, nil
}

// documentText returns the text of path as the tools see it: the editor's if it is
// open, else the file's.
func (s *Server) documentText(path string) (string, bool) {
	_, _, tb := s.state()
	if tb == nil {
		return "", false
	}
	if doc, ok := tb.Workspace.Document(path); ok {
		return doc.Text, true
	}
	f, err := tb.Workspace.ReadText(path, 8<<20)
	if err != nil {
		s.log.Debug("reading a prompt's document", "path", path, "error", err)
		return "", false
	}
	return f.Text, true
}

// relPath names path for people: relative to the workspace root it is in.
func (s *Server) relPath(path string) string {
	_, _, tb := s.state()
	if tb == nil {
		return path
	}
	return tb.Workspace.Rel(path)
}

// sessionStore returns the sessions store and agentls's state directory: Options.StateDir,
// else the parent of session.StateDir(), so that the store is the one the terminal
// front end uses.
func (s *Server) sessionStore() (*session.Store, string, error) {
	dir := s.opts.StateDir
	if dir == "" {
		d, err := session.StateDir()
		if err != nil {
			return nil, "", fmt.Errorf("agentls has no state directory for its sessions: %w", err)
		}
		dir = filepath.Dir(d)
	}
	return session.NewStore(filepath.Join(dir, "sessions")), dir, nil
}

// openSession returns the live session id of the host (a new one if id is empty, else
// the stored session id resumed) and the server's view of it.
func (c *commandHandler) openSession(ctx context.Context, d deps, id string) (*session.Live, *sessionView, error) {
	if d.stateErr != nil {
		return nil, nil, jsonrpc2.Errorf(codeRequestFailed, "%v", d.stateErr)
	}
	ls, err := d.host.Open(ctx, id)
	var re *session.ResumeError
	switch {
	case errors.Is(err, session.ErrNoModel):
		return nil, nil, errNoModel
	case errors.As(err, &re):
		return nil, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams,
			"%v (agentls.listSessions lists the stored sessions; omit \"session\" to start a new one)", err)
	case err != nil:
		return nil, nil, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	return ls, c.s.views.get(c.s, d, ls.ID()), nil
}

// sessionViews are what the server keeps of the host's live sessions, by id: how
// their updates reach the client.
type sessionViews struct {
	mu sync.Mutex
	m  map[string]*sessionView
}

// get returns the view of session id, made on first use, for a prompt with deps d.
func (v *sessionViews) get(s *Server, d deps, id string) *sessionView {
	v.mu.Lock()
	defer v.mu.Unlock()
	if sv, ok := v.m[id]; ok {
		return sv
	}
	if v.m == nil {
		v.m = map[string]*sessionView{}
	}
	rich := d.caps.RichUpdates()
	sv := &sessionView{updates: &updateStream{s: s, session: id, rich: rich}, provider: "gemini"}
	sv.provider = cmp.Or(d.toolbox.Config().Settings.Provider.Type, sv.provider)
	if !rich {
		sv.transcript = newTranscript(filepath.Join(d.stateDir, "transcripts", fileName(id)+".md"), id, s.log)
	}
	v.m[id] = sv
	return sv
}

// drop forgets the view of session id.
func (v *sessionViews) drop(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.m, id)
}

// lookup returns the view of session id, or nil when it has none.
func (v *sessionViews) lookup(id string) *sessionView {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.m[id]
}

// sessionView is how the updates of one session reach the client: agentls/update for
// rich clients, the transcript for others.
type sessionView struct {
	updates    *updateStream
	transcript *transcript
	// provider is the model provider of the settings the session was opened with.
	provider string

	mu    sync.Mutex
	shown bool // the transcript was shown with window/showDocument
}

// onUpdate maps the host's update stream onto the protocol.
func (s *Server) onUpdate(u session.Update) {
	switch u.Kind {
	case session.UpdateToolCall:
		if n := u.Call.Note; n != nil {
			// Where an approval was saved, or why not.
			level := protocol.MessageTypeInfo
			if n.Warning {
				level = protocol.MessageTypeWarning
			}
			s.tell(level, "agentls: "+n.Text)
			return
		}
		s.observe(u.Session, *u.Call)
	case session.UpdatePlan:
		id := cmp.Or(u.Session, EditorSession)
		s.onPlan(id, u.Plan)
	case session.UpdateMCPStatus:
		s.onMCPStatus(*u.MCP)
	case session.UpdateMode:
		s.onMode(u.Session, u.Mode)
	case session.UpdateClosed:
		s.views.drop(u.Session)
	default:
		if v := s.views.lookup(u.Session); v != nil {
			v.observe(u)
		}
	}
}

// fileName makes a session id safe as a file name.
func fileName(id string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, id)
}

// observe receives the session's updates of the agent loop, on the prompt's goroutine.
func (v *sessionView) observe(u session.Update) {
	switch u.Kind {
	case session.UpdateMessage, session.UpdateThought:
		v.updates.chunk(string(u.Kind), u.Text)
		if v.transcript != nil && u.Kind == session.UpdateMessage {
			v.transcript.answer(u.Text)
		}
	case session.UpdateCompression:
		n := compressionNotice{Kind: string(u.Kind), Text: u.Text}
		if c := u.Compression; c != nil {
			n.TokensBefore, n.TokensAfter = c.TokensBefore, c.TokensAfter
		}
		v.updates.send(n)
		if v.transcript != nil {
			v.transcript.compression(n.Text, n.TokensBefore, n.TokensAfter)
		}
	case session.UpdateTurnEnd:
		v.updates.send(turnEndNotice{Kind: string(u.Kind), StopReason: u.StopReason, Usage: toUsage(u.Usage)})
	}
}

// finishTranscript ends the prompt's part of the transcript and tells the editor: a
// window/showMessage with the outcome and, after the session's first prompt here, a
// window/showDocument of the transcript where the client supports it.
func (c *commandHandler) finishTranscript(d deps, v *sessionView, res promptResult) {
	s := c.s
	t := v.transcript
	t.end(res)
	typ, what := protocol.MessageTypeInfo, stopText(res.StopReason)
	if res.Error != nil {
		typ = protocol.MessageTypeError
		what += ": " + oneLine(res.Error.Message, 300)
	}
	s.send("window/showMessage", protocol.ShowMessageParams{Type: typ,
		Message: fmt.Sprintf("agentls: %s. The session's transcript is %s", what, t.path)})
	v.mu.Lock()
	first := !v.shown
	v.shown = true
	v.mu.Unlock()
	if !first || !d.caps.ShowDocument() {
		return
	}
	// Not waited for: an editor may show it only after it has the prompt's answer.
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, createTimeout)
		defer cancel()
		var r *struct {
			Success bool `json:"success"`
		}
		err := s.call(ctx, "window/showDocument", protocol.ShowDocumentParams{URI: uri.File(t.path), TakeFocus: ptr(true)}, &r)
		if err != nil || r == nil || !r.Success {
			s.log.Info("the editor did not show the transcript", "path", t.path, "error", err)
		}
	}()
}

// stopText says how a prompt ended, for people.
func stopText(r session.StopReason) string {
	switch r {
	case session.StopEndTurn:
		return "the answer is complete (end_turn)"
	case session.StopCancelled:
		return "the prompt was cancelled (cancelled)"
	case session.StopMaxTurns:
		return "the prompt stopped after the maximum number of model turns (max_turn_requests)"
	case session.StopRefusal:
		return "the model refused to go on (refusal)"
	case session.StopError:
		return "the prompt failed (error)"
	}
	return "the prompt ended (" + string(r) + ")"
}

// listSessions returns the stored sessions, newest first (agentls.listSessions).
func (c *commandHandler) listSessions(_ context.Context, d deps, _ struct{}) ([]sessionInfo, error) {
	if d.stateErr != nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "%v", d.stateErr)
	}
	infos, err := d.host.List()
	if err != nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "listing the sessions: %v", err)
	}
	out := make([]sessionInfo, 0, len(infos))
	for _, i := range infos {
		out = append(out, sessionInfo{ID: i.ID, Title: i.Title, Created: i.Created, Updated: i.Updated, Prompts: i.Prompts})
	}
	return out, nil
}

// sessionInfo is an entry of agentls.listSessions.
type sessionInfo struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Prompts int       `json:"prompts"`
}

// sessionArgs are the arguments of agentls.sessionHistory.
type sessionArgs struct {
	Session string `json:"session"`
}

// historyResult is the result of agentls.sessionHistory.
type historyResult struct {
	Session string `json:"session"`
	Updates []any  `json:"updates"`
}

// userMessageNotice is a prompt of the user's in a session's history.
type userMessageNotice struct {
	Kind string `json:"kind"` // user_message
	Text string `json:"text"`
}

// sessionHistory returns a session's conversation, live or stored, as the updates a
// rich client would have received had it shown every prompt as it ran (with the user's
// prompts as user_message): what a client shows of a session it resumes.
func (c *commandHandler) sessionHistory(_ context.Context, d deps, a sessionArgs) (historyResult, error) {
	if a.Session == "" {
		return historyResult{}, invalidArgs(d.callee, `"session" must name a session (see %s)`, cmdListSessions)
	}
	ups, err := d.host.Replay(a.Session)
	if err != nil {
		return historyResult{}, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	res := historyResult{Session: a.Session, Updates: []any{}}
	for _, u := range ups {
		switch {
		case u.Kind == session.UpdateUserMessage:
			res.Updates = append(res.Updates, userMessageNotice{Kind: "user_message", Text: u.Text})
		case u.Kind == session.UpdateMessage || u.Kind == session.UpdateThought:
			res.Updates = append(res.Updates, chunkNotice{Kind: string(u.Kind), Text: u.Text})
		case u.Call != nil && u.Call.Status == tools.StatusScheduled:
			res.Updates = append(res.Updates, announcement(*u.Call, statusPending))
		case u.Call != nil && u.Call.Status.Terminal():
			res.Updates = append(res.Updates, finalUpdate(*u.Call))
		}
	}
	return res, nil
}
