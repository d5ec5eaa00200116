package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/hooks"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/tools"
)

// Runner schedules one batch of tool calls and returns their results in request order.
// *tools.Scheduler satisfies it; the front end builds the scheduler so that tool events
// reach its UI tagged with the session.
type Runner interface {
	Run(ctx context.Context, reqs []tools.Request) []tools.CallResult
}

// maxUnsaved is how many records a session keeps for writing again after its store
// failed, before it gives up saving.
const maxUnsaved = 256

// defaultMaxTurns caps the model turns of one prompt when Options.MaxTurns is zero.
const defaultMaxTurns = 100

// Options configure a Session.
type Options struct {
	Client clients.Client
	// Declarations returns the tools the model may call; read before every model turn
	// (the registry can change between turns: MCP list_changed, discovery). Nil offers
	// no tools.
	Declarations func() []tools.Declaration
	// Runner runs the model's tool calls; required when Declarations is set.
	Runner Runner
	// Store persists the session; nil keeps it in memory only.
	Store *Store
	// ID, when set, resumes the stored session with this id (Store required); an
	// unknown id is an error naming it.
	ID string
	// MaxTurns caps model turns per prompt (0 means 100); reaching it ends the prompt
	// with StopMaxTurns.
	MaxTurns int
	// Env is what the system instruction says about the environment.
	Env Environment
	// Instructions are added to the system instruction: a sub-agent's own.
	Instructions string
	// Observe receives the session's updates; may be nil. Called on the prompt's
	// goroutine, in order.
	Observe func(Update)
	// Hooks returns the user's hooks in force (see hooks.go); nil runs none.
	Hooks  func() *hooks.Runner
	Logger *slog.Logger
}

// Environment is the part of the system instruction that describes where the agent works.
type Environment struct {
	Roots     []string
	ConfigDir string // the user's config dir: AGENTS.md and GEMINI.md there are memory
	// ContextFiles are further memory files, read after the config dir's: the context
	// files of the user's extensions (settings.Settings.ContextFiles).
	ContextFiles []string
	Now          func() time.Time // nil means time.Now
}

// EditorContext is what the editor says about where the user is when prompting.
type EditorContext struct {
	Path      string // absolute path of the current file
	StartLine int    // 1-based range of the selection; 0 when none
	EndLine   int
	Selection string // the selected text, if any
	// Diagnostic is the text of a diagnostic the user asked about ("Ask agentls to fix this").
	Diagnostic string
}

// Result is how a prompt ended.
type Result struct {
	StopReason StopReason
	Text       string        // the model's final answer text of this prompt
	Usage      clients.Usage // summed over the prompt's model calls
}

// StopReason says why a prompt ended. The values are the Agent Client Protocol's.
type StopReason string

// The stop reasons.
const (
	StopEndTurn   StopReason = "end_turn"
	StopCancelled StopReason = "cancelled"
	StopMaxTurns  StopReason = "max_turn_requests"
	StopMaxTokens StopReason = "max_tokens" // the model's answer hit its output limit
	StopRefusal   StopReason = "refusal"    // the model refused (safety), or loop detected
	StopError     StopReason = "error"
)

// UpdateKind says what an Update reports.
type UpdateKind string

// The kinds of update.
const (
	UpdateMessage     UpdateKind = "message_chunk"
	UpdateThought     UpdateKind = "thought_chunk"
	UpdateCompression UpdateKind = "compression"
	UpdateTurnEnd     UpdateKind = "turn_end"
	// UpdateToolCall reports a state change or an output chunk of a tool call (Call):
	// its status, live output, and once it ends its result with the diff and the
	// locations.
	UpdateToolCall UpdateKind = "tool_call"
	// UpdatePlan reports the session's new plan (Plan), as write_todos wrote it.
	UpdatePlan UpdateKind = "plan"
	// UpdateMCPStatus reports an MCP server's new status (MCP); it belongs to the
	// workspace, not to a session.
	UpdateMCPStatus UpdateKind = "mcp_status"
	// UpdateMode reports the session's new approval mode (Mode), switched by one of its
	// calls (enter_plan_mode, exit_plan_mode) once the person agreed.
	UpdateMode UpdateKind = "current_mode"
	// UpdateClosed ends the stream of a session the host let go (or closed): a later
	// prompt naming it resumes it from the store, with a new stream.
	UpdateClosed UpdateKind = "closed"
	// UpdateInfo reports the session's title (Title), once its first prompt gives it
	// one (the prompt's first line, as Store.Page and List show it).
	UpdateInfo UpdateKind = "session_info"
	// UpdateUsage reports what a model request used (Usage), after each request that
	// says: its prompt tokens are the context the conversation fills.
	UpdateUsage UpdateKind = "usage"
)

