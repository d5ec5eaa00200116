package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/checkpoint"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/hooks"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/interact"
	"github.com/agentls/agentls/tools/mcp"
	"github.com/agentls/agentls/tools/todos"
)

// DefaultMaxIdle is how many sessions a Host keeps in memory while they answer no
// prompt, unless HostOptions.MaxIdle says otherwise.
const DefaultMaxIdle = 16

// HostOptions configure a Host.
type HostOptions struct {
	// Toolbox says where the workspace is and with which settings. The host builds the
	// toolbox and sets its OnTodos and OnMCPStatus: the plan and the MCP status reach
	// front ends as updates.
	Toolbox toolbox.Options
	// Store persists the sessions; a session that was let go is resumed from it.
	Store *Store
	// Checkpoints bound the store of what the sessions' shell commands replaced, kept
	// beside Store's folder; zero means checkpoint.DefaultLimits.
	Checkpoints checkpoint.Limits
	// NewClient makes the model client of a session being opened, from the settings in
	// force. Nil, or a nil client, means there is no model: Open fails with ErrNoModel.
	NewClient func(ctx context.Context, s settings.Settings) (clients.Client, error)
	// Asker puts the confirmations of the sessions' tool calls to a person; nil refuses
	// every call that needs asking.
	Asker confirm.Asker
	// Observe receives the update stream of every session, each update with its
	// session's id (an empty id for what belongs to the workspace: MCP status, the plan
	// of calls of no session). The updates of one session come in order, except that
	// tool calls of one batch run concurrently. The host calls Observe holding none of
	// its locks, so Observe may call back into the host; a prompt waits for Observe, so
	// Observe must not wait for that prompt to end.
	Observe func(Update)
	// MaxTurns caps the model turns of a prompt; 0 means the settings'
	// model.maxSessionTurns (whose 0 means the session's default).
	MaxTurns int
	// MaxIdle is how many idle sessions are kept in memory; 0 means DefaultMaxIdle.
	MaxIdle int
	Logger  *slog.Logger
}

// Errors of Open and Prompt.
var (
	// ErrNoModel is the error of opening a session on a host without a model client.
	ErrNoModel = errors.New("no model configured")
	// ErrBusy is the error of a prompt to a session that is answering one.
	ErrBusy = errors.New("the session is already answering a prompt")
	// ErrModel wraps the error of making a session's model client.
	ErrModel = errors.New("agentls cannot reach a model")
	// ErrClosed is the error of opening a session on a closed host.
	ErrClosed = errors.New("the host is closed")
)

// ResumeError is the error of opening a stored session that cannot be resumed.
type ResumeError struct {
	ID  string
	Err error
}

func (e *ResumeError) Error() string { return fmt.Sprintf("cannot resume session %q: %v", e.ID, e.Err) }
func (e *ResumeError) Unwrap() error { return e.Err }

// Host hosts the sessions of one workspace, for every front end: it opens, resumes,
// lists and closes them, runs one prompt at a time per session, keeps a bounded cache
// of idle sessions (the rest are resumed from the store when named), gives their tool
// calls ids of their own, rebuilds a session's scheduler when the settings change it,
// and merges everything a session does into one typed update stream (HostOptions.Observe).
//
// The ids of a session's calls are the model's, prefixed with the session's id and a
// slash, so that calls of different sessions never share an id (the model's own ids go
// back to the model).
type Host struct {
	o   HostOptions
	tb  *toolbox.Toolbox
	log *slog.Logger

	// useSeq counts the uses of sessions (Live.used), for letting idle ones go.
	useSeq atomic.Uint64

	// mu guards live and scopes.
	mu   sync.Mutex
	live map[string]*Live

	// scopes are the schedulers of the calls that belong to no model session
	// (RunTool), by scope; guarded by mu.
	scopes map[string]schedulerFor

	callMu sync.Mutex
	calls  map[string]runningCall // the calls running, by id

	// loads are the loads of the external tools running (StartExternal), which Close
	// cancels (stopLoads) and waits for before it closes the toolbox; closed, guarded
	// by mu, says that Close began: no load starts after it.
	loads     sync.WaitGroup
	loadCtx   context.Context
	stopLoads context.CancelFunc
	closed    bool

	// hookWork are the hooks running on their own (Notification, SessionEnd), with
	// hookCtx, which Close waits for (at most closeHookWait, then it cancels hookCtx,
	// which kills them).
	hookWork  sync.WaitGroup
	hookCtx   context.Context
	stopHooks context.CancelFunc

	// checkpoints holds what the sessions' shell commands replaced, for undo; nil
	// where sessions are not stored.
	checkpoints *checkpoint.Store
}

