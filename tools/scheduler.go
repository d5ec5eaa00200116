package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/sourcegraph/conc"
	"github.com/sourcegraph/conc/panics"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/workspace"
)

// MaxOutputChars is how much of a call's output the model receives, in characters
// (Unicode code points, not bytes). Longer output is cut to its first fifth and last
// four fifths of this budget, and saved whole to a file (see Options.OutputDir).
const MaxOutputChars = 40_000

const (
	// maxAttempts counts the first try: a retryable failure of an idempotent tool is
	// tried twice more.
	maxAttempts      = 3
	defaultRetryBase = 200 * time.Millisecond
)

// Policy decides whether a call runs, is refused or must be asked about (with the
// answers to offer in the verdict's Details.Choices), and remembers the answers that
// hold for the rest of the session ("always", "reject always"). *confirm.Policy
// implements it.
type Policy interface {
	Decide(c confirm.Call) confirm.Verdict
	Remember(c confirm.Call, o confirm.Outcome)
}

// ApprovalSaver saves the rule an "always, and save" answer stands for (see
// confirm.Answer.Persist) and says where it went, or, as an error, why it was not
// saved; *toolbox.Toolbox implements it.
type ApprovalSaver interface {
	SaveApproval(req confirm.Request, a confirm.Answer) (string, error)
}

// Options configure a Scheduler.
type Options struct {
	// Registry is where calls find their tools.
	Registry *Registry
	// Policy decides on each call. Nil asks about every call with confirmation details
	// and allows the rest.
	Policy Policy
	// Asker puts confirmations to a person. Nil refuses every call that needs asking,
	// with a message saying how to allow it.
	Asker confirm.Asker
	// Observe receives every state change and output chunk; it may be nil.
	Observe Observer
	// Saver saves the approvals a person asks to keep; nil tells them it cannot.
	Saver ApprovalSaver
	// OutputDir is where the full output of a shortened result is saved; empty means
	// agentls-output in os.TempDir().
	OutputDir string
	// Logger receives warnings and tool panics; nil discards.
	Logger *slog.Logger
	// Locks are the per-file locks shared by every scheduler of the workspace: its
	// *workspace.Workspace. Nil gives the scheduler locks of its own, which keep apart
	// only its own calls.
	Locks PathLocker
	// Metrics receive every call the scheduler ends: its tool, status and execution
	// time (a session's and the process's, say). Nil entries are skipped.
	Metrics []*Metrics
	// Hooks, when set, are the user's BeforeTool and AfterTool hooks.
	Hooks ToolHooks
}

// PathLocker holds the per-file locks of a workspace; *workspace.Workspace implements
// it. LockPaths takes the locks of paths, in an order of its own, and returns the
// function that releases them; or returns ctx's error, holding none, if ctx ends first.
type PathLocker interface {
	LockPaths(ctx context.Context, paths ...string) (unlock func(), err error)
}

// Scheduler runs tool calls: it validates them, asks the policy and, where needed, a
// person, runs what may run in parallel, and reports every step as an Event. Batches
// (Run calls) run one after another in the order they came; within a batch, calls that
// need no consent start at once and confirmations are put one at a time in request
// order. Writing calls of a batch that share a file run one after another in request
// order, each from its proposal to its end, so that a later one proposes its change to
// the file as the earlier ones left it. A batch holds the workspace's locks of the files
// it writes (Options.Locks) from its first proposal to its end, so that batches of
// different schedulers writing one file are kept apart in the same way, in the order
// they asked. A call whose arguments set wait_for_previous (see WaitForPrevious) starts
// only after the earlier calls of its batch have ended, and the later ones after it; so
// does a call that may change the shape of the file tree (Capabilities.Reshapes), so that
// no call of the batch is judged before it and runs after it.
// It is safe for concurrent use.
type Scheduler struct {
	reg       *Registry
	policy    Policy
	asker     confirm.Asker
	observe   Observer
	saver     ApprovalSaver
	outputDir string
	logger    *slog.Logger
	retryBase time.Duration
	metrics   []*Metrics
	hooks     ToolHooks

	runs fifo
	// shared are the workspace's path locks, held by a batch across the proposals and
	// writes of its writing calls; own keep apart calls of one batch that a person's
	// modification moved onto a file another of its calls writes.
	shared PathLocker
	own    workspace.PathLocks
	seq    atomic.Uint64
	// queued counts calls waiting for an earlier call of their batch that writes the
	// same file, and ownWaits calls waiting for own; tests watch them to know a call is
	// held back.
	queued   atomic.Int32
	ownWaits atomic.Int32

	vmu        sync.Mutex
	validators map[string]cachedValidator
}

type cachedValidator struct {
	schema string
	v      *Validator
	err    error
}

