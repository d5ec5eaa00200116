package session

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
)

// AgentToolName is the name of the sub-agent tool, Gemini CLI's.
const AgentToolName = "invoke_agent"

// Investigator is the name of the built-in sub-agent, Gemini CLI's.
const Investigator = "codebase_investigator"

// defaultAgentTurns caps a sub-agent's model turns when its settings do not.
const defaultAgentTurns = 30

// readOnlyTools are the tools a sub-agent gets when its settings name none: the
// built-in tools that look and change nothing.
var readOnlyTools = []string{"read_file", "read_many_files", "list_directory", "glob", "grep_search"}

// investigator is the built-in read-only codebase investigator.
var investigator = settings.AgentSettings{
	Description: "Reads and searches the code, changing nothing, and reports the files, symbols and " +
		"relations that answer the question, with paths and line numbers. For questions that need many files read.",
	SystemPrompt: "# Your role\n\nYou are the codebase investigator, a sub-agent. Another agent gave you the " +
		"task in the prompt. You can only read, list and search files: you change nothing. " +
		"Investigate until you can answer, then reply with a report of your findings: the " +
		"relevant files with paths and line numbers, what they do and how they relate, and " +
		"what you could not find. Your final message is the whole of what the other agent " +
		"receives, so make it complete.",
}

// agentArgs are the arguments of invoke_agent, Gemini CLI's.
type agentArgs struct {
	AgentName string `json:"agent_name"`
	Prompt    string `json:"prompt" jsonschema:"The whole task: the subagent knows nothing else. Give the context, the questions and the answer's form."`
}

// agentTool is invoke_agent: it runs a sub-agent, a child session of the calling
// session with its own history and a restricted tool set, and returns its final answer.
// It lives in the session core because a child session needs the model client and the
// parent's consent policy, which tools below do not have. The toolbox makes one per
// registry, with the agents of its settings.
type agentTool struct {
	h      *Host
	agents map[string]settings.AgentSettings
}

// ListedTools returns the tools of the session core for a toolbox that hosts no
// sessions (toolbox.Options.Extra of `agentls tools` and `agentls run`): invoke_agent
// is listed as a model sees it, and a call of it says that it runs only in a session.
func ListedTools(s settings.Settings) []tools.Tool {
	return []tools.Tool{newAgentTool(nil, s.Agents)}
}

// newAgentTool returns invoke_agent with the built-in investigator and the settings'
// agents (an entry named codebase_investigator replaces the built-in one).
func newAgentTool(h *Host, fromSettings map[string]settings.AgentSettings) *agentTool {
	agents := map[string]settings.AgentSettings{Investigator: investigator}
	maps.Copy(agents, fromSettings)
	return &agentTool{h: h, agents: agents}
}

func (t *agentTool) Info() tools.Info {
	var b strings.Builder
	b.WriteString("Runs a subagent on a task, in a session of its own with its own tools; its final answer is the result. Agents:\n")
	agents := t.agents
	for _, name := range slices.Sorted(maps.Keys(agents)) {
		fmt.Fprintf(&b, "- %s: %s\n", name, agents[name].Description)
	}
	return tools.Info{
		Name:        AgentToolName,
		DisplayName: "Invoke Subagent",
		Description: strings.TrimSuffix(b.String(), "\n"),
		// The call itself changes nothing: every call the sub-agent makes is decided by
		// the parent's policy on its own, so plan mode refuses a writing sub-agent's
		// writes while it may still investigate.
		Kind:       tools.KindThink,
		Source:     tools.SourceBuiltin,
		Parameters: tools.Parameters[agentArgs](false),
		Markdown:   true,
		Streams:    true,
	}
}

func (t *agentTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var a agentArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	agents := t.agents
	def, ok := agents[a.AgentName]
	if !ok {
		return nil, tools.Errorf(tools.ErrInvalidParams, "Subagent %q not found. The agents are: %s.",
			a.AgentName, strings.Join(slices.Sorted(maps.Keys(agents)), ", "))
	}
	if strings.TrimSpace(a.Prompt) == "" {
		return nil, tools.Errorf(tools.ErrInvalidParams, "The prompt for %s is empty: give it the complete task.", a.AgentName)
	}
	return &agentCall{t: t, name: a.AgentName, def: def, prompt: a.Prompt}, nil
}