// runningCall is a call running on one of the host's schedulers.
type runningCall struct {
	scope  string // the session's id, or the scope of RunTool
	cancel context.CancelFunc
}

// schedulerFor is a scheduler built for the configuration cfg of the toolbox.
type schedulerFor struct {
	sched *tools.Scheduler
	cfg   *toolbox.Config
	// grants are the "always" answers given to the scope's calls (RunTool's), which
	// outlive its schedulers.
	grants *confirm.Grants
}

// stale reports whether the toolbox's policy or registry changed since the scheduler
// was built (or none was).
func (s schedulerFor) stale(tb *toolbox.Toolbox) bool {
	c := tb.Config()
	return s.sched == nil || c.Policy != s.cfg.Policy || c.Registry != s.cfg.Registry
}

// NewHost builds the workspace's tool system and returns a host for its sessions.
func NewHost(o HostOptions) (*Host, error) {
	h := &Host{o: o, log: o.Logger, live: map[string]*Live{}, scopes: map[string]schedulerFor{}, calls: map[string]runningCall{}}
	h.loadCtx, h.stopLoads = context.WithCancel(context.Background())
	h.hookCtx, h.stopHooks = context.WithCancel(context.Background())
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.o.MaxIdle <= 0 {
		h.o.MaxIdle = DefaultMaxIdle
	}
	to := o.Toolbox
	if to.Logger == nil {
		to.Logger = h.log
	}
	extra := to.Extra
	to.Extra = func(s settings.Settings) []tools.Tool {
		var out []tools.Tool
		if extra != nil {
			out = extra(s)
		}
		return append(out, newAgentTool(h, s.Agents))
	}
	to.OnTodos = func(items []todos.Item) { h.emit(Update{Kind: UpdatePlan, Plan: planOf(items)}) }
	to.OnMCPStatus = func(st mcp.ServerStatus) { h.emit(Update{Kind: UpdateMCPStatus, MCP: &st}) }
	tb, err := toolbox.New(to)
	if err != nil {
		return nil, err
	}
	h.tb = tb
	if o.Store != nil {
		// Beside the sessions' folder, one store per workspace (by its first root).
		h.checkpoints = checkpoint.OpenStore(checkpoint.StoreDir(filepath.Dir(o.Store.Dir()), tb.Workspace.Roots()[0]), cmp.Or(o.Checkpoints, checkpoint.DefaultLimits()))
	}
	return h, nil
}

// Metrics returns the metrics of every tool call the host's toolbox ran: those of its
// sessions and those that belong to none (RunTool), with those of every other toolbox
// that shares its Metrics (toolbox.Options.Metrics).
func (h *Host) Metrics() []tools.ToolStats { return h.tb.Metrics.Snapshot() }

// SessionMetrics returns the tool metrics of each live session, by id; sessions with
// no calls yet are left out.
func (h *Host) SessionMetrics() map[string][]tools.ToolStats {
	h.mu.Lock()
	all := slices.Collect(maps.Values(h.live))
	h.mu.Unlock()
	out := map[string][]tools.ToolStats{}
	for _, l := range all {
		if m := l.Metrics(); len(m) > 0 {
			out[l.id] = m
		}
	}
	return out
}

// Toolbox returns the workspace's tool system.
func (h *Host) Toolbox() *toolbox.Toolbox { return h.tb }

// Reconfigure applies overrides as Toolbox.Reconfigure does; the sessions' schedulers
// are made anew before their next batch of calls when the policy or the registry
// changed.
func (h *Host) Reconfigure(overrides settings.Settings) (toolbox.Reconfiguration, error) {
	return h.tb.Reconfigure(overrides)
}

// Close cancels the running prompts and loads of external tools, lets every session
// go, waits for the loads to end and closes the toolbox.
func (h *Host) Close() error {
	h.Cancel("")
	h.mu.Lock()
	all := h.live
	h.live = map[string]*Live{}
	h.closed = true
	h.mu.Unlock()
	h.stopLoads()
	for _, l := range all {
		l.letGo()
		l.end("exit")
		l.emit(Update{Kind: UpdateClosed})
	}
	h.loads.Wait()
	h.waitHooks(closeHookWait)
	return h.tb.Close()
}