// NewScheduler returns a scheduler for the tools of o.Registry.
func NewScheduler(o Options) *Scheduler {
	s := &Scheduler{
		reg:        o.Registry,
		policy:     o.Policy,
		asker:      o.Asker,
		observe:    o.Observe,
		saver:      o.Saver,
		outputDir:  o.OutputDir,
		logger:     o.Logger,
		shared:     o.Locks,
		retryBase:  defaultRetryBase,
		metrics:    o.Metrics,
		hooks:      o.Hooks,
		validators: map[string]cachedValidator{},
	}
	if s.reg == nil {
		s.reg = NewRegistry(o.Logger, Filter{})
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.outputDir == "" {
		s.outputDir = filepath.Join(os.TempDir(), "agentls-output")
	}
	if s.shared == nil {
		s.shared = new(workspace.PathLocks)
	}
	return s
}

// call is the scheduler's state of one call. It is owned by one goroutine at a time:
// the preparing task until prepared is closed, then (for calls that need asking) the
// confirmation loop, then the executing task. Other calls of the batch read only
// writes, once located is closed, and wait on done.
type call struct {
	req      Request
	tool     Tool
	info     Info
	inv      Invocation
	caps     Capabilities
	title    string
	locs     []Location
	details  *confirm.Details
	pcall    confirm.Call
	allowed  bool // run without asking
	needsAsk bool
	// waitPrevious is the call's wait_for_previous, or set because the call reshapes
	// the file tree: it is proposed and run only after every earlier call of its batch
	// has ended, and the later ones only after it.
	waitPrevious bool
	// note is told the model after the call's own output: which hunks of its proposal
	// the person accepted.
	note string
	// scheduled is set once Title, Kind, Locations and Args are known.
	scheduled bool
	// writes are the cleaned, sorted paths a writing call writes, as its Locations said
	// when it was built; later calls of the batch wait for c by them, and the batch
	// holds their shared locks. They are not changed afterwards, even if a modification
	// moves the call (see execute).
	writes []string
	// located is closed once writes is set or c has ended before it was.
	located  chan struct{}
	prepared chan struct{}
	// done is closed when c has its result.
	done   chan struct{}
	result *CallResult
	// started is when the call began executing; zero if it never did.
	started time.Time
	// ctx is the context the call executes with; nil until it does. The AfterTool
	// hooks run with it.
	ctx context.Context
	// hookNotes are what the hooks decided about the call, for people; hookContext is
	// what the BeforeTool hooks added for the model, rewritten the argument names they
	// rewrote; stop is set when a hook ended the agent's turn with the call.
	hookNotes   []string
	hookContext string
	rewritten   []string
	stop        string
	// tail is the call an AfterTool hook chained to c (see TailCall); chained marks a
	// call run as such, whose hooks chain nothing further.
	tail    *TailCall
	chained bool
}

// RunOne runs a single call.
func (s *Scheduler) RunOne(ctx context.Context, req Request) CallResult {
	return s.Run(ctx, []Request{req})[0]
}

// Run runs a batch of calls and returns their results in request order, each with its
// CallID (made up when the request had none). It waits for every call to end, including
// calls still running when ctx is cancelled: those get the cancelled context and end
// cancelled, and calls not yet running are cancelled without running. A Run that starts
// while another is in progress waits for it, in the order the Runs came; so a tool must
// not call Run of the scheduler that runs it, or it waits for itself.
func (s *Scheduler) Run(ctx context.Context, reqs []Request) []CallResult {
	calls := make([]*call, len(reqs))
	for i, r := range reqs {
		if r.CallID == "" {
			r.CallID = fmt.Sprintf("agentls-call-%d", s.seq.Add(1))
		}
		calls[i] = newCall(r)
	}
	if err := s.runs.lock(ctx); err != nil {
		for _, c := range calls {
			s.finishError(c, &Error{Type: ErrCancelled, Err: err,
				Message: "The call was cancelled while waiting for an earlier batch of tool calls to finish."})
		}
		return collect(calls)
	}
	defer s.runs.unlock()
	s.runBatch(ctx, calls)
	s.runTails(ctx, calls)
	return collect(calls)
}

func newCall(r Request) *call {
	return &call{req: r, located: make(chan struct{}), prepared: make(chan struct{}), done: make(chan struct{})}
}

// runTails runs the calls the AfterTool hooks chained to calls, as a batch of their
// own: each is judged, asked about and contained as any call is, and its result
// replaces, for the model, the result of the call it was chained to.
func (s *Scheduler) runTails(ctx context.Context, calls []*call) {
	var from, tails []*call
	for _, c := range calls {
		if c.tail == nil || ctx.Err() != nil {
			continue
		}
		args := c.tail.Args
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		t := newCall(Request{CallID: c.req.CallID + "/tail", Name: c.tail.Name, Args: args})
		t.chained = true
		from, tails = append(from, c), append(tails, t)
	}
	if len(tails) == 0 {
		return
	}
	s.runBatch(ctx, tails)
	for i, t := range tails {
		// The chained call's result, under the identity and hook notes of the call it
		// stands for.
		orig, r := from[i].result, *t.result
		r.CallID, r.Name, r.Hooks, r.Stop = orig.CallID, orig.Name, orig.Hooks, cmp.Or(orig.Stop, r.Stop)
		from[i].result = &r
	}
}

// runBatch runs calls, which hold no result yet, as one batch; s.runs is held.
func (s *Scheduler) runBatch(ctx context.Context, calls []*call) {
	b := &batch{calls: calls, locked: make(chan struct{})}
	defer b.unlock()
	var wg conc.WaitGroup
	wg.Go(func() { s.lockBatch(ctx, b) })
	for i, c := range calls {
		wg.Go(func() {
			func() {
				defer close(c.prepared)
				s.prepare(ctx, c, b, calls[:i])
			}()
			if c.allowed {
				s.protect(c, "executing", func() { s.execute(ctx, c, b) })
			}
		})
	}
	// Confirmations are put one at a time, in request order, while allowed calls run. A
	// call waiting for an earlier one that writes the same file cannot hold this up for
	// ever: the earlier call was asked about first and has been set running or ended.
	for _, c := range calls {
		<-c.prepared
		if !c.needsAsk {
			continue
		}
		var approved bool
		s.protect(c, "asking", func() { approved = s.ask(ctx, c) })
		if approved {
			wg.Go(func() { s.protect(c, "executing", func() { s.execute(ctx, c, b) }) })
		}
	}
	wg.Wait()
}

// batch is the state a Run's calls share: the workspace's locks of the files they write.
type batch struct {
	calls []*call
	// locked is closed once held holds the locks of every file the batch's calls write,
	// or err says why not.
	locked  chan struct{}
	held    map[string]bool
	err     error
	release func()
}

// lockBatch takes the shared locks of the files b's calls write, once every call is
// built. They are taken together, in the locker's order, so that two batches writing
// overlapping files never wait for each other.
func (s *Scheduler) lockBatch(ctx context.Context, b *batch) {
	defer close(b.locked)
	b.held = map[string]bool{}
	var paths []string
	for _, c := range b.calls {
		<-c.located
		for _, p := range c.writes {
			if !b.held[p] {
				b.held[p] = true
				paths = append(paths, p)
			}
		}
	}
	if len(paths) == 0 {
		return
	}
	var r *panics.Recovered
	if r = panics.Try(func() { b.release, b.err = s.shared.LockPaths(ctx, paths...) }); r != nil {
		b.err = fmt.Errorf("the path locks panicked: %v", r.Value)
		s.logger.Error("path locks panicked", "panic", fmt.Sprint(r.Value), "stack", string(r.Stack))
	}
	if b.err == nil && b.release == nil {
		b.err = errors.New("the path locks returned no unlock function")
	}
	if b.err != nil {
		b.held = nil
	}
}

func (b *batch) unlock() {
	if b.release != nil {
		b.release()
	}
}

func collect(calls []*call) []CallResult {
	results := make([]CallResult, len(calls))
	for i, c := range calls {
		results[i] = *c.result
	}
	return results
}

// protect runs f, turning a panic into an unhandled_exception result for c (unless c
// already ended) and a log entry with the stack.
func (s *Scheduler) protect(c *call, stage string, f func()) {
	r := panics.Try(f)
	if r == nil {
		return
	}
	s.logger.Error("tool call panicked", "tool", c.req.Name, "call", c.req.CallID, "stage", stage,
		"panic", fmt.Sprint(r.Value), "stack", string(r.Stack))
	if c.result == nil {
		s.finishError(c, Errorf(ErrUnhandledException, "%s panicked while %s: %v", c.req.Name, stage, r.Value))
	}
}

// guard runs f, a call into the tool, and reports whether it returned normally; a panic
// ends c with an unhandled_exception result naming the method.
func (s *Scheduler) guard(c *call, method string, f func()) bool {
	r := panics.Try(f)
	if r == nil {
		return true
	}
	s.logger.Error("tool panicked", "tool", c.req.Name, "call", c.req.CallID, "method", method,
		"panic", fmt.Sprint(r.Value), "stack", string(r.Stack))
	s.finishError(c, Errorf(ErrUnhandledException, "%s panicked in %s: %v", c.req.Name, method, r.Value))
	return false
}

// prepare validates, builds and describes c, waits for the earlier calls of its batch
// that write the same files (earlier) to end, then gets c's confirmation details and asks
// the policy about it; on return either c has ended, or c.allowed or c.needsAsk is set.
func (s *Scheduler) prepare(ctx context.Context, c *call, b *batch, earlier []*call) {
	built := false
	var prev *call
	if len(earlier) > 0 {
		prev = earlier[len(earlier)-1]
	}
	func() {
		defer close(c.located)
		s.protect(c, "preparing", func() { built = s.build(ctx, c, prev) })
	}()
	if built && len(c.writes) > 0 {
		// Nobody else may write c's files between its proposal and its write.
		<-b.locked
		if b.err != nil {
			te := &Error{Type: ErrCancelled, Err: b.err,
				Message: "The call was cancelled while waiting for another session's call writing the same file."}
			if ctx.Err() == nil {
				te = &Error{Type: ErrExecutionFailed, Err: b.err, Message: fmt.Sprintf("Could not lock the files of the call: %v", b.err)}
			}
			s.finishError(c, te)
			return
		}
	}
	if built && !s.awaitSequence(ctx, c, earlier) {
		return
	}
	if built && s.awaitEarlier(ctx, c, earlier) {
		s.protect(c, "preparing", func() { s.propose(ctx, c) })
	}
}

// build validates and builds c and describes it; it reports false if c has ended. The
// calls of a batch are built concurrently, but announced (StatusScheduled) in request
// order: c's announcement waits until prev, the call before it, has been built, so that
// editors list a model turn's calls in the order the model asked for them.
func (s *Scheduler) build(ctx context.Context, c *call, prev *call) bool {
	s.emit(c, Event{Status: StatusValidating})
	if ctx.Err() != nil {
		s.finishError(c, &Error{Type: ErrCancelled, Message: "The call was cancelled before it started.", Err: ctx.Err()})
		return false
	}
	tool, ok := s.reg.Get(c.req.Name)
	if !ok {
		msg := fmt.Sprintf("Tool %q is not registered; call tools by their exact names.", c.req.Name)
		if sug := s.reg.Suggest(c.req.Name); len(sug) > 0 {
			msg += " Did you mean " + orList(sug) + "?"
		} else if near := s.reg.Closest(c.req.Name, 3); len(near) > 0 {
			msg += " No tool has a similar name; did you mean one of " + orList(near) + "? The declared tools are the ones you can call."
		}
		s.finishError(c, &Error{Type: ErrNotRegistered, Message: msg})
		return false
	}
	c.tool = tool
	if !s.guard(c, "Info", func() { c.info = tool.Info() }) {
		return false
	}
	if !declaresOwnWaitForPrevious(c.info.Parameters) {
		args, wait, err := splitWaitForPrevious(c.req.Args)
		if err != nil {
			s.finishError(c, AsError(err, ErrInvalidParams))
			return false
		}
		c.req.Args, c.waitPrevious = args, wait
	}
	if !s.beforeHooks(ctx, c) {
		return false
	}
	v, err := s.validator(c.info)
	if err != nil {
		s.finishError(c, Errorf(ErrExecutionFailed, "tool %s has an unusable parameter schema: %w", c.info.Name, err))
		return false
	}
	if err := v.Validate(c.req.Args); err != nil {
		s.finishError(c, AsError(err, ErrInvalidParams))
		return false
	}
	if !s.guard(c, "Build", func() { c.inv, err = tool.Build(c.req.Args) }) {
		return false
	}
	if err != nil {
		s.finishError(c, AsError(err, ErrInvalidParams))
		return false
	}
	if c.inv == nil {
		s.finishError(c, Errorf(ErrExecutionFailed, "tool %s built no call from valid arguments", c.info.Name))
		return false
	}
	if !s.guard(c, "Capabilities", func() { c.caps = c.inv.Capabilities() }) || !s.checkCommand(c) {
		return false
	}
	if c.caps.Reshapes {
		// The paths the other calls of the batch are judged by (a redirection, a file
		// to edit) must not change shape between their consent and their write: the
		// call is proposed after the earlier ones end, and the later ones after it
		// ends (awaitSequence).
		c.waitPrevious = true
	}
	if !s.guard(c, "Describe", func() { c.title = c.inv.Describe() }) ||
		!s.guard(c, "Locations", func() { c.locs = c.inv.Locations() }) {
		return false
	}
	if c.info.Kind.Writes() {
		c.writes = lockPaths(c.locs)
	}
	if prev != nil {
		select {
		case <-prev.located:
		case <-ctx.Done(): // the order no longer matters
		}
	}
	c.scheduled = true
	s.emit(c, Event{Status: StatusScheduled})
	return true
}

// awaitEarlier waits until every call of earlier that writes a file c writes has ended,
// so that c's proposal is computed against the files as those calls left them. It
// reports false if ctx ended first, which ended c.
func (s *Scheduler) awaitEarlier(ctx context.Context, c *call, earlier []*call) bool {
	if len(c.writes) == 0 {
		return true
	}
	wait := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-ctx.Done():
			s.finishError(c, &Error{Type: ErrCancelled, Err: ctx.Err(),
				Message: "The call was cancelled while waiting for an earlier call writing the same file to finish."})
			return false
		}
	}
	for _, e := range earlier {
		// e's paths are known moments after the batch starts, once it is built.
		if !wait(e.located) {
			return false
		}
		if !sharePath(c.writes, e.writes) {
			continue
		}
		s.queued.Add(1)
		ok := wait(e.done)
		s.queued.Add(-1)
		if !ok {
			return false
		}
	}
	return true
}