// Update is one thing front ends show of a session: what the model says while a
// prompt runs, its tool calls, its plan, and how the prompt ended. A Host merges them
// into one stream for all its sessions (HostOptions.Observe); a Session on its own
// reports those of the agent loop (Options.Observe).
type Update struct {
	Kind UpdateKind
	// Session is the id of the session the update is about; empty for the workspace's
	// (MCP status, the plan of calls that belong to no session).
	Session    string
	Text       string         // message_chunk, thought_chunk; for compression a one-line note
	StopReason StopReason     // turn_end
	Usage      *clients.Usage // turn_end, usage
	// MessageID identifies the message a message_chunk, thought_chunk or
	// user_message_chunk belongs to: the chunks of one model response share one (its
	// text and its thoughts have their own), and a new one starts a new message.
	MessageID string
	// Title is the session's title (session_info).
	Title string
	// Window is the model's context window in tokens (usage), which Usage.PromptTokens
	// fills.
	Window      int
	Compression *Compression       // compression
	Call        *tools.Event       // tool_call
	Plan        []PlanEntry        // plan
	MCP         *toolbox.MCPStatus // mcp_status
	Mode        confirm.Mode       // current_mode
}

// PlanEntry is one entry of a session's plan.
type PlanEntry struct {
	Content string `json:"content"`
	// Status is pending, in_progress, completed or cancelled.
	Status string `json:"status"`
}

// Compression reports a history compression: the estimated prompt tokens of the request
// before it (those the model reported for the last request, and an estimate of what was
// added since; at least the context window when the model refused the request as too
// large) and the estimated (or counted) tokens of the compressed history.
type Compression struct{ TokensBefore, TokensAfter int }

// Session is one conversation with a model: its history, and the loop that runs a
// prompt through model turns and tool calls. Its methods are safe for concurrent use,
// but only one prompt may run at a time (see Prompt).
type Session struct {
	id       string
	client   clients.Client
	decls    func() []tools.Declaration
	runner   Runner
	store    *Store
	maxTurns int
	env      Environment
	extra    string // Options.Instructions
	observe  func(Update)
	hooks    func() *hooks.Runner
	logger   *slog.Logger

	// Owned by the running prompt.
	// resumed says that the session was resumed from the store.
	resumed    bool
	created    time.Time
	prompts    int      // the prompts run so far, this one included: a prompt's number
	persisted  bool     // the session's file has its header
	unsaved    []record // records a failed write left for the next one
	lastPrompt int      // prompt tokens of the last model request
	// added is the size (in bytes, as size counts) of what the history gained since
	// lastPrompt was counted: tool outputs that may push the next request past the
	// window before any model reports it.
	added int

	mu sync.Mutex
	// record is every content of the conversation; hist is the comprehensive history
	// the model's curated history is made from, which compression shortens.
	record, hist []clients.Content
	// agents are the conversations of the session's sub-agents, which Replay shows.
	agents []agentRecord
	// started is set once the session's first prompt began (its SessionStart hooks
	// ran): its SessionEnd hooks run when it ends.
	started atomic.Bool
	// histGen counts the changes of hist other than appends; curated is the curated
	// form of its start, for the next request.
	histGen uint64
	curated curation
}