// closeHookWait is how long Close lets the hooks running on their own (SessionEnd)
// finish before it stops them: an editor shutting agentls down must not wait for a
// hook's whole timeout.
const closeHookWait = 5 * time.Second

// waitHooks waits for the hooks running on their own, at most d, then stops those
// still running and waits for them to go.
func (h *Host) waitHooks(d time.Duration) {
	done := make(chan struct{})
	go func() {
		h.hookWork.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
		h.log.Warn("stopping hooks still running as agentls closes", "after", d)
		h.stopHooks()
		<-done
	}
	h.stopHooks()
}

// StartExternal loads the external tools of the settings in force: it runs the
// discovery command and connects the MCP servers (Toolbox.StartExternal), and returns
// when each source loaded or failed. Close cancels it; after Close it loads nothing
// and returns toolbox.ErrClosed.
func (h *Host) StartExternal(ctx context.Context) error {
	ctx, done, err := h.beginLoad(ctx)
	if err != nil {
		return err
	}
	defer done()
	return h.tb.StartExternal(ctx)
}

// StartExternalInBackground is StartExternal on a goroutine of the host's, for a front
// end that must not wait (the tools appear as each source loads). then, when not nil,
// is called on that goroutine with StartExternal's error; Close waits for it too, so it
// must not wait for anything Close's caller waits for.
func (h *Host) StartExternalInBackground(then func(error)) {
	ctx, done, err := h.beginLoad(context.Background())
	if err != nil {
		if then != nil {
			then(err)
		}
		return
	}
	go func() {
		defer done()
		err := h.tb.StartExternal(ctx)
		if then != nil {
			then(err)
		}
	}()
}

// beginLoad counts a load of the external tools, unless the host is closed, and
// returns its context, which Close cancels, and the function that ends it.
func (h *Host) beginLoad(ctx context.Context) (context.Context, func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, toolbox.ErrClosed
	}
	h.loads.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(h.loadCtx, cancel)
	return ctx, func() {
		stop()
		cancel()
		h.loads.Done()
	}, nil
}

// Open returns the live session id: a new one when id is empty, else the session id,
// live or resumed from the store.
func (h *Host) Open(ctx context.Context, id string) (*Live, error) {
	if id != "" {
		if l := h.get(id); l != nil {
			return l, nil
		}
	}
	if h.o.NewClient == nil {
		return nil, ErrNoModel
	}
	// Its skills, context files and excluded tools are in the Config once read.
	h.tb.WaitAddons()
	s := h.tb.Config().Settings
	client, err := h.o.NewClient(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	if client == nil {
		return nil, ErrNoModel
	}
	l := &Live{h: h, used: h.useSeq.Add(1), metrics: tools.NewMetrics(), state: toolbox.NewSessionState(),
		// google_web_search answers through the session's model's grounding, where it
		// has one: the session's own, as other sessions may have other models.
		search: h.tb.SearchTool(Searcher(client))}
	if h.checkpoints != nil {
		l.recorder = checkpoint.NewRecorder(h.checkpoints, h.tb.Workspace, func(r checkpoint.Record) {
			if len(r.Changes) == 0 && r.Unrecorded == "" && r.LeftOut == 0 {
				return // a command that changed nothing
			}
			l.mu.Lock()
			l.items = append(l.items, turnItem{shell: &r})
			l.mu.Unlock()
		})
	}
	l.todos = todos.NewList(func(items []todos.Item) {
		l.emit(Update{Kind: UpdatePlan, Plan: planOf(items)})
	})
	sess, err := New(ctx, Options{
		Client:       client,
		Declarations: func() []tools.Declaration { return l.registry().DeclarationsIn(l.situation()) },
		Runner:       l,
		Store:        h.o.Store,
		ID:           id,
		MaxTurns:     cmp.Or(h.o.MaxTurns, s.Model.MaxSessionTurns),
		Env:          Environment{Roots: h.tb.Workspace.Roots(), ConfigDir: h.tb.ConfigDir, ContextFiles: s.ContextFiles},
		Observe:      l.emit,
		Hooks:        func() *hooks.Runner { return h.tb.Config().Hooks },
		Logger:       h.log,
	})
	switch {
	case err != nil && id != "":
		return nil, &ResumeError{ID: id, Err: err}
	case err != nil:
		return nil, fmt.Errorf("cannot start a session: %w", err)
	}
	l.id, l.sess, l.model = sess.ID(), sess, client.Model()
	if id != "" {
		h.log.Info("session resumed", "session", l.id)
	} else {
		h.log.Info("session started", "session", l.id, "model", l.model)
	}
	if l = h.add(l); l == nil {
		if h.o.Store != nil {
			h.o.Store.release(sess.ID())
		}
		return nil, ErrClosed
	}
	return l, nil
}

// List returns the stored sessions, newest first.
func (h *Host) List() ([]Info, error) {
	if h.o.Store == nil {
		return nil, nil
	}
	return h.o.Store.List()
}

// LiveIDs returns the ids of the sessions kept in memory, sorted.
func (h *Host) LiveIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Sorted(maps.Keys(h.live))
}