// awaitSequence keeps the order wait_for_previous asks for, as Gemini CLI's scheduler
// does: a call that set it starts only after every earlier call of its batch has ended,
// and the calls after it only after it has ended (the calls between two such calls run
// together). It reports false if ctx ended first, which ended c. Confirmations are put
// in request order, so no wait holds up a question the awaited calls depend on.
func (s *Scheduler) awaitSequence(ctx context.Context, c *call, earlier []*call) bool {
	wait := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-ctx.Done():
			s.finishError(c, &Error{Type: ErrCancelled, Err: ctx.Err(),
				Message: "The call was cancelled while waiting, as wait_for_previous asked, for earlier calls of its turn to finish."})
			return false
		}
	}
	var awaited []*call
	if c.waitPrevious {
		awaited = earlier
	} else {
		var barrier *call
		for _, e := range earlier {
			if !wait(e.located) {
				return false
			}
			if e.waitPrevious {
				barrier = e
			}
		}
		if barrier != nil {
			awaited = []*call{barrier}
		}
	}
	for _, e := range awaited {
		s.queued.Add(1)
		ok := wait(e.done)
		s.queued.Add(-1)
		if !ok {
			return false
		}
	}
	return true
}

// sharePath reports whether the sorted path lists a and b have a path in common.
func sharePath(a, b []string) bool {
	for len(a) > 0 && len(b) > 0 {
		switch strings.Compare(a[0], b[0]) {
		case 0:
			return true
		case -1:
			a = a[1:]
		default:
			b = b[1:]
		}
	}
	return false
}