// agentCall is one invoke_agent call.
type agentCall struct {
	tools.NoCapabilities
	t      *agentTool
	name   string
	def    settings.AgentSettings
	prompt string
}

func (c *agentCall) Describe() string                                       { return fmt.Sprintf("Delegating to agent '%s'", c.name) }
func (c *agentCall) Locations() []tools.Location                            { return nil }
func (c *agentCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

// parentKey carries the Live session whose batch runs a call, for invoke_agent.
type parentKey struct{}

// childUsage is implemented by a Runner whose calls may spend model tokens of their
// own (sub-agents); the agent loop adds them to the prompt's usage after each batch.
type childUsage interface {
	takeChildUsage() clients.Usage
}

func (c *agentCall) Execute(ctx context.Context, out io.Writer) (*tools.Result, error) {
	parent, _ := ctx.Value(parentKey{}).(*Live)
	if parent == nil {
		return nil, tools.Errorf(tools.ErrExecutionFailed,
			"%s runs only within a model session: a sub-agent needs the session's model.", AgentToolName)
	}
	names := c.def.Tools
	if len(names) == 0 {
		names = readOnlyTools
	}
	h := parent.h
	cfg := h.tb.Config()
	// A sub-agent starts no sub-agents of its own: the depth stays one.
	names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == AgentToolName })
	// The child's registry keeps the parent's filter: coreTools and excludeTools
	// restrict the commands of the child's calls as they do the parent's.
	reg, missing := parent.registryOver(cfg.Registry).Subset(names)
	if len(missing) > 0 {
		// A misspelt or excluded tool would leave the agent unable to do its task
		// without saying why.
		return nil, tools.Errorf(tools.ErrExecutionFailed,
			"The agent %s cannot start: its settings name tools that are not available here: %s. Fix agents.%s.tools in the settings, or do the task without it.",
			c.name, strings.Join(missing, ", "), c.name)
	}
	progress := &agentProgress{out: out, agent: c.name}
	// The child's calls reach the session's update stream as calls of their own under
	// this one, so that a front end announces each before a confirmation refers to it
	// and shows what it touches, as it does for the parent's calls.
	callID := tools.CallID(ctx)
	sched := tools.NewScheduler(tools.Options{
		Registry: reg,
		// The parent's policy in the parent's approval mode: a read-only child needs no
		// consent, a writing one asks through the same Asker as its parent.
		Policy: parent.policy(cfg.Policy),
		Asker:  parent.asker(),
		Observe: func(ev tools.Event) {
			progress.event(ev)
			parent.noteCall(ev)
			ev.Parent = callID
			parent.emit(Update{Kind: UpdateToolCall, Call: &ev})
		},
		Logger:  h.log,
		Locks:   h.tb.Workspace,
		Metrics: []*tools.Metrics{h.tb.Metrics, parent.metrics},
		// The user's tool hooks hold for a sub-agent's calls as for its parent's.
		Hooks: toolHooks{parent},
	})
	// The child's calls get ids of their own in the host's space, so that a front end
	// never mistakes one for a call of the parent or of another sub-agent.
	prefix := fmt.Sprintf("%s/%s-%d/", parent.id, c.name, parent.seq.Add(1))
	child, err := New(ctx, Options{
		Client:       parent.sess.client,
		Declarations: func() []tools.Declaration { return reg.DeclarationsIn(parent.situation()) },
		Runner:       prefixedRunner{sched: sched, prefix: prefix, tb: h.tb, state: toolbox.NewSessionState()},
		MaxTurns:     cmp.Or(c.def.MaxTurns, defaultAgentTurns),
		Env:          parent.sess.env,
		Instructions: c.def.SystemPrompt,
		Observe:      progress.update,
		Logger:       h.log.With("agent", c.name),
	})
	if err != nil {
		return nil, fmt.Errorf("starting the sub-agent %s: %w", c.name, err)
	}
	res, err := child.Prompt(ctx, c.prompt, nil)
	parent.addChildUsage(res.Usage)
	parent.noteAgent(agentRecord{Call: strings.TrimPrefix(callID, parent.id+"/"),
		Prefix: strings.TrimPrefix(prefix, parent.id+"/"), History: child.History()})
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, tools.Errorf(tools.ErrExecutionFailed, "The sub-agent %s failed: %v", c.name, err)
	case res.StopReason != StopEndTurn:
		msg := fmt.Sprintf("The sub-agent %s stopped before it finished (%s).", c.name, res.StopReason)
		if res.Text != "" {
			msg += " Its last answer:\n\n" + res.Text
		}
		return nil, tools.Errorf(tools.ErrExecutionFailed, "%s", msg)
	case strings.TrimSpace(res.Text) == "":
		return nil, tools.Errorf(tools.ErrExecutionFailed, "The sub-agent %s ended without an answer.", c.name)
	}
	return &tools.Result{
		Summary: fmt.Sprintf("%s answered (%d tool calls)", c.name, progress.calls()),
		Output:  fmt.Sprintf("Subagent '%s' finished.\nResult:\n%s", c.name, res.Text),
	}, nil
}

