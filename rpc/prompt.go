package rpc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Prompts: the agent loop (package session) behind agentls.prompt and agentls/prompt.
//
// The server keeps the sessions it runs (live sessions) by id. A prompt without a
// session starts a new one; a prompt naming a session that is not live resumes it from
// the store, a JSON Lines file per session under Options.StateDir. One prompt runs at a
// time per session; a second gets an error saying so.
//
// A session's tool calls run on a scheduler of its own, built from the toolbox like the
// editor's, whose observer tags their events with the session: so they reach the
// editor as agentls/update, progress, diagnostics and confirmations exactly as the
// calls of agentls.runTool do. The ids of a session's calls are the model's, prefixed
// with the session's id and a slash, so that calls of different sessions never share
// an id (the model's own ids go back to the model).
//
// What the model says reaches rich clients (experimental.agentls.updates) as
// agentls/update (message and thought chunks, coalesced; turn_end; compression; plan
// from write_todos). Other clients get a Markdown transcript of the session
// (transcript.go), which window/showDocument opens when the session's first prompt in
// this server ends, and a window/showMessage at the end of every prompt.

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
func (s *Server) prompt(ctx context.Context, command string, arg json.RawMessage) (any, error) {
	var a promptArgs
	if err := decodeArg(command, arg, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Prompt) == "" {
		return nil, invalidArgs(command, `"prompt" must be the text to send to the model`)
	}
	if s.opts.NewClient == nil {
		return nil, errNoModel
	}
	ec, err := s.editorContext(a)
	if err != nil {
		return nil, invalidArgs(command, "%v", err)
	}
	ls, err := s.openSession(ctx, a.Session)
	if err != nil {
		return nil, err
	}
	pctx, end, err := ls.begin(ctx)
	if errors.Is(err, errLetGo) {
		// Let go between openSession and begin: resumed from the store.
		if ls, err = s.openSession(ctx, ls.id); err == nil {
			pctx, end, err = ls.begin(ctx)
		}
	}
	if err != nil {
		return nil, err
	}
	ctx = pctx
	defer end()
	s.newTurn(ls.id)
	s.log.Info("prompt", "session", ls.id, "chars", len(a.Prompt))
	if ls.transcript != nil {
		ls.transcript.prompt(time.Now(), a.Prompt, ec, s.relPath)
	}
	res, perr := ls.sess.Prompt(ctx, a.Prompt, ec)
	ls.updates.flush()
	if perr != nil && res.StopReason != session.StopError {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "the prompt failed: %v", perr)
	}
	out := promptResult{Session: ls.id, StopReason: res.StopReason, Text: res.Text, Usage: toUsage(&res.Usage)}
	if perr != nil {
		out.Error = &promptError{Message: perr.Error()}
		s.log.Warn("prompt failed", "session", ls.id, "error", perr)
	}
	if ls.transcript != nil {
		out.Transcript = ls.transcript.path
		ls.finishTranscript(out)
	}
	s.log.Info("prompt ended", "session", ls.id, "stopReason", res.StopReason)
	return out, nil
}

func (s *Server) promptMethod(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	return s.prompt(ctx, "agentls/prompt", json.RawMessage(params))
}

// editorContext makes the session's EditorContext from the prompt's uri and range: the
// file, the lines of the range and the text it selects (as the editor holds it).
func (s *Server) editorContext(a promptArgs) (*session.EditorContext, error) {
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
			_, enc, _, _ := s.state()
			from := workspace.PositionToOffset(text, workspace.Position{Line: r.Start.Line, Character: r.Start.Character}, enc)
			to := workspace.PositionToOffset(text, workspace.Position{Line: r.End.Line, Character: r.End.Character}, enc)
			if from < to {
				ec.Selection = abbreviate(text[from:to], maxSelection)
			}
		}
	}
	return ec, nil
}

// documentText returns the text of path as the tools see it: the editor's if it is
// open, else the file's.
func (s *Server) documentText(path string) (string, bool) {
	_, _, tb, _ := s.state()
	if tb == nil {
		return "", false
	}
	s.syncOverlay()
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
	_, _, tb, _ := s.state()
	if tb == nil {
		return path
	}
	return tb.Workspace.Rel(path)
}