// propose gets c's confirmation details and asks the policy about c.
func (s *Scheduler) propose(ctx context.Context, c *call) {
	var err error
	if !s.guard(c, "Confirmation", func() { c.details, err = c.inv.Confirmation(ctx) }) {
		return
	}
	if err != nil {
		if ctx.Err() != nil {
			s.finishError(c, &Error{Type: ErrCancelled, Message: "The call was cancelled before it started.", Err: err})
		} else {
			s.finishError(c, AsError(err, ErrExecutionFailed))
		}
		return
	}
	if !s.checkShown(c) {
		return
	}
	c.pcall = confirm.Call{Tool: c.info.Name, ReadOnly: c.info.Kind.ReadOnly(), Server: c.info.Server,
		Args: c.req.Args, Details: c.details}
	verdict := s.decide(c.pcall)
	switch {
	case verdict.Decision == confirm.Allow && c.details != nil && c.details.PersonOnly:
		// Whatever the policy says, only the person's answer runs it (see
		// confirm.Details.PersonOnly).
		c.details = offered(c.details)
		c.needsAsk = true
	case verdict.Decision == confirm.Allow:
		c.allowed = true
	case verdict.Decision == confirm.Ask:
		switch {
		case verdict.Details != nil:
			c.details = verdict.Details
		case c.details == nil:
			c.details = &confirm.Details{Type: confirm.TypeInfo, Title: c.title,
				Prompt: fmt.Sprintf("Allow %s: %s?", c.info.Name, c.title)}
		}
		c.details = offered(c.details)
		c.needsAsk = true
	default:
		reason := verdict.Reason
		if reason == "" {
			reason = fmt.Sprintf("The policy does not allow %s.", c.info.Name)
		}
		s.finishError(c, &Error{Type: ErrPolicyViolation, Message: reason})
	}
}

// offered returns d with the answers a person is offered: the policy's (set in its
// verdict), the question's own, or else allow once and reject, which hold for this
// call alone. ask_user's questions are answered with words, not choices.
func offered(d *confirm.Details) *confirm.Details {
	if d.Type == confirm.TypeAsk {
		return d
	}
	copied := *d
	if len(d.Choices) > 0 {
		copied.Choices = confirm.WithIDs(d.Choices)
		return &copied
	}
	copied.Choices = confirm.OnceOrReject()
	return &copied
}