// CloseSession lets the live session id go: a later Open resumes it from the store. It
// fails with ErrBusy while the session answers a prompt.
func (h *Host) CloseSession(id string) error {
	h.mu.Lock()
	l, ok := h.live[id]
	if !ok {
		h.mu.Unlock()
		return nil
	}
	if !l.letGo() {
		h.mu.Unlock()
		return fmt.Errorf("session %s: %w", id, ErrBusy)
	}
	delete(h.live, id)
	h.mu.Unlock()
	l.end("other")
	// Told after unlocking: Observe is the front end's code, which may call back into
	// the host. The session is let go, so closed is the last update of its stream.
	l.emit(Update{Kind: UpdateClosed})
	return nil
}

// Renew gives the session id a model client made anew (HostOptions.NewClient with
// ctx, which may carry a front end's choices, such as its model), keeping its
// conversation as it is in memory: a session that has no prompt yet, and so is not
// stored, is renewed too. A session that is not live is opened (resumed from the
// store) instead. It fails with ErrBusy while the session answers a prompt.
func (h *Host) Renew(ctx context.Context, id string) (*Live, error) {
	l := h.get(id)
	if l == nil {
		return h.Open(ctx, id)
	}
	// Marked as answering meanwhile: no prompt starts with the old client.
	_, end, err := l.begin(ctx)
	if errors.Is(err, errLetGo) {
		return h.Open(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	defer end()
	if h.o.NewClient == nil {
		return nil, ErrNoModel
	}
	client, err := h.o.NewClient(ctx, h.tb.Config().Settings)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	case client == nil:
		return nil, ErrNoModel
	}
	l.mu.Lock()
	l.sess.client = client
	l.model = client.Model()
	l.search = h.tb.SearchTool(Searcher(client))
	l.view = registryView{}
	l.mu.Unlock()
	h.log.Info("session renewed", "session", id, "model", client.Model())
	return l, nil
}

// DeleteSession removes the session id from the store, letting it go first when it is
// live. It fails with ErrBusy while the session answers a prompt (nothing is removed),
// and with an error wrapping fs.ErrNotExist when the store has no such session.
func (h *Host) DeleteSession(id string) error {
	if h.o.Store == nil {
		return errors.New("sessions are not stored here")
	}
	if err := h.CloseSession(id); err != nil {
		return err
	}
	return h.o.Store.Delete(id)
}

// Cancel cancels the running prompt of the session id, with its tool calls, and the
// calls RunTool runs in the scope id; an empty id cancels everything running. It
// returns how many prompts and tool calls it cancelled.
func (h *Host) Cancel(id string) (prompts, calls int) {
	h.mu.Lock()
	var all []*Live
	for lid, l := range h.live {
		if id == "" || lid == id {
			all = append(all, l)
		}
	}
	h.mu.Unlock()
	for _, l := range all {
		if l.cancelPrompt() {
			prompts++
		}
	}
	h.callMu.Lock()
	defer h.callMu.Unlock()
	for _, c := range h.calls {
		if id == "" || c.scope == id {
			c.cancel()
			calls++
		}
	}
	return prompts, calls
}

// CancelCall cancels the running tool call id (an id of the host's, as its updates
// carry it), with the rest of its batch, and reports whether it was running.
func (h *Host) CancelCall(id string) bool {
	h.callMu.Lock()
	defer h.callMu.Unlock()
	c, ok := h.calls[id]
	if ok {
		c.cancel()
	}
	return ok
}

// RunTool runs one tool call that belongs to no model session: a front end's own, such
// as the editor's agentls.runTool. It runs as a model's call does (validation, the
// workspace's policy and approval mode, confirmation through the host's Asker), one
// after another with the other calls of its scope, and its updates carry scope as their
// session. req.CallID is the call's id as the updates carry it, which the caller keeps
// unique among running calls; Cancel(scope) and CancelCall stop it.
func (h *Host) RunTool(ctx context.Context, scope string, req tools.Request) tools.CallResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer h.track(req.CallID, scope, cancel)()
	return h.scopeScheduler(scope).RunOne(ctx, req)
}