// maxIdleSessions bounds the sessions kept in memory while they answer no prompt: each
// prompt without a session (every "Ask agentls to fix this") starts one, and a
// session's history can be large. The least recently used idle ones beyond it are let
// go; a prompt naming one resumes it from the store.
const maxIdleSessions = 16

// agentSessions are the live sessions, by id.
type agentSessions struct {
	mu   sync.Mutex
	live map[string]*liveSession
	// store and dir are set on first use: the sessions store and agentls's state
	// directory.
	store *session.Store
	dir   string
	// useSeq counts the uses of sessions (liveSession.used).
	useSeq atomic.Uint64
}

func (a *agentSessions) get(id string) *liveSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live[id]
}

// add makes ls live, unless a session with its id became live meanwhile: that one is
// returned instead. Idle sessions beyond maxIdleSessions are let go, the least
// recently used first.
func (a *agentSessions) add(ls *liveSession) *liveSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.live == nil {
		a.live = map[string]*liveSession{}
	}
	if other, ok := a.live[ls.id]; ok {
		return other
	}
	a.live[ls.id] = ls
	if len(a.live) > maxIdleSessions {
		a.trimLocked(ls)
	}
	return ls
}

// trimLocked lets idle sessions go, the least recently used first, until at most
// maxIdleSessions are idle with keep, which is not let go. a.mu is held.
func (a *agentSessions) trimLocked(keep *liveSession) {
	type idle struct {
		ls   *liveSession
		used uint64
	}
	var idles []idle
	for _, ls := range a.live {
		ls.mu.Lock()
		if ls != keep && ls.cancel == nil {
			idles = append(idles, idle{ls, ls.used})
		}
		ls.mu.Unlock()
	}
	slices.SortFunc(idles, func(x, y idle) int { return cmp.Compare(x.used, y.used) })
	// keep is about to answer a prompt, after which it is idle too.
	for _, i := range idles[:max(0, len(idles)+1-maxIdleSessions)] {
		if i.ls.letGo() {
			delete(a.live, i.ls.id)
		}
	}
}

// cancel cancels the running prompt of session, or of every session when session is
// empty, and returns how many it cancelled.
func (a *agentSessions) cancel(session string) int {
	a.mu.Lock()
	var all []*liveSession
	for id, ls := range a.live {
		if session == "" || id == session {
			all = append(all, ls)
		}
	}
	a.mu.Unlock()
	n := 0
	for _, ls := range all {
		if ls.cancelPrompt() {
			n++
		}
	}
	return n
}

// sessionStore returns the sessions store and agentls's state directory: Options.StateDir,
// else the parent of session.StateDir(), so that the store is the one the terminal
// front end uses.
func (s *Server) sessionStore() (*session.Store, string, error) {
	a := &s.agents
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.store != nil {
		return a.store, a.dir, nil
	}
	dir := s.opts.StateDir
	if dir == "" {
		d, err := session.StateDir()
		if err != nil {
			return nil, "", fmt.Errorf("agentls has no state directory for its sessions: %w", err)
		}
		dir = filepath.Dir(d)
	}
	a.store, a.dir = session.NewStore(filepath.Join(dir, "sessions")), dir
	return a.store, a.dir, nil
}