// checkCommand enforces the registry's command restriction on a shell call.
func (s *Scheduler) checkCommand(c *call) bool {
	if c.caps.Command == "" {
		return true
	}
	if err := s.reg.CheckCommand(c.info.Name, c.caps.Command); err != nil {
		s.finishError(c, AsError(err, ErrPolicyViolation))
		return false
	}
	return true
}

// checkShown enforces the registry's command restriction on the line c's confirmation
// shows, when it differs from the call's own command: a persistent shell puts the
// variables it carries in front (export NAME=value; …), and they run as part of the
// line, so the restriction judges the line the policy judges.
func (s *Scheduler) checkShown(c *call) bool {
	if c.caps.Command == "" || c.details == nil || c.details.Type != confirm.TypeExecute || c.details.Command == c.caps.Command {
		return true
	}
	if err := s.reg.CheckCommand(c.info.Name, c.details.Command); err != nil {
		s.finishError(c, AsError(err, ErrPolicyViolation))
		return false
	}
	return true
}

func (s *Scheduler) decide(pc confirm.Call) confirm.Verdict {
	if s.policy != nil {
		return s.policy.Decide(pc)
	}
	if pc.Details != nil {
		return confirm.Verdict{Decision: confirm.Ask}
	}
	return confirm.Verdict{Decision: confirm.Allow}
}

// validator returns the cached validator of the tool's current schema.
func (s *Scheduler) validator(info Info) (*Validator, error) {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	if cv, ok := s.validators[info.Name]; ok && cv.schema == string(info.Parameters) {
		return cv.v, cv.err
	}
	v, err := NewValidator(info.Parameters)
	s.validators[info.Name] = cachedValidator{schema: string(info.Parameters), v: v, err: err}
	return v, err
}

// ask puts c's confirmation to the person and reports whether c may run; if not, c
// has ended.
func (s *Scheduler) ask(ctx context.Context, c *call) bool {
	if len(c.details.Hunks) > 0 && c.caps.Modify == nil {
		// The call cannot apply a part of its proposal: nobody is offered the choice.
		d := *c.details
		d.Hunks = nil
		c.details = &d
	}
	s.emit(c, Event{Status: StatusAwaitingApproval, Details: c.details})
	if s.asker == nil && c.details.Type == confirm.TypeAsk {
		s.finishError(c, Errorf(ErrPolicyViolation,
			"%s puts questions to the user, but nobody can be asked in this session; decide without asking, and say what you assumed.", c.info.Name))
		return false
	}
	if s.asker == nil && c.details.PersonOnly {
		s.finishError(c, Errorf(ErrPolicyViolation,
			"%s runs only on the user's answer, and nobody can be asked in this session, so it was not run; "+
				"only the user's answer lets it run: no policy rule or approval mode does.", c.info.Name))
		return false
	}
	if s.asker == nil && c.details.NoAlways {
		// No approval mode lets it run: only a rule, or a person, does.
		s.finishError(c, Errorf(ErrPolicyViolation,
			"%s needs the user's answer every time, but nobody can be asked in this session, so it was not run. "+
				"To let it run without asking, add a policy rule {\"toolName\": %q, \"decision\": \"allow\"} to the settings.", c.info.Name, c.info.Name))
		return false
	}
	if s.asker == nil {
		s.finishError(c, Errorf(ErrPolicyViolation,
			"%s needs approval, but nobody can be asked in this session, so it was not run. "+
				"To let it run without asking, add a policy rule {\"toolName\": %q, \"decision\": \"allow\"} "+
				"to the settings, or use the auto_edit or yolo approval mode.", c.info.Name, c.info.Name))
		return false
	}
	if err := ctx.Err(); err != nil {
		s.finishError(c, &Error{Type: ErrCancelled, Message: "The call was cancelled before it was approved.", Err: err})
		return false
	}
	var (
		ans confirm.Answer
		err error
	)
	req := confirm.Request{ID: c.req.CallID + "/confirm", ToolCallID: c.req.CallID, ToolName: c.info.Name, Details: *c.details}
	if r := panics.Try(func() { ans, err = s.asker.Ask(ctx, req) }); r != nil {
		s.logger.Error("asker panicked", "tool", c.req.Name, "call", c.req.CallID,
			"panic", fmt.Sprint(r.Value), "stack", string(r.Stack))
		err = fmt.Errorf("the confirmation failed: %v", r.Value)
	}
	switch {
	case ctx.Err() != nil:
		s.finishError(c, &Error{Type: ErrCancelled, Message: "The call was cancelled while waiting for approval.", Err: ctx.Err()})
		return false
	case err != nil && c.details.Type == confirm.TypeAsk:
		s.finishError(c, &Error{Type: ErrCancelled, Err: err,
			Message: fmt.Sprintf("The questions could not be put to the user (%v); decide without asking, and say what you assumed.", err)})
		return false
	case err != nil:
		s.finishError(c, &Error{Type: ErrCancelled, Err: err,
			Message: fmt.Sprintf("The user did not approve the call (asking failed: %v), so it was not run.", err)})
		return false
	}
	ans, err = ans.Resolve(*c.details)
	if err != nil {
		s.logger.Warn("invalid answer to a confirmation", "tool", c.req.Name, "call", c.req.CallID, "err", err)
		s.finishError(c, &Error{Type: ErrCancelled,
			Message: fmt.Sprintf("The user did not approve the call (invalid answer: %v), so it was not run.", err)})
		return false
	}
	switch {
	case ans.Outcome == confirm.Cancel && c.details.Type == confirm.TypeAsk:
		s.finishError(c, &Error{Type: ErrCancelled, Message: "The user dismissed the questions without answering."})
		return false
	case ans.Outcome == confirm.Cancel:
		s.finishError(c, &Error{Type: ErrCancelled, Message: "The user declined to run this call."})
		return false
	case ans.Outcome == confirm.RejectAlways:
		if s.policy != nil {
			s.policy.Remember(c.pcall, ans.Outcome)
		}
		s.finishError(c, &Error{Type: ErrCancelled, Message: "The user declined to run this call, and every call like it (" +
			rejectedCovers(c.details) + ") for the rest of the session: do not ask for them again."})
		return false
	case ans.Outcome == confirm.ModifyWithEditor && c.details.PersonOnly && c.caps.Modify == nil:
		// No content to modify was offered: the answer is not one to this question.
		s.finishError(c, &Error{Type: ErrCancelled,
			Message: "The front end answered modify_with_editor, which is not an answer to this question, so the call was not run."})
		return false
	}
	switch {
	case ans.AcceptedHunks != nil:
		return s.acceptHunks(c, ans.AcceptedHunks)
	case ans.Outcome == confirm.ModifyWithEditor:
		return s.modify(c, ans.Content)
	case ans.Outcome != confirm.ProceedOnce && s.policy != nil:
		s.policy.Remember(c.pcall, ans.Outcome)
		s.save(c, req, ans)
	}
	if answered := c.caps.Answered; answered != nil {
		return s.guard(c, "Answered", func() { answered(ans) })
	}
	return true
}