// scopeScheduler returns the scheduler of RunTool's scope, built anew when the
// toolbox's policy or registry changed since.
func (h *Host) scopeScheduler(scope string) *tools.Scheduler {
	h.mu.Lock()
	defer h.mu.Unlock()
	ss := h.scopes[scope]
	if ss.stale(h.tb) {
		grants := ss.grants
		if grants == nil {
			grants = new(confirm.Grants)
		}
		ss = schedulerFor{cfg: h.tb.Config(), grants: grants}
		ss.sched = h.tb.Scheduler(sessionPolicy{p: ss.cfg.Policy, grants: grants}, h.o.Asker, func(ev tools.Event) {
			h.emit(Update{Kind: UpdateToolCall, Session: scope, Call: &ev})
		})
		h.scopes[scope] = ss
	}
	return ss.sched
}

// SetMode sets the approval mode of the live session id; an empty mode returns it to
// the workspace's. It reports whether the session is live.
func (h *Host) SetMode(id string, m confirm.Mode) bool {
	l := h.get(id)
	if l == nil {
		return false
	}
	l.mode.Store(&m)
	return true
}

func (h *Host) get(id string) *Live {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.live[id]
}

// add makes l live, unless a session with its id became live meanwhile: that one is
// returned instead; nil once the host is closed. Idle sessions beyond MaxIdle are let
// go, the least recently used first.
func (h *Host) add(l *Live) *Live {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	if other, ok := h.live[l.id]; ok {
		h.mu.Unlock()
		return other
	}
	h.live[l.id] = l
	var gone []*Live
	if len(h.live) > h.o.MaxIdle {
		gone = h.trimLocked(l)
	}
	h.mu.Unlock()
	// Told after unlocking, as in CloseSession.
	for _, g := range gone {
		g.end("other")
		g.emit(Update{Kind: UpdateClosed})
	}
	return l
}

// trimLocked lets idle sessions go, the least recently used first, until at most
// MaxIdle are idle with keep, which is not let go, and returns those it let go, for
// the caller to tell once it unlocked. h.mu is held.
func (h *Host) trimLocked(keep *Live) []*Live {
	type idle struct {
		l    *Live
		used uint64
	}
	var idles []idle
	for _, l := range h.live {
		l.mu.Lock()
		if l != keep && l.cancel == nil {
			idles = append(idles, idle{l, l.used})
		}
		l.mu.Unlock()
	}
	slices.SortFunc(idles, func(x, y idle) int { return cmp.Compare(x.used, y.used) })
	// keep is about to answer a prompt, after which it is idle too.
	var gone []*Live
	for _, i := range idles[:max(0, len(idles)+1-h.o.MaxIdle)] {
		if i.l.letGo() {
			delete(h.live, i.l.id)
			gone = append(gone, i.l)
		}
	}
	return gone
}

// track records a running call of the host's id in scope, which cancel stops, and
// returns the function that forgets it.
func (h *Host) track(id, scope string, cancel context.CancelFunc) func() {
	h.callMu.Lock()
	h.calls[id] = runningCall{scope: scope, cancel: cancel}
	h.callMu.Unlock()
	return func() {
		h.callMu.Lock()
		delete(h.calls, id)
		h.callMu.Unlock()
	}
}

func (h *Host) emit(u Update) {
	if h.o.Observe != nil {
		h.o.Observe(u)
	}
}