// openSession returns the live session id; a new one if id is empty, else the stored
// session id resumed.
func (s *Server) openSession(ctx context.Context, id string) (*liveSession, error) {
	if id != "" {
		if ls := s.agents.get(id); ls != nil {
			return ls, nil
		}
	}
	store, dir, err := s.sessionStore()
	if err != nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	s.mu.Lock()
	caps, tb := s.caps, s.toolbox
	settings := tb.Settings
	roots := tb.Workspace.Roots()
	s.mu.Unlock()
	client, err := s.opts.NewClient(ctx, settings)
	if err != nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "agentls cannot reach a model: %v", err)
	}
	if client == nil {
		return nil, errNoModel
	}
	// google_web_search answers through the model's grounding, where it has one.
	tb.SetSearcher(client)
	ls := &liveSession{s: s, rich: caps.RichUpdates(), used: s.agents.useSeq.Add(1)}
	sess, err := session.New(ctx, session.Options{
		Client:       client,
		Declarations: s.declarations,
		Runner:       ls,
		Store:        store,
		ID:           id,
		MaxTurns:     cmp.Or(s.opts.MaxTurns, settings.Model.MaxSessionTurns),
		Env:          session.Environment{Roots: roots, ConfigDir: tb.ConfigDir},
		Observe:      ls.observe,
		Logger:       s.log,
	})
	switch {
	case err != nil && id != "":
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams,
			"cannot resume session %q: %v (agentls.listSessions lists the stored sessions; omit \"session\" to start a new one)", id, err)
	case err != nil:
		return nil, jsonrpc2.Errorf(codeRequestFailed, "cannot start a session: %v", err)
	}
	ls.id, ls.sess = sess.ID(), sess
	ls.updates = &updateStream{s: s, session: ls.id, rich: ls.rich}
	if !ls.rich {
		ls.transcript = newTranscript(filepath.Join(dir, "transcripts", fileName(ls.id)+".md"), ls.id, s.log)
	}
	if id != "" {
		s.log.Info("session resumed", "session", ls.id)
	} else {
		s.log.Info("session started", "session", ls.id, "model", client.Model())
	}
	return s.agents.add(ls), nil
}

// declarations are the tools the model may call: those of the registry in force.
func (s *Server) declarations() []tools.Declaration {
	_, _, tb, _ := s.state()
	if tb == nil {
		return nil
	}
	return tb.Declarations()
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

// liveSession is a session the server runs.
type liveSession struct {
	s    *Server
	id   string
	sess *session.Session
	// rich clients get agentls/update; others the transcript.
	rich       bool
	updates    *updateStream
	transcript *transcript

	mu     sync.Mutex
	cancel context.CancelFunc // of the running prompt; nil when none runs
	shown  bool               // the transcript was shown with window/showDocument
	// used orders the sessions by their last use (useSeq), for letting idle ones go;
	// gone is set once the server has let the session go: it takes no prompt.
	used uint64
	gone bool

	// sched is the session's scheduler, built for the toolbox generation gen; only
	// the prompt's goroutine uses them.
	sched *tools.Scheduler
	gen   uint64
	calls atomic.Uint64
}

// begin starts a prompt: it returns the prompt's context, which agentls.cancel cancels,
// and the function that ends the prompt. A session runs one prompt at a time.
func (ls *liveSession) begin(ctx context.Context) (context.Context, func(), error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.gone {
		return nil, nil, errLetGo
	}
	if ls.cancel != nil {
		return nil, nil, jsonrpc2.Errorf(codeRequestFailed,
			"session %s is already answering a prompt: wait for its result, or cancel it with agentls.cancel {\"session\": %q}", ls.id, ls.id)
	}
	ctx, cancel := context.WithCancel(ctx)
	ls.cancel = cancel
	ls.used = ls.s.agents.useSeq.Add(1)
	return ctx, func() {
		ls.mu.Lock()
		ls.cancel = nil
		ls.used = ls.s.agents.useSeq.Add(1)
		ls.mu.Unlock()
		cancel()
	}, nil
}

// errLetGo is the error of begin on a session the server has let go.
var errLetGo = errors.New("the session was let go")

// letGo marks the session let go, unless it is answering a prompt, and reports
// whether it did.
func (ls *liveSession) letGo() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.cancel != nil {
		return false
	}
	ls.gone = true
	return true
}

// cancelPrompt cancels the running prompt, if any, and reports whether there was one.
func (ls *liveSession) cancelPrompt() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.cancel == nil {
		return false
	}
	ls.cancel()
	return true
}

// observe receives the session's updates, on the prompt's goroutine.
func (ls *liveSession) observe(u session.Update) {
	switch u.Kind {
	case session.UpdateMessage, session.UpdateThought:
		ls.updates.chunk(string(u.Kind), u.Text)
		if ls.transcript != nil && u.Kind == session.UpdateMessage {
			ls.transcript.answer(u.Text)
		}
	case session.UpdateCompression:
		n := compressionNotice{Kind: string(u.Kind), Text: u.Text}
		if c := u.Compression; c != nil {
			n.TokensBefore, n.TokensAfter = c.TokensBefore, c.TokensAfter
		}
		ls.updates.send(n)
		if ls.transcript != nil {
			ls.transcript.compression(n.Text, n.TokensBefore, n.TokensAfter)
		}
	case session.UpdateTurnEnd:
		ls.updates.send(turnEndNotice{Kind: string(u.Kind), StopReason: u.StopReason, Usage: toUsage(u.Usage)})
	}
}