// save saves the rule of an "always, and save" answer and tells the person where it
// went, or why it was not saved; the answer holds for the session either way.
func (s *Scheduler) save(c *call, req confirm.Request, ans confirm.Answer) {
	if ans.Persist == "" {
		return
	}
	note := &Note{Text: "the approval was not saved: nothing can save it here; it holds for this session", Warning: true}
	if s.saver != nil {
		msg, err := s.saver.SaveApproval(req, ans)
		switch {
		case err != nil:
			s.logger.Warn("approval not saved", "call", c.req.CallID, "err", err)
			note.Text = err.Error()
		default:
			note = &Note{Text: msg}
		}
	}
	s.emit(c, Event{Note: note})
}

// rejectedCovers says what a "reject always" answer to d covers, for the model.
func rejectedCovers(d *confirm.Details) string {
	for _, ch := range d.Choices {
		if ch.Outcome == confirm.RejectAlways && ch.Covers != "" {
			return ch.Covers
		}
	}
	return "this tool"
}

// acceptHunks applies the hunks of c's proposal the person accepted (valid indices
// into its Details.Hunks, see confirm.Answer.Check) as their modified version of it,
// and notes for the model which were taken. None is a refusal; all, the proposal.
func (s *Scheduler) acceptHunks(c *call, accepted []int) bool {
	d := c.details
	total := len(d.Hunks)
	if len(accepted) == 0 {
		s.finishError(c, &Error{Type: ErrCancelled, Message: fmt.Sprintf(
			"The user rejected all %d %s of the proposed change, so nothing was written.", total, plural(total, "hunk", "hunks"))})
		return false
	}
	if len(accepted) == total {
		return true
	}
	orig := ""
	if d.OriginalContent != nil {
		orig = *d.OriginalContent
	}
	content, err := workspace.ApplyHunks(orig, d.NewContent, accepted)
	if err != nil {
		s.finishError(c, &Error{Type: ErrCancelled, Err: err,
			Message: fmt.Sprintf("The user's choice of hunks could not be applied (%v), so nothing was written.", err)})
		return false
	}
	taken := make(map[int]bool, len(accepted))
	for _, i := range accepted {
		taken[i] = true
	}
	var yes, no []string
	var headers []string
	for i, h := range d.Hunks {
		if taken[i] {
			yes = append(yes, strconv.Itoa(i+1))
		} else {
			no = append(no, strconv.Itoa(i+1))
			headers = append(headers, h.Header())
		}
	}
	c.note = fmt.Sprintf("The user accepted %s %s of %d; %s %s %s not applied: %s. The file now has only the accepted hunks; read it before changing it further.",
		plural(len(yes), "hunk", "hunks"), listing(yes), total, plural(len(no), "hunk", "hunks"), listing(no),
		plural(len(no), "was", "were"), strings.Join(headers, ", "))
	return s.modify(c, content)
}

// listing joins numbers as "1", "1 and 3", "1, 2 and 4".
func listing(ns []string) string {
	if len(ns) <= 1 {
		return strings.Join(ns, "")
	}
	return strings.Join(ns[:len(ns)-1], ", ") + " and " + ns[len(ns)-1]
}

// modify hands the person's edited content to the call, which then runs as modified.
// A call whose Capabilities have no Modify runs as proposed, as after proceed_once.
func (s *Scheduler) modify(c *call, content string) bool {
	if c.caps.Modify == nil {
		return true
	}
	var err error
	if !s.guard(c, "Modify", func() { err = c.caps.Modify(content) }) {
		return false
	}
	if err != nil {
		s.finishError(c, AsError(err, ErrInvalidParams))
		return false
	}
	// The modification may change what the call runs.
	return s.guard(c, "Capabilities", func() { c.caps = c.inv.Capabilities() }) && s.checkCommand(c) &&
		s.guard(c, "Describe", func() { c.title = c.inv.Describe() }) &&
		s.guard(c, "Locations", func() { c.locs = c.inv.Locations() })
}

// movedWithinBatch reports whether the batch holds the shared locks of paths, the files
// c writes now; if not, a person's modification moved c onto a file it did not propose
// to write, and c ends stale rather than write a file other sessions may be writing.
func (s *Scheduler) movedWithinBatch(c *call, b *batch, paths []string) bool {
	<-b.locked // already closed for a call that had files to write when it was built
	for _, p := range paths {
		if !b.held[p] {
			s.finishError(c, Errorf(ErrStaleContent,
				"The modified call writes %s, which it did not propose to write, so it was not run. Propose the change to that file anew.", p))
			return false
		}
	}
	return true
}