// New starts a session, or resumes the stored one o.ID names.
func New(ctx context.Context, o Options) (*Session, error) {
	if o.Client == nil {
		return nil, errors.New("session: no model client")
	}
	if o.Declarations != nil && o.Runner == nil {
		return nil, errors.New("session: tools are declared but there is no runner for their calls")
	}
	s := &Session{
		client:   o.Client,
		decls:    o.Declarations,
		runner:   o.Runner,
		store:    o.Store,
		maxTurns: o.MaxTurns,
		env:      o.Env,
		extra:    o.Instructions,
		observe:  o.Observe,
		hooks:    o.Hooks,
		logger:   o.Logger,
	}
	if s.maxTurns <= 0 {
		s.maxTurns = defaultMaxTurns
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if o.ID == "" {
		s.created = s.now()
		s.id = newID(s.created)
		s.logger = s.logger.With("session", s.id)
		return s, nil
	}
	if o.Store == nil {
		return nil, fmt.Errorf("session: resuming session %q needs a store", o.ID)
	}
	st, err := o.Store.load(o.ID, s.logger)
	if err != nil {
		return nil, err
	}
	// Held while live, so that a delete elsewhere is refused (the host lets go).
	if err := o.Store.hold(o.ID); err != nil {
		return nil, err
	}
	s.id, s.created, s.persisted, s.resumed = o.ID, st.header.Created, true, true
	s.prompts = st.prompts
	s.logger = s.logger.With("session", s.id)
	s.record, s.hist, s.agents = st.record, st.history, st.agents
	if st.broken {
		// The last record was cut short by a crash: the next one starts on a new line.
		if err := o.Store.appendNewline(s.id); err != nil {
			return nil, err
		}
	}
	if c, ok := unanswered(s.hist); ok {
		s.add(c)
	}
	for _, c := range s.hist {
		s.lastPrompt += size(c)
	}
	s.lastPrompt /= 4 // a rough estimate until the model reports the real count
	s.added = 0
	if st.header.Model != "" && st.header.Model != s.client.Model() {
		s.logger.Info("resuming a session with another model", "was", st.header.Model, "now", s.client.Model())
	}
	return s, nil
}

// ID returns the session's id, under which it is stored.
func (s *Session) ID() string { return s.id }

// History returns the full record of the conversation: every user and model content in
// the order they happened, including the parts compression replaced by a summary.
func (s *Session) History() []clients.Content {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]clients.Content, len(s.record))
	for i, c := range s.record {
		out[i] = clients.Content{Role: c.Role, Parts: slices.Clone(c.Parts)}
	}
	return out
}

// promptState is what one prompt carries from turn to turn.
type promptState struct {
	system     string
	tools      []clients.Declaration
	usage      clients.Usage
	loops      loopDetector
	noCompress bool
}

// Prompt runs one user prompt to the end. One prompt at a time per session: its caller
// sees to that (a Host's session refuses a second with ErrBusy, see Live.Prompt), and
// the turn_end update is the last thing Prompt does with the session. Cancelling ctx stops the model stream and the running
// tools, records what completed, and returns StopCancelled with a nil error. A model
// failure (after the client's retries) returns StopError and the error. extra are parts
// sent with the text, such as images the user attached.
func (s *Session) Prompt(ctx context.Context, text string, ec *EditorContext, extra ...clients.Part) (Result, error) {
	if strings.TrimSpace(text) == "" {
		return Result{StopReason: StopError}, errors.New("session: the prompt is empty")
	}
	res, err := s.run(ctx, text, ec, extra)
	s.persist(record{Type: recEnd, StopReason: res.StopReason, Usage: &res.Usage})
	usage := res.Usage
	// Told last: a Host's session is free once its turn_end is told (Live.emit), and
	// whoever hears it may send the next prompt at once.
	s.emit(Update{Kind: UpdateTurnEnd, StopReason: res.StopReason, Usage: &usage})
	return res, err
}