// Live is a session a Host runs.
type Live struct {
	h     *Host
	id    string
	sess  *Session
	model string
	// todos is the session's plan, which its write_todos calls write.
	todos *todos.List
	// state is what the tools keep for the session: what its model read, which its
	// edits are held to, and its persistent shell.
	state *toolbox.SessionState
	// metrics are the session's tool metrics, since it became live.
	metrics *tools.Metrics
	// search is the session's google_web_search, answered by its model; nil when the
	// model cannot search.
	search tools.Tool
	// mode is the session's approval mode; nil or empty means the workspace's.
	mode atomic.Pointer[confirm.Mode]
	// grants are what the person answered "always" (or "reject always") in this
	// session: they hold for it alone.
	grants confirm.Grants

	mu     sync.Mutex
	cancel context.CancelFunc // of the running prompt; nil when none runs
	// endPrompt ends the running prompt (Live.Prompt's end of begin); emit calls it
	// when the prompt's turn_end passes, so that whoever hears that the turn ended
	// finds the session free.
	endPrompt func()
	// used orders the sessions by their last use (Host.useSeq), for letting idle ones
	// go; gone is set once the host has let the session go: it takes no prompt.
	used uint64
	gone bool
	// items are the changes the running batch of calls made (edits, and what shell
	// commands changed), which Run records.
	items []turnItem
	// recorder records what the session's shell commands change; nil where sessions
	// are not stored.
	recorder *checkpoint.Recorder
	// runs times the running batch's calls, which Run records.
	runs runTimer
	// agents are the conversations of the running batch's sub-agents, which Run records.
	agents []agentRecord
	// view is the toolbox's registry with the session's own tools added (search).
	view registryView
	// childUsage is what the sub-agents of the running batch spent (invoke_agent),
	// which the agent loop takes after the batch; guarded by mu.
	childUsage clients.Usage

	// sched is the session's scheduler; only the prompt's goroutine uses it.
	sched schedulerFor
	seq   atomic.Uint64
}

// ID returns the session's id.
func (l *Live) ID() string { return l.id }

// Model returns the name of the session's model.
func (l *Live) Model() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.model
}

// Session returns the agent loop of the session.
func (l *Live) Session() *Session { return l.sess }

// Metrics returns the metrics of the session's tool calls since it became live (a
// session resumed from the store starts anew).
func (l *Live) Metrics() []tools.ToolStats { return l.metrics.Snapshot() }

// Plan returns the session's todo list, as write_todos last wrote it.
func (l *Live) Plan() []PlanEntry { return planOf(l.todos.Items()) }

// Prompt runs one prompt of the session to its end, as Session.Prompt does. A second
// prompt while one runs fails with ErrBusy; Host.Cancel cancels it. A prompt that
// starts with a custom command ("/git:commit …", commands.go) is that command's prompt,
// expanded; a shell command of it that does not run fails the prompt, unsent. A session the
// host let go since it was opened is resumed first, and the prompt runs there.
func (l *Live) Prompt(ctx context.Context, text string, ec *EditorContext, extra ...clients.Part) (Result, error) {
	ctx, end, err := l.begin(ctx)
	if errors.Is(err, errLetGo) {
		// Let go between Open and Prompt: resumed from the store.
		var again *Live
		if again, err = l.h.Open(ctx, l.id); err == nil {
			l = again
			ctx, end, err = l.begin(ctx)
		}
	}
	if err != nil {
		return Result{StopReason: StopError}, err
	}
	defer end()
	l.mu.Lock()
	l.endPrompt = end
	l.mu.Unlock()
	if err := l.h.tb.Config().HookErrors; err != nil && !l.sess.started.Load() {
		// Said once per session, before its hooks first run.
		l.sess.tellHooks(strings.Split("hooks left out of the settings: "+err.Error(), "\n"))
	}
	text, _, err = l.expandCommand(ctx, text)
	if err != nil {
		return Result{StopReason: StopError}, err
	}
	return l.sess.Prompt(ctx, text, ec, extra...)
}

// errLetGo is the error of begin on a session the host has let go.
var errLetGo = errors.New("the session was let go")

// begin starts a prompt: it returns the prompt's context, which Host.Cancel cancels,
// and the function that ends the prompt.
func (l *Live) begin(ctx context.Context) (context.Context, func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gone {
		return nil, nil, errLetGo
	}
	if l.cancel != nil {
		return nil, nil, fmt.Errorf("session %s: %w", l.id, ErrBusy)
	}
	ctx, cancel := context.WithCancel(ctx)
	l.cancel = cancel
	l.used = l.h.useSeq.Add(1)
	// Once: a prompt is ended when its turn_end is told and again when Prompt returns,
	// by when the next prompt may have begun.
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			l.mu.Lock()
			l.cancel = nil
			l.endPrompt = nil
			l.used = l.h.useSeq.Add(1)
			l.mu.Unlock()
			cancel()
		})
	}, nil
}