// execute runs an approved call, retrying retryable failures of idempotent tools.
func (s *Scheduler) execute(ctx context.Context, c *call, b *batch) {
	if err := ctx.Err(); err != nil {
		s.finishError(c, &Error{Type: ErrCancelled, Message: "The call was cancelled before it started.", Err: err})
		return
	}
	// Writers of one file in a batch are already ordered from their proposals on, and
	// the batch holds the shared locks of their files; the batch's own locks still keep
	// apart a call whose files a person's modification changed after it was ordered and
	// another call of the batch writing them.
	if c.info.Kind.Writes() {
		if paths := lockPaths(c.locs); len(paths) > 0 {
			if !s.movedWithinBatch(c, b, paths) {
				return
			}
			s.ownWaits.Add(1)
			unlock, err := s.own.LockPaths(ctx, paths...)
			s.ownWaits.Add(-1)
			if err == nil && ctx.Err() != nil {
				// The lock and the cancellation came together.
				unlock()
				err = ctx.Err()
			}
			if err != nil {
				s.finishError(c, &Error{Type: ErrCancelled, Err: err,
					Message: "The call was cancelled while waiting for another call writing the same file."})
				return
			}
			defer unlock()
		}
	}
	c.started, c.ctx = time.Now(), ctx
	s.emit(c, Event{Status: StatusExecuting})
	for attempt := 1; ; attempt++ {
		res, err, ok := s.executeOnce(ctx, c)
		if !ok {
			return
		}
		if ctx.Err() != nil {
			s.finishError(c, &Error{Type: ErrCancelled, Message: "The call was cancelled while it was running.", Err: ctx.Err()})
			return
		}
		if err == nil {
			s.finishSuccess(c, res)
			return
		}
		te := AsError(err, ErrExecutionFailed)
		if !te.Type.Retryable() || !c.info.Idempotent || attempt >= maxAttempts {
			s.finishError(c, te)
			return
		}
		delay := s.retryBase << (attempt - 1)
		s.logger.Info("retrying tool call", "tool", c.info.Name, "call", c.req.CallID,
			"attempt", attempt+1, "delay", delay, "err", te)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			s.finishError(c, &Error{Type: ErrCancelled, Message: "The call was cancelled while waiting to retry.", Err: ctx.Err()})
			return
		case <-t.C:
		}
	}
}

// executeOnce runs the call once; ok is false if it panicked, which ended c.
func (s *Scheduler) executeOnce(ctx context.Context, c *call) (res *Result, err error, ok bool) {
	sink := &outputSink{s: s, c: c}
	defer sink.close()
	ctx = withCallID(ctx, c.req.CallID)
	ok = s.guard(c, "Execute", func() { res, err = c.inv.Execute(ctx, sink) })
	return res, err, ok
}