func (s *Session) run(ctx context.Context, text string, ec *EditorContext, extra []clients.Part) (Result, error) {
	parts := []clients.Part{{Text: text}}
	if !s.started.Swap(true) {
		source := "startup"
		if s.resumed {
			source = "resume"
		}
		if start := s.fire(ctx, hooks.SessionStart, source, map[string]any{"source": source}); start.Context != "" {
			parts = append([]clients.Part{{Text: hookContext(start.Context)}}, parts...)
		}
	}
	before := s.fire(ctx, hooks.BeforeAgent, "", map[string]any{"prompt": text})
	if before.Deny {
		// The prompt is dropped: it reaches neither the history nor the model.
		s.tellHooks([]string{"a BeforeAgent hook blocked the prompt: " + before.Reason})
		return Result{StopReason: StopRefusal}, nil
	}
	if before.Context != "" {
		parts = append(parts, clients.Part{Text: hookContext(before.Context)})
	}
	s.prompts++
	s.persist(record{Type: recPrompt, Text: text, Time: s.now()})
	if s.prompts == 1 {
		if t := title(text); t != "" {
			s.emit(Update{Kind: UpdateInfo, Title: t})
		}
	}
	s.add(clients.Content{Role: clients.RoleUser, Parts: append(parts, extra...)})
	if before.Stop {
		s.tellHooks([]string{"a BeforeAgent hook ended the turn: " + before.StopReason})
		return Result{StopReason: StopEndTurn}, nil
	}
	p := &promptState{system: systemInstruction(s.env, ec, s.logger)}
	if s.extra != "" {
		p.system += "\n\n" + s.extra
	}
	res := Result{}
	retried := false // an AfterAgent hook sent the model back to work
	for turn := 0; ; turn++ {
		if ctx.Err() != nil {
			res.StopReason = StopCancelled
			return res, nil
		}
		if turn == s.maxTurns {
			s.logger.Info("prompt stopped at the turn limit", "turns", s.maxTurns)
			res.StopReason = StopMaxTurns
			return res, nil
		}
		p.tools = s.tools()
		s.maybeCompress(ctx, p)
		res.Usage = p.usage

		s.mu.Lock()
		req := clients.Request{System: p.system, History: s.curated.of(s.hist, s.histGen), Tools: p.tools}
		s.mu.Unlock()
		out, stop := s.modelTurn(ctx, req, p)
		if stop != nil {
			res.StopReason = stop.reason
			return res, nil
		}
		if out.usage != nil {
			p.usage = addUsage(p.usage, *out.usage)
			s.lastPrompt, s.added = out.usage.PromptTokens, 0
			u := *out.usage
			s.emit(Update{Kind: UpdateUsage, Usage: &u, Window: s.client.ContextWindow()})
		}
		res.Usage = p.usage
		model := out.content
		if len(model.Parts) > 0 {
			s.add(model)
		}
		res.Text = answer(model)

		switch {
		case out.err != nil && ctx.Err() != nil:
			s.answerNotRun(model, tools.ErrCancelled, "the user cancelled the request before the call ran.")
			res.StopReason = StopCancelled
			return res, nil
		case out.err != nil:
			s.answerNotRun(model, tools.ErrExecutionFailed, "the model's response broke off before the call could run.")
			res.StopReason = StopError
			return res, fmt.Errorf("model %s: %w", s.client.Model(), out.err)
		case out.loop:
			s.answerNotRun(model, tools.ErrCancelled, "the response was stopped because it repeated itself.")
			s.emit(Update{Kind: UpdateMessage, Text: "\n\n[agentls stopped the response: the model kept repeating the same text. Rephrase the request or give it more direction.]\n"})
			s.logger.Warn("loop detected: repeated text")
			res.StopReason = StopRefusal
			return res, nil
		}

		fcs := calls(model)
		if len(fcs) == 0 {
			res, err := s.finish(res, out.finish)
			if res.StopReason == StopRefusal && turn == 0 && res.Text == "" {
				s.forgetRefused(len(model.Parts) > 0)
			}
			if err == nil && res.StopReason == StopEndTurn && s.afterAgent(ctx, text, res.Text, retried) {
				retried = true
				continue
			}
			return res, err
		}
		if i := slices.IndexFunc(fcs, p.loops.call); i >= 0 {
			s.answerNotRun(model, tools.ErrCancelled, "the call was not run: the same call was repeated too many times in a row.")
			s.emit(Update{Kind: UpdateMessage, Text: fmt.Sprintf(
				"\n\n[agentls stopped the turn: the model called %s with the same arguments %d times in a row. Rephrase the request or give it more direction.]\n",
				fcs[i].Name, callLoop)})
			s.logger.Warn("loop detected: repeated tool call", "tool", fcs[i].Name)
			res.StopReason = StopRefusal
			return res, nil
		}

		results := s.runner.Run(ctx, requests(fcs))
		if c, ok := s.runner.(childUsage); ok {
			// What sub-agents spent answering the calls is this prompt's too.
			p.usage = addUsage(p.usage, c.takeChildUsage())
			res.Usage = p.usage
		}
		resp := clients.Content{Role: clients.RoleUser}
		var fatal *tools.ErrorInfo
		var stops []string
		for i, fc := range fcs {
			if i >= len(results) {
				resp.Parts = append(resp.Parts, notRun(fc, tools.ErrUnhandledException, "the call got no result."))
				continue
			}
			resp.Parts = append(resp.Parts, responseTo(fc, results[i]))
			if e := results[i].Error; e != nil && e.Type.Fatal() && fatal == nil {
				fatal = e
			}
			if results[i].Stop != "" {
				stops = append(stops, results[i].Stop)
			}
		}
		s.add(resp)
		if ctx.Err() != nil {
			res.StopReason = StopCancelled
			return res, nil
		}
		if len(stops) > 0 {
			s.tellHooks([]string{"a tool hook ended the turn: " + strings.Join(stops, "; ")})
			res.StopReason = StopEndTurn
			return res, nil
		}
		if fatal != nil {
			res.StopReason = StopError
			return res, fmt.Errorf("tool call failed: %s: %s", fatal.Type, fatal.Message)
		}
	}
}