// letGo marks the session let go, unless it is answering a prompt, and reports
// whether it did.
func (l *Live) letGo() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil {
		return false
	}
	l.gone = true
	return true
}

// cancelPrompt cancels the running prompt, if any, and reports whether there was one.
func (l *Live) cancelPrompt() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel == nil {
		return false
	}
	l.cancel()
	return true
}

// emit passes an update of the session on, tagged with its id. A turn_end first ends
// the running prompt: a front end that hears it may send the next prompt, or undo this
// one, at once, before Prompt has returned.
func (l *Live) emit(u Update) {
	u.Session = l.id
	if u.Kind == UpdateTurnEnd {
		l.mu.Lock()
		end := l.endPrompt
		l.mu.Unlock()
		if end != nil {
			end()
		}
	}
	l.h.emit(u)
}

// Run implements Runner: it runs a batch of the model's calls on the session's
// scheduler, under the host's ids, with the session's todo list. The batch shares one
// context: cancelling one of its calls (Host.CancelCall) cancels the batch.
func (l *Live) Run(ctx context.Context, reqs []tools.Request) []tools.CallResult {
	sched := l.scheduler()
	ctx = interact.WithSession(toolbox.WithTodos(context.WithValue(ctx, parentKey{}, l), l.todos), callSession{l})
	ctx, cancel := context.WithCancel(l.h.tb.Config().WithSession(ctx, l.state))
	defer cancel()
	wire := make([]tools.Request, len(reqs))
	seen := map[string]bool{}
	for i, r := range reqs {
		id := r.CallID
		if id == "" {
			id = "call-" + strconv.FormatUint(l.seq.Add(1), 10)
		}
		wid := l.id + "/" + id
		for seen[wid] {
			wid += "'"
		}
		seen[wid] = true
		wire[i] = tools.Request{CallID: wid, Name: r.Name, Args: r.Args}
		defer l.h.track(wid, l.id, cancel)()
	}
	if l.recorder != nil {
		ctx = checkpoint.WithRecorder(ctx, l.recorder)
	}
	res := runAgentsLast(ctx, sched, wire)
	l.mu.Lock()
	items := l.items
	l.items = nil
	runs := l.runs.take()
	agents := l.agents
	l.agents = nil
	l.mu.Unlock()
	l.sess.recordItems(items)
	l.sess.recordRuns(runs)
	l.sess.recordAgents(agents)
	for i := range res {
		if i < len(reqs) && reqs[i].CallID != "" {
			res[i].CallID = reqs[i].CallID
		}
	}
	return res
}

// runAgentsLast runs a batch on sched, its invoke_agent calls in a batch of their own
// after the others, and returns the results in request order. A batch holds the
// workspace's locks of the files its calls write until all of them end, so a
// sub-agent writing such a file within the same batch would wait for a lock its own
// batch holds until it ended: for ever.
func runAgentsLast(ctx context.Context, sched *tools.Scheduler, reqs []tools.Request) []tools.CallResult {
	var first, agents []int
	for i, r := range reqs {
		if r.Name == AgentToolName {
			agents = append(agents, i)
		} else {
			first = append(first, i)
		}
	}
	if len(agents) == 0 || len(first) == 0 {
		return sched.Run(ctx, reqs)
	}
	res := make([]tools.CallResult, len(reqs))
	for _, group := range [][]int{first, agents} {
		batch := make([]tools.Request, len(group))
		for j, i := range group {
			batch[j] = reqs[i]
		}
		for j, r := range sched.Run(ctx, batch) {
			res[group[j]] = r
		}
	}
	return res
}

// noteCall notes an event of a call of the session's, or of one of its sub-agents: the
// edits it made (for undo) and when it ran (for agentls stats), which Run records with
// the prompt.
func (l *Live) noteCall(ev tools.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := editOf(ev); ok {
		l.items = append(l.items, turnItem{edit: &e})
	}
	l.runs.event(ev)
}

// addChildUsage adds what a sub-agent of the session spent.
func (l *Live) addChildUsage(u clients.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.childUsage = addUsage(l.childUsage, u)
}

// takeChildUsage implements childUsage: it returns what the sub-agents spent since it
// was last called.
func (l *Live) takeChildUsage() clients.Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.childUsage
	l.childUsage = clients.Usage{}
	return u
}