// lockPaths returns the cleaned, distinct paths of locs in sorted order, the order in
// which their locks are taken so that two calls never wait on each other.
func lockPaths(locs []Location) []string {
	paths := make([]string, 0, len(locs))
	for _, l := range locs {
		if l.Path != "" {
			paths = append(paths, filepath.Clean(l.Path))
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

// emit sends ev, completed with the call's identity and description, to the observer.
func (s *Scheduler) emit(c *call, ev Event) {
	if s.observe == nil {
		return
	}
	ev.CallID, ev.Name = c.req.CallID, c.req.Name
	if c.scheduled {
		ev.Title, ev.Kind, ev.Locations, ev.Args = c.title, c.info.Kind, c.locs, c.req.Args
	}
	if r := panics.Try(func() { s.observe(ev) }); r != nil {
		s.logger.Error("observer panicked", "call", c.req.CallID, "panic", fmt.Sprint(r.Value), "stack", string(r.Stack))
	}
}

// finish ends c with r. A call ends once: later calls of its batch may already be
// proposing against what it left.
func (s *Scheduler) finish(c *call, r CallResult) {
	if c.result != nil {
		s.logger.Error("tool call ended twice; the second result is dropped", "tool", c.req.Name,
			"call", c.req.CallID, "first", c.result.Status, "second", r.Status)
		return
	}
	r.CallID, r.Name = c.req.CallID, c.req.Name
	var ran time.Duration
	if !c.started.IsZero() {
		ran = time.Since(c.started)
	}
	s.afterHooks(c, &r)
	r.Hooks, r.Stop = c.hookNotes, c.stop
	c.result = &r
	// A name no tool has is not counted: a model inventing names would grow the
	// metrics without bound.
	if len(s.metrics) > 0 && c.tool != nil {
		for _, m := range s.metrics {
			m.Record(c.req.Name, r.Status, ran)
		}
	}
	res := r
	s.emit(c, Event{Status: r.Status, Result: &res})
	close(c.done)
}

// finishError ends c with te; a cancelled type gives a cancelled result.
func (s *Scheduler) finishError(c *call, te *Error) {
	status := StatusError
	if te.Type == ErrCancelled {
		status = StatusCancelled
	}
	s.finish(c, CallResult{Status: status, Output: te.Message, Error: &ErrorInfo{Type: te.Type, Message: te.Message}})
}

func (s *Scheduler) finishSuccess(c *call, res *Result) {
	if res == nil {
		res = &Result{}
	}
	r := CallResult{Status: StatusSuccess, Summary: res.Summary, Output: res.Output, Display: res.Display,
		Diff: res.Diff, Parts: res.Parts, OutputFile: res.OutputFile, Problems: res.Problems}
	if c.note != "" {
		r.Output = strings.TrimRight(r.Output, "\n") + "\n" + c.note
	}
	if c.info.Source == SourceMCP {
		// An MCP server's answer is not agentls's or the user's word: the model gets it
		// marked as untrusted context; people see it as it is.
		if r.Display == "" {
			r.Display = r.Output
		}
		r.Output = MarkUntrusted(r.Output)
	}
	if n := utf8.RuneCountInString(r.Output); n > MaxOutputChars {
		r.Output, r.OutputFile = s.shorten(c, r.Output, n, r.OutputFile)
	}
	s.finish(c, r)
}

// shortenMarkerRoom is kept within MaxOutputChars for the line shorten puts between
// head and tail.
const shortenMarkerRoom = 400

// shorten returns the first fifth and the last four fifths of out, n characters long,
// with a line between saying how many characters and lines were cut and where the whole
// is, all within MaxOutputChars. A tool that shortens its own output (the shell) names
// the file with its complete output in toolFile; that file is named again, and out,
// already a shortened text, is not saved. Otherwise out is saved to a file of its own.
//
// Tools that shorten their output keep their results within MaxOutputChars, so that
// this second cut, which would hide their own note of what they left out, is rare.
func (s *Scheduler) shorten(c *call, out string, n int, toolFile string) (short, file string) {
	budget := MaxOutputChars - shortenMarkerRoom - len(s.outputDir) - len(toolFile)
	headLen := budget / 5
	tailLen := budget - headLen
	head := out[:runeOffset(out, headLen)]
	tail := out[runeOffset(out, n-tailLen):]
	cut := out[len(head) : len(out)-len(tail)]
	lines := strings.Count(cut, "\n")
	if !strings.HasSuffix(cut, "\n") {
		lines++ // the line the tail starts inside
	}
	var where string
	switch {
	case toolFile != "":
		file = toolFile
		where = "the tool's complete output is saved in " + file
	default:
		var err error
		file, err = s.saveOutput(c, out)
		if err != nil {
			s.logger.Warn("could not save the full output of a shortened tool result", "tool", c.req.Name, "call", c.req.CallID, "err", err)
			where = fmt.Sprintf("the full output could not be saved: %v", err)
		} else {
			where = "the full output is saved in " + file
		}
	}
	marker := fmt.Sprintf("\n[... %d of %d characters (in %d %s) cut here; %s ...]\n",
		n-headLen-tailLen, n, lines, plural(lines, "line", "lines"), where)
	return head + marker + tail, file
}

// plural returns one if n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// The tags MarkUntrusted puts around text.
const (
	untrustedOpen  = "<untrusted_context>"
	untrustedClose = "</untrusted_context>"
	untrustedName  = "untrusted_context"
)

// MarkUntrusted wraps text that a tool got from outside agentls and the user (a
// command's output, a web page, an MCP server's answer) in <untrusted_context> tags, as
// Gemini CLI does, so that the model takes instructions in it for data. A closing tag
// inside text, in any letter case, is escaped as "&lt;/", so that the text cannot end
// the marking early and pass off what follows as agentls's own words.
func MarkUntrusted(text string) string {
	var b strings.Builder
	b.Grow(len(untrustedOpen) + len(text) + len(untrustedClose) + 2)
	b.WriteString(untrustedOpen + "\n")
	done := 0
	for i := 0; i+2+len(untrustedName) <= len(text); i++ {
		if text[i] == '<' && text[i+1] == '/' && strings.EqualFold(text[i+2:i+2+len(untrustedName)], untrustedName) {
			b.WriteString(text[done:i])
			b.WriteString("&lt;/")
			done = i + 2
		}
	}
	b.WriteString(text[done:])
	b.WriteString("\n" + untrustedClose)
	return b.String()
}

// runeOffset returns the byte offset of the i-th rune of s.
func runeOffset(s string, i int) int {
	for off := range s {
		if i == 0 {
			return off
		}
		i--
	}
	return len(s)
}

func (s *Scheduler) saveOutput(c *call, out string) (string, error) {
	if err := os.MkdirAll(s.outputDir, 0o700); err != nil {
		return "", fmt.Errorf("create output directory: %w", err)
	}
	f, err := os.CreateTemp(s.outputDir, fileSafe(c.req.CallID)+"-*.txt")
	if err != nil {
		return "", fmt.Errorf("create output file: %w", err)
	}
	_, werr := f.WriteString(out)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// fileSafe turns a call id into a file name part: no separators, no dots in front,
// nothing a shell or a file system objects to, and bounded length.
func fileSafe(id string) string {
	b := []byte(id)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 100 {
		b = b[:100]
	}
	if len(b) == 0 {
		return "call"
	}
	return string(b)
}

func orList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// outputSink publishes a call's live output as events. It holds back an incomplete
// UTF-8 sequence at the end of a write until the rest arrives, so every chunk is valid
// text.
type outputSink struct {
	s *Scheduler
	c *call

	mu      sync.Mutex
	partial []byte
	closed  bool
}

var errSinkClosed = errors.New("tool output written after the call ended")

func (w *outputSink) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, errSinkClosed
	}
	buf := append(w.partial, p...)
	cut := len(buf)
	// Find the start of a trailing incomplete sequence, if any (at most 3 bytes back).
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	w.partial = append([]byte(nil), buf[cut:]...)
	if cut > 0 {
		w.s.emit(w.c, Event{Output: string(buf[:cut])})
	}
	return len(p), nil
}

func (w *outputSink) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.s.emit(w.c, Event{Output: string(w.partial)})
		w.partial = nil
	}
	w.closed = true
}

// fifo is a mutual exclusion lock handed to waiters in the order they came.
type fifo struct {
	mu      sync.Mutex
	busy    bool
	waiters []chan struct{}
}

// lock takes the lock, or returns ctx's error if ctx ends first.
func (f *fifo) lock(ctx context.Context) error {
	f.mu.Lock()
	if !f.busy {
		f.busy = true
		f.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	f.waiters = append(f.waiters, ch)
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		if i := slices.Index(f.waiters, ch); i >= 0 {
			f.waiters = slices.Delete(f.waiters, i, i+1)
			f.mu.Unlock()
			return ctx.Err()
		}
		f.mu.Unlock()
		// The lock was handed over meanwhile: pass it on.
		f.unlock()
		return ctx.Err()
	}
}

func (f *fifo) unlock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) > 0 {
		ch := f.waiters[0]
		f.waiters = f.waiters[1:]
		close(ch)
		return
	}
	f.busy = false
}

// waiting returns how many are waiting for the lock.
func (f *fifo) waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}