// prefixedRunner runs a sub-agent's calls with prefix before their ids, and gives the
// results back under the model's ids.
// A sub-agent has a history of its own, so it reads (and is held to what it read) and
// runs its commands in a persistent shell of its own, not its parent's.
type prefixedRunner struct {
	sched  *tools.Scheduler
	prefix string
	tb     *toolbox.Toolbox
	state  *toolbox.SessionState
}

func (r prefixedRunner) Run(ctx context.Context, reqs []tools.Request) []tools.CallResult {
	ctx = r.tb.Config().WithSession(ctx, r.state)
	wire := make([]tools.Request, len(reqs))
	for i, q := range reqs {
		wire[i] = tools.Request{CallID: r.prefix + q.CallID, Name: q.Name, Args: q.Args}
	}
	res := r.sched.Run(ctx, wire)
	for i := range res {
		if i < len(reqs) {
			res[i].CallID = reqs[i].CallID
		}
	}
	return res
}

// agentProgress writes what a sub-agent does to its call's live output: its message
// text as it streams, and a line for each tool call it starts and ends.
type agentProgress struct {
	out   io.Writer
	agent string

	mu sync.Mutex
	n  int
}

func (p *agentProgress) update(u Update) {
	if u.Kind == UpdateMessage && u.Text != "" {
		p.write(u.Text)
	}
}

func (p *agentProgress) event(ev tools.Event) {
	switch {
	case ev.Status == tools.StatusExecuting:
		p.mu.Lock()
		p.n++
		p.mu.Unlock()
		p.write(fmt.Sprintf("\n[%s] %s\n", p.agent, cmp.Or(ev.Title, ev.Name)))
	case ev.Status.Terminal() && ev.Status != tools.StatusSuccess:
		msg := ""
		if ev.Result != nil && ev.Result.Error != nil {
			msg = ": " + tools.Abbreviate(ev.Result.Error.Message, 200)
		}
		p.write(fmt.Sprintf("[%s] %s %s%s\n", p.agent, ev.Name, ev.Status, msg))
	}
}

func (p *agentProgress) write(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	io.WriteString(p.out, s) // a closed sink drops late output; nothing to do about it
}

func (p *agentProgress) calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// agentRecord is a sub-agent's conversation as the session keeps it: under the model's
// id of the invoke_agent call that ran it (Call), with the prefix of its calls' ids in
// the session's id space, so that Replay shows its calls as they were shown live.
type agentRecord struct {
	Call    string            `json:"call"`
	Prefix  string            `json:"prefix"`
	History []clients.Content `json:"history"`
}

// noteAgent notes a sub-agent's conversation, which Run records with the prompt.
func (l *Live) noteAgent(a agentRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.agents = append(l.agents, a)
}

// recordAgents keeps sub-agents' conversations in the session's file and for Replay.
func (s *Session) recordAgents(agents []agentRecord) {
	if len(agents) == 0 {
		return
	}
	s.mu.Lock()
	s.agents = append(s.agents, agents...)
	s.mu.Unlock()
	for i := range agents {
		s.persist(record{Type: recAgent, Turn: s.prompts, Agent: &agents[i]})
	}
}

// agentHistories returns the sub-agents' conversations by the call that ran them.
func (s *Session) agentHistories() map[string]agentRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]agentRecord, len(s.agents))
	for _, a := range s.agents {
		out[a.Call] = a
	}
	return out
}