// IDOf returns the id of the host's session whose tool call runs with ctx (a
// sub-agent's calls are its parent's session's), or "" for a call of no session
// (RunTool): for a front end that serves several sessions with one Asker or
// workspace.Writer.
func IDOf(ctx context.Context) string {
	if l, ok := ctx.Value(parentKey{}).(*Live); ok {
		return l.id
	}
	return ""
}

// registryView is a registry of the toolbox's (base) with a session's own tools added.
type registryView struct{ base, reg *tools.Registry }

// registry returns the tools of the session: those of the toolbox's registry in force,
// with the session's google_web_search.
func (l *Live) registry() *tools.Registry { return l.registryOver(l.h.tb.Config().Registry) }

// situation is what the session's tools are declared for: its approval mode, whether
// its front end can ask a person, and the tools its policy refuses outright.
func (l *Live) situation() tools.Situation {
	p := l.h.tb.Config().Policy
	mode := p.Mode()
	if m := l.mode.Load(); m != nil && *m != "" {
		mode = *m
	}
	return tools.Situation{Mode: mode, CanAsk: l.h.o.Asker != nil, Refused: p.DeniesOutright}
}

// registryOver returns base with the session's own tools added: base itself when there
// are none, else a clone, made once per base.
func (l *Live) registryOver(base *tools.Registry) *tools.Registry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.search == nil {
		return base
	}
	if l.view.base != base {
		reg := base.Clone()
		reg.Register(l.search)
		l.view = registryView{base: base, reg: reg}
	}
	return l.view.reg
}

// scheduler returns the session's scheduler, built anew when the toolbox's policy or
// registry changed since.
func (l *Live) scheduler() *tools.Scheduler {
	h := l.h
	if l.sched.stale(h.tb) {
		cfg := h.tb.Config()
		l.sched = schedulerFor{cfg: cfg, sched: h.tb.SchedulerWith(l.registryOver(cfg.Registry), l.policy(cfg.Policy), l.asker(), func(ev tools.Event) {
			l.noteCall(ev)
			l.emit(Update{Kind: UpdateToolCall, Call: &ev})
		}, toolHooks{l}, l.metrics)}
	}
	return l.sched.sched
}

// asker returns the host's Asker as the session's calls use it: the Notification
// hooks hear of each question.
func (l *Live) asker() confirm.Asker {
	if l.h.o.Asker == nil {
		return nil
	}
	return notifyingAsker{l: l, asker: l.h.o.Asker}
}

// end lets go of the session's file (a delete elsewhere may remove it now) and runs
// the session's SessionEnd hooks, for reason, on their own (Host.Close waits for them),
// if its first prompt began.
func (l *Live) end(reason string) {
	if l.h.o.Store != nil && l.id != "" {
		l.h.o.Store.release(l.id)
	}
	r := l.h.tb.Config().Hooks
	if l.sess == nil || !l.sess.started.Load() || !r.Has(hooks.SessionEnd) {
		return
	}
	l.h.hookWork.Go(func() {
		// Advisory: nobody waits for the answer, which is only logged.
		r.Run(l.h.hookCtx, hooks.SessionEnd, l.sess.hookCall(reason, map[string]any{"reason": reason}))
	})
}

// policy returns the workspace's policy p as the session sees it: in its approval
// mode, with its own "always" answers.
func (l *Live) policy(p *confirm.Policy) sessionPolicy {
	return sessionPolicy{p: p, mode: &l.mode, grants: &l.grants}
}

// sessionPolicy is the workspace's policy in a session's approval mode, when the
// session has one of its own (mode; nil means the workspace's), with the session's
// "always" answers (grants), which no other session shares.
type sessionPolicy struct {
	p      *confirm.Policy
	mode   *atomic.Pointer[confirm.Mode]
	grants *confirm.Grants
}

func (s sessionPolicy) Decide(c confirm.Call) confirm.Verdict {
	m := s.p.Mode()
	if s.mode != nil {
		if own := s.mode.Load(); own != nil && *own != "" {
			m = *own
		}
	}
	return s.p.DecideWith(c, m, s.grants)
}

func (s sessionPolicy) Remember(c confirm.Call, o confirm.Outcome) { s.p.RememberIn(s.grants, c, o) }

// planOf makes the plan of a todo list.
func planOf(items []todos.Item) []PlanEntry {
	out := make([]PlanEntry, len(items))
	for i, it := range items {
		out[i] = PlanEntry{Content: it.Description, Status: it.Status}
	}
	return out
}