// Finish reasons (compared without case) after which the model's silence is a refusal
// (with those starting with clients.FinishBlocked), and those that report a broken
// function call.
var (
	refusals  = []string{"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "CONTENT_FILTER"}
	malformed = []string{"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"}
)

// finish ends a prompt whose last model turn called no tools.
func (s *Session) finish(res Result, reason string) (Result, error) {
	reason = strings.ToUpper(reason)
	switch {
	case slices.Contains(refusals, reason) || strings.HasPrefix(reason, clients.FinishBlocked):
		s.logger.Info("the model refused", "finishReason", reason)
		res.StopReason = StopRefusal
		return res, nil
	case slices.Contains(malformed, reason):
		res.StopReason = StopError
		return res, fmt.Errorf("model %s produced a malformed function call (finish reason %s)", s.client.Model(), reason)
	}
	if res.Text == "" {
		s.logger.Warn("the model ended its turn without an answer", "finishReason", reason)
	}
	res.StopReason = StopEndTurn
	if reason == clients.FinishMaxTokens {
		res.StopReason = StopMaxTokens
	}
	return res, nil
}

// forgetRefused leaves the prompt the model just refused without answering (and the
// model's empty turn, when it has one) out of the history the model is sent, so that it
// does not merge into the next prompts and get them refused too. The record and the
// session's file keep it.
func (s *Session) forgetRefused(withModel bool) {
	n := 1
	if withModel {
		n = 2
	}
	s.mu.Lock()
	n = min(n, len(s.hist))
	dropped := 0
	for _, c := range s.hist[len(s.hist)-n:] {
		dropped += size(c)
	}
	s.hist = s.hist[:len(s.hist)-n]
	s.histGen++
	s.mu.Unlock()
	// The model's count, when it gave one, includes the prompt.
	if dropped <= s.added {
		s.added -= dropped
	} else {
		s.lastPrompt = max(0, s.lastPrompt-(dropped-s.added)/4)
		s.added = 0
	}
	s.persist(record{Type: recRefused, Dropped: n})
	s.emit(Update{Kind: UpdateMessage, Text: "\n\n[The model refused this prompt without answering. " +
		"It stays in the session's record but is not kept in the conversation's context, so that later prompts are not refused for it.]\n"})
}

// streamed is one model response.
type streamed struct {
	content clients.Content
	usage   *clients.Usage
	finish  string
	err     error
	// loop reports that the response was stopped for repeating itself.
	loop bool
}

// stream runs one model request, passing its text and thoughts on as updates, unless
// hold says to keep them until the AfterModel hooks have seen the response.
func (s *Session) stream(ctx context.Context, req clients.Request, loops *loopDetector, hold bool) streamed {
	loops.response()
	var out streamed
	var parts []clients.Part
	// The response's text is one message, its thoughts another.
	text, thought := newMessageID(), newMessageID()
	for chunk, err := range s.client.Stream(ctx, req) {
		if err != nil {
			out.err = err
			break
		}
		for _, p := range chunk.Parts {
			if emptyPart(p) {
				continue
			}
			parts = append(parts, p)
			switch {
			case p.Thought:
				if p.Text != "" && !hold {
					s.emit(Update{Kind: UpdateThought, Text: p.Text, MessageID: thought})
				}
			case p.Text != "":
				if !hold {
					s.emit(Update{Kind: UpdateMessage, Text: p.Text, MessageID: text})
				}
				out.loop = out.loop || loops.text(p.Text)
			}
		}
		if chunk.Usage != nil {
			u := *chunk.Usage
			out.usage = &u
		}
		if chunk.FinishReason != "" {
			out.finish = chunk.FinishReason
		}
		if out.loop {
			break
		}
	}
	if out.err == nil && !out.loop && ctx.Err() != nil {
		out.err = ctx.Err()
	}
	out.content = clients.Content{Role: clients.RoleModel, Parts: mergeText(parts)}
	return out
}

// answer returns the answer text of a model content.
func answer(c clients.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// answerNotRun records responses for the calls of model that will not run, so that
// every call in the history has its response.
func (s *Session) answerNotRun(model clients.Content, t tools.ErrorType, why string) {
	if c, ok := responsesNotRun(model, t, why); ok {
		s.add(c)
	}
}

// tools returns the declarations of the tools offered this turn.
func (s *Session) tools() []clients.Declaration {
	if s.decls == nil {
		return nil
	}
	return declarations(s.decls())
}

// add appends c to the record and the history, and persists it.
func (s *Session) add(c clients.Content) {
	s.mu.Lock()
	s.record = append(s.record, c)
	s.hist = append(s.hist, c)
	s.mu.Unlock()
	s.added += size(c)
	s.persist(record{Type: recContent, Content: &c})
}

// persist appends recs to the session's file, writing its header first when the file is
// new. A failure is logged and the conversation goes on in memory; the records are
// written with the next ones, so that the file has no holes (a lost function response
// would leave a history the model rejects).
func (s *Session) persist(recs ...record) {
	if s.store == nil {
		return
	}
	if !s.persisted && len(s.unsaved) == 0 {
		h := record{Type: recSession, ID: s.id, Created: s.created, Model: s.client.Model(), Roots: s.env.Roots}
		s.unsaved = append(s.unsaved, h)
	}
	s.unsaved = append(s.unsaved, recs...)
	if err := s.store.append(s.id, s.unsaved...); err != nil {
		if len(s.unsaved) > maxUnsaved {
			// The store is not coming back: stop, leaving a file that resumes to the
			// conversation as it was until then.
			s.logger.Error("session no longer saved", "err", err)
			s.store, s.unsaved = nil, nil
			return
		}
		s.logger.Error("session not saved; retrying with the next record", "err", err, "unsaved", len(s.unsaved))
		return
	}
	s.unsaved = nil
	if !s.persisted {
		if err := s.store.hold(s.id); err != nil {
			s.logger.Warn("session file not held: another process could delete it", "err", err)
		}
	}
	s.persisted = true
}

func (s *Session) emit(u Update) {
	if s.observe != nil {
		s.observe(u)
	}
}

func (s *Session) now() time.Time {
	if s.env.Now != nil {
		return s.env.Now()
	}
	return time.Now()
}

func addUsage(a, b clients.Usage) clients.Usage {
	return clients.Usage{
		PromptTokens:  a.PromptTokens + b.PromptTokens,
		OutputTokens:  a.OutputTokens + b.OutputTokens,
		ThoughtTokens: a.ThoughtTokens + b.ThoughtTokens,
		TotalTokens:   a.TotalTokens + b.TotalTokens,
	}
}