// Run implements session.Runner: it runs a batch of the model's calls on the session's
// scheduler, under ids of the server's (see the top of this file), and tracks them so
// that agentls.cancel and the cancellation of a call's progress stop them. The batch
// shares one context: cancelling one of its calls cancels the batch.
func (ls *liveSession) Run(ctx context.Context, reqs []tools.Request) []tools.CallResult {
	s := ls.s
	sched := ls.scheduler()
	ctx, cancel := context.WithCancel(withSession(ctx, ls.id))
	defer cancel()
	wire := make([]tools.Request, len(reqs))
	seen := map[string]bool{}
	for i, r := range reqs {
		id := r.CallID
		if id == "" {
			id = "call-" + strconv.FormatUint(ls.calls.Add(1), 10)
		}
		wid := ls.id + "/" + id
		for seen[wid] {
			wid += "'"
		}
		seen[wid] = true
		wire[i] = tools.Request{CallID: wid, Name: r.Name, Args: r.Args}
		defer s.calls.track(wid, ls.id, cancel)()
	}
	res := sched.Run(ctx, wire)
	for i := range res {
		if i < len(reqs) && reqs[i].CallID != "" {
			res[i].CallID = reqs[i].CallID
		}
	}
	return res
}

// scheduler returns the session's scheduler, built anew when the toolbox's policy or
// registry changed since.
func (ls *liveSession) scheduler() *tools.Scheduler {
	s := ls.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if ls.sched == nil || ls.gen != s.schedGen {
		id := ls.id
		ls.sched = s.toolbox.Scheduler(s, func(ev tools.Event) { s.observe(id, ev) })
		ls.gen = s.schedGen
	}
	return ls.sched
}

// sessionKey is the context key of the session a tool call belongs to.
type sessionKey struct{}

func withSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// sessionOf returns the session of a tool call's context: the editor's unless a
// session's runner set it.
func sessionOf(ctx context.Context) string {
	if id, ok := ctx.Value(sessionKey{}).(string); ok {
		return id
	}
	return EditorSession
}

// finishTranscript ends the prompt's part of the transcript and tells the editor: a
// window/showMessage with the outcome and, after the session's first prompt here, a
// window/showDocument of the transcript where the client supports it.
func (ls *liveSession) finishTranscript(res promptResult) {
	s, t := ls.s, ls.transcript
	t.end(res)
	typ, what := protocol.MessageTypeInfo, stopText(res.StopReason)
	if res.Error != nil {
		typ = protocol.MessageTypeError
		what += ": " + oneLine(res.Error.Message, 300)
	}
	s.send("window/showMessage", protocol.ShowMessageParams{Type: typ,
		Message: fmt.Sprintf("agentls: %s. The session's transcript is %s", what, t.path)})
	ls.mu.Lock()
	first := !ls.shown
	ls.shown = true
	ls.mu.Unlock()
	if !first || !s.capabilities().ShowDocument() {
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
func (s *Server) listSessions(command string, arg json.RawMessage) (any, error) {
	var a struct{}
	if err := decodeArg(command, arg, &a); err != nil {
		return nil, err
	}
	store, _, err := s.sessionStore()
	if err != nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	infos, err := store.List()
	if err != nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "listing the sessions: %v", err)
	}
	out := make([]sessionInfo, 0, len(infos))
	for _, i := range infos {
		out = append(out, sessionInfo{ID: i.ID, Title: i.Title, Created: i.Created, Updated: i.Updated, Prompts: i.Prompts})
	}
	return out, nil
}

func (s *Server) listSessionsMethod(_ context.Context, params jsonrpc2.RawMessage) (any, error) {
	if len(strings.TrimSpace(string(params))) == 0 || string(params) == "null" {
		params = jsonrpc2.RawMessage("{}")
	}
	return s.listSessions("agentls/sessions", json.RawMessage(params))
}

// sessionInfo is an entry of agentls.listSessions.
type sessionInfo struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Prompts int       `json:"prompts"`
}
