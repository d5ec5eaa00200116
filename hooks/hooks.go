// Package hooks runs the user's hooks: commands that Gemini CLI's "hooks" settings
// attach to moments of the agent loop (a session starting, a prompt, a model request,
// a tool call …). A hook gets a JSON object on standard input, answers with one on
// standard output, and decides with its fields or its exit status, as Gemini CLI's
// hooks reference says, so that the same settings work in both programs.
//
// A hook is a shell command run as run_shell_command's are: in the workspace root,
// with its environment (agentls's own without the keys it hides), contained by the
// same sandbox. A hook that fails, runs past its timeout or answers something that is
// not JSON decides nothing: the moment goes on as if it had not run, with a message
// saying what happened (Outcome.Notes).
//
// The package knows nothing of the agent loop: package session says when each event
// fires and applies what the hooks decided.
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/settings"
)

// Event is the name of a moment hooks run at.
type Event string

// The events, as Gemini CLI names them.
const (
	SessionStart        Event = "SessionStart"
	SessionEnd          Event = "SessionEnd"
	BeforeAgent         Event = "BeforeAgent"
	AfterAgent          Event = "AfterAgent"
	BeforeModel         Event = "BeforeModel"
	AfterModel          Event = "AfterModel"
	BeforeToolSelection Event = "BeforeToolSelection"
	BeforeTool          Event = "BeforeTool"
	AfterTool           Event = "AfterTool"
	PreCompress         Event = "PreCompress"
	Notification        Event = "Notification"
)

// DefaultTimeout is how long a hook may run when its settings name no timeout.
const DefaultTimeout = 60 * time.Second

// ExitBlock is the exit status with which a hook blocks what it was asked about, its
// standard error giving the reason.
const ExitBlock = 2

// maxOutput caps what is kept of a hook's standard output and standard error.
const maxOutput = 1 << 20

// Options configure a Runner.
type Options struct {
	// Settings are the merged settings: their hooks and hooksConfig.
	Settings settings.Settings
	// Sandbox contains the hooks' commands, as it contains run_shell_command's; nil
	// runs them uncontained.
	Sandbox *sandbox.Sandbox
	// Environ returns the environment hooks start from: run_shell_command's.
	Environ func() []string
	// Dir is the project directory: the workspace's first root, where hooks run.
	Dir string
	// Shell runs a hook's command as SHELL -c COMMAND; empty means bash.
	Shell  string
	Logger *slog.Logger
}

// Runner runs the hooks of one configuration. A nil Runner has no hooks. It is safe
// for concurrent use.
type Runner struct {
	groups  map[Event][]group
	environ func() []string
	dir     string
	shell   string
	logger  *slog.Logger
}

// group is a settings HookGroup ready to run.
type group struct {
	matcher    string
	re         *regexp.Regexp // for the tool events
	sequential bool
	hooks      []hook
}

// hook is one command.
type hook struct {
	name    string // the name, else the command, for messages
	command string
	timeout time.Duration
	// box contains the command: the runner's, reading the folder of the extension
	// that brought the hook.
	box *sandbox.Sandbox
	// env are the settings of the extension that brought the hook (KEY=VALUE).
	env []string
}

// New returns the runner of o's hooks, or nil when they have none (or hooks are
// turned off). A group whose matcher is not a valid regular expression, or a hook of
// an unknown type or without a command, is left out with an error saying so; the
// others run.
func New(o Options) (*Runner, error) {
	s := o.Settings
	if !s.HooksOn() || len(s.Hooks.Events) == 0 {
		return nil, nil
	}
	r := &Runner{groups: map[Event][]group{}, environ: o.Environ, dir: o.Dir, shell: o.Shell, logger: o.Logger}
	if r.shell == "" {
		r.shell = "bash"
	}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	disabled := s.HooksDisabled()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.Hooks.Events)) {
		e := Event(name)
		for i, g := range s.Hooks.Events[name] {
			where := fmt.Sprintf("hooks.%s[%d]", name, i)
			if g.Source != "" {
				where = g.Source + ": " + where
			}
			out := group{matcher: g.Matcher, sequential: g.Sequential}
			box := o.Sandbox
			if box != nil && g.Dir != "" {
				box = box.Reading(g.Dir)
			}
			var env []string
			for _, k := range slices.Sorted(maps.Keys(g.Env)) {
				env = append(env, k+"="+g.Env[k])
			}
			if toolEvent(e) && !matchesAll(g.Matcher) {
				re, err := regexp.Compile("^(?:" + g.Matcher + ")$")
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: matcher %q is not a regular expression: %w", where, g.Matcher, err))
					continue
				}
				out.re = re
			}
			for j, h := range g.Hooks {
				if h.Type != "command" && h.Type != "" {
					errs = append(errs, fmt.Errorf("%s.hooks[%d]: type %q: only \"command\" hooks exist", where, j, h.Type))
					continue
				}
				if strings.TrimSpace(h.Command) == "" {
					errs = append(errs, fmt.Errorf("%s.hooks[%d]: no command", where, j))
					continue
				}
				if slices.Contains(disabled, h.Command) || (h.Name != "" && slices.Contains(disabled, h.Name)) {
					continue
				}
				timeout := DefaultTimeout
				if h.Timeout > 0 {
					timeout = time.Duration(h.Timeout) * time.Millisecond
				}
				out.hooks = append(out.hooks, hook{name: cmpOr(h.Name, h.Command), command: h.Command, timeout: timeout, box: box, env: env})
			}
			if len(out.hooks) > 0 {
				r.groups[e] = append(r.groups[e], out)
			}
		}
	}
	if len(r.groups) == 0 {
		return nil, errors.Join(errs...)
	}
	return r, errors.Join(errs...)
}

// cmpOr returns the first of ss that is not empty.
func cmpOr(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// toolEvent reports the events whose matcher is a regular expression of tool names.
func toolEvent(e Event) bool { return e == BeforeTool || e == AfterTool }

func matchesAll(m string) bool { return m == "" || m == "*" }

// Has reports whether any hook is set for e.
func (r *Runner) Has(e Event) bool { return r != nil && len(r.groups[e]) > 0 }

// matching returns the groups of e whose matcher matches target: a tool's name for the
// tool events, else the event's trigger (a session's source, a compression's trigger,
// a notification's type).
func (r *Runner) matching(e Event, target string) []group {
	var out []group
	for _, g := range r.groups[e] {
		switch {
		case matchesAll(g.matcher):
		case g.re != nil:
			if !g.re.MatchString(target) {
				continue
			}
		case g.matcher != target:
			continue
		}
		out = append(out, g)
	}
	return out
}

// Call is what a hook is told besides its event's own fields.
type Call struct {
	// SessionID is the session's id; TranscriptPath the file it is stored in, if any.
	SessionID      string
	TranscriptPath string
	// Target is what matchers are compared with (see Runner.Run).
	Target string
	// Fields are the event's own fields of the input (tool_name, tool_input, prompt …).
	Fields map[string]any
}

// Output is a hook's answer, in Gemini CLI's fields.
type Output struct {
	Continue       *bool  `json:"continue,omitempty"`
	StopReason     string `json:"stopReason,omitempty"`
	SystemMessage  string `json:"systemMessage,omitempty"`
	SuppressOutput bool   `json:"suppressOutput,omitempty"`
	Decision       string `json:"decision,omitempty"`
	Reason         string `json:"reason,omitempty"`
	// Specific is hookSpecificOutput, whose fields depend on the event.
	Specific map[string]json.RawMessage `json:"hookSpecificOutput,omitempty"`
}

// denies reports a decision that blocks.
func (o *Output) denies() bool {
	d := strings.ToLower(o.Decision)
	return d == "deny" || d == "block"
}

// Result is what one hook did.
type Result struct {
	// Hook is the hook's name, or its command when it has none.
	Hook string
	// Output is its answer; nil when it failed, or printed nothing.
	Output *Output
	// Blocked reports exit status 2: Reason is its standard error.
	Blocked bool
	Reason  string
	// Err says why the hook decided nothing: it failed, timed out or answered
	// something that is not JSON.
	Err      error
	Duration time.Duration
}

// Outcome is what the hooks of one event decided together.
type Outcome struct {
	Results []Result
	// Deny reports that a hook blocked (decision "deny" or "block", or exit status 2);
	// Reason is what they said, joined.
	Deny   bool
	Reason string
	// Stop reports that a hook asked to stop the agent (continue: false), for
	// StopReason.
	Stop       bool
	StopReason string
	// Context is the hooks' additionalContext, joined.
	Context string
	// ToolInput is what the hooks' hookSpecificOutput.tool_input set, merged: the
	// arguments a BeforeTool hook rewrote.
	ToolInput map[string]json.RawMessage
	// Specific are the hookSpecificOutput of the hooks that answered, in order, for
	// an event's other fields.
	Specific []map[string]json.RawMessage
	// Notes are what the person is told, one line each: what each hook decided, its
	// system message, or why it decided nothing.
	Notes []string
}

// Failed reports whether a hook of the outcome failed (see Result.Err).
func (o Outcome) Failed() bool {
	return slices.ContainsFunc(o.Results, func(r Result) bool { return r.Err != nil })
}

// Run runs the hooks of e whose matcher matches c.Target and returns what they
// decided. The groups' hooks run at the same time, except those of a sequential group,
// which run one after another, each seeing the tool_input the previous one rewrote.
// Cancelling ctx stops them. A nil Runner, or an event without matching hooks, runs
// nothing and returns an empty Outcome.
func (r *Runner) Run(ctx context.Context, e Event, c Call) Outcome {
	var out Outcome
	if r == nil {
		return out
	}
	groups := r.matching(e, c.Target)
	if len(groups) == 0 {
		return out
	}
	var parallel []hook
	var sequences [][]hook
	for _, g := range groups {
		if g.sequential {
			sequences = append(sequences, g.hooks)
		} else {
			parallel = append(parallel, g.hooks...)
		}
	}
	// Each runs into its own slot, so that the outcome lists them in settings order.
	slots := make([][]Result, len(parallel)+len(sequences))
	var wg sync.WaitGroup
	for i, h := range parallel {
		wg.Go(func() { slots[i] = []Result{r.runOne(ctx, e, h, c.SessionID, c.input(e, nil))} })
	}
	for i, seq := range sequences {
		wg.Go(func() {
			var input map[string]json.RawMessage
			for _, h := range seq {
				res := r.runOne(ctx, e, h, c.SessionID, c.input(e, input))
				slots[len(parallel)+i] = append(slots[len(parallel)+i], res)
				if res.Output != nil {
					if ti, ok := toolInput(res.Output); ok {
						input = merge(input, ti)
					}
				}
			}
		})
	}
	wg.Wait()
	for _, s := range slots {
		for _, res := range s {
			out.add(e, res)
		}
	}
	return out
}

// input is the JSON a hook of e is given: the base fields and c's own, with rewritten
// merged over tool_input.
func (c Call) input(e Event, rewritten map[string]json.RawMessage) []byte {
	m := map[string]any{
		"session_id":      c.SessionID,
		"transcript_path": c.TranscriptPath,
		"hook_event_name": string(e),
		"timestamp":       time.Now().UTC().Format(time.RFC3339Nano),
	}
	maps.Copy(m, c.Fields)
	if len(rewritten) > 0 {
		var orig map[string]json.RawMessage
		if raw, err := json.Marshal(c.Fields["tool_input"]); err == nil {
			_ = json.Unmarshal(raw, &orig) // not an object: replaced whole
		}
		m["tool_input"] = merge(orig, rewritten)
	}
	data, err := json.Marshal(m)
	if err != nil {
		// Fields are agentls's own values; a failure is a bug, told to the hook.
		data, _ = json.Marshal(map[string]any{"hook_event_name": string(e), "error": err.Error()})
	}
	return data
}

// merge returns base with over's fields set over it.
func merge(base, over map[string]json.RawMessage) map[string]json.RawMessage {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	maps.Copy(out, over)
	return out
}

// toolInput returns the hookSpecificOutput.tool_input of o, when it is an object.
func toolInput(o *Output) (map[string]json.RawMessage, bool) {
	raw, ok := o.Specific["tool_input"]
	if !ok {
		return nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// add folds one hook's result into o.
func (o *Outcome) add(e Event, res Result) {
	o.Results = append(o.Results, res)
	note := func(format string, args ...any) {
		o.Notes = append(o.Notes, fmt.Sprintf("hook %s (%s): ", abbreviate(res.Hook, 80), e)+fmt.Sprintf(format, args...))
	}
	switch {
	case res.Err != nil:
		note("%v", res.Err)
		return
	case res.Blocked:
		o.Deny = true
		o.Reason = join(o.Reason, res.Reason)
		note("blocked (exit status 2): %s", oneLine(res.Reason))
		return
	case res.Output == nil:
		return
	}
	out := res.Output
	if out.SystemMessage != "" {
		note("%s", oneLine(out.SystemMessage))
	}
	if out.denies() {
		o.Deny = true
		reason := cmpOr(out.Reason, "blocked by hook "+res.Hook)
		o.Reason = join(o.Reason, reason)
		note("denied: %s", oneLine(reason))
	} else if strings.EqualFold(out.Decision, "allow") || strings.EqualFold(out.Decision, "approve") {
		note("allowed")
	}
	if out.Continue != nil && !*out.Continue {
		o.Stop = true
		reason := cmpOr(out.StopReason, out.Reason, "stopped by hook "+res.Hook)
		o.StopReason = join(o.StopReason, reason)
		note("stopped the agent: %s", oneLine(reason))
	}
	if out.Specific != nil {
		o.Specific = append(o.Specific, out.Specific)
	}
	if raw, ok := out.Specific["additionalContext"]; ok {
		var text string
		if err := json.Unmarshal(raw, &text); err == nil && text != "" {
			o.Context = join(o.Context, text)
			note("added context (%d characters)", utf8.RuneCountInString(text))
		}
	}
	if ti, ok := toolInput(out); ok && len(ti) > 0 {
		o.ToolInput = merge(o.ToolInput, ti)
		note("rewrote the arguments %s", strings.Join(slices.Sorted(maps.Keys(ti)), ", "))
	}
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// oneLine returns s on one line, shortened for a message.
func oneLine(s string) string {
	return abbreviate(strings.Join(strings.Fields(s), " "), 300)
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// runOne runs hook h of e for the session with input and reads its answer.
func (r *Runner) runOne(ctx context.Context, e Event, h hook, session string, input []byte) Result {
	res := Result{Hook: h.name}
	start := time.Now()
	stdout, stderr, code, err := r.exec(ctx, h, session, input)
	res.Duration = time.Since(start)
	defer func() {
		r.logger.Info("hook ran", "event", e, "hook", h.name, "exit", code, "duration", res.Duration, "err", res.Err)
	}()
	switch {
	case err != nil:
		res.Err = err
		return res
	case code == ExitBlock:
		res.Blocked = true
		res.Reason = cmpOr(strings.TrimSpace(stderr), "blocked by hook "+h.name)
		return res
	case code != 0:
		msg := fmt.Sprintf("failed with exit status %d", code)
		if s := strings.TrimSpace(stderr); s != "" {
			msg += ": " + oneLine(s)
		}
		res.Err = errors.New(msg + "; ignored")
		return res
	}
	text := bytes.TrimSpace(stdout)
	if len(text) == 0 {
		return res
	}
	var out Output
	if err := json.Unmarshal(text, &out); err != nil {
		res.Err = fmt.Errorf("answered something that is not a JSON object (%q); ignored", abbreviate(string(text), 120))
		return res
	}
	res.Output = &out
	return res
}

// exec runs h for the session with input on its standard input and returns what it
// printed and its exit status; err says why it could not run or finish.
func (r *Runner) exec(ctx context.Context, h hook, session string, input []byte) (stdout []byte, stderr string, code int, err error) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	cmd := exec.Command(r.shell, "-c", h.command)
	cmd.Dir = r.dir
	var env []string
	if r.environ != nil {
		env = r.environ()
	}
	// The extension's settings, then Gemini CLI's variables, which they cannot
	// replace; CLAUDE_PROJECT_DIR is its alias for hooks written for Claude Code.
	env = append(env, h.env...)
	cmd.Env = append(env, "GEMINI_PROJECT_DIR="+r.dir, "CLAUDE_PROJECT_DIR="+r.dir, "GEMINI_CWD="+r.dir,
		"GEMINI_SESSION_ID="+session)
	cmd.Stdin = bytes.NewReader(input)
	var out, errOut capped
	cmd.Stdout, cmd.Stderr = &out, &errOut
	newGroup(cmd)
	if h.box != nil {
		if err := h.box.Err(); err != nil {
			return nil, "", -1, fmt.Errorf("not run: %w", err)
		}
		if h.box.Contained() {
			if err := h.box.Wrap(cmd); err != nil {
				return nil, "", -1, fmt.Errorf("not run: containing it: %w", err)
			}
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, "", -1, fmt.Errorf("could not start: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		killGroup(cmd)
		// Whatever keeps its output open is killed with its group; Wait returns.
		err = <-done
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return out.Bytes(), errOut.String(), -1, fmt.Errorf("did not finish within its timeout of %v and was stopped; ignored", h.timeout)
		}
		return out.Bytes(), errOut.String(), -1, fmt.Errorf("stopped: %w", ctx.Err())
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		if code = exit.ExitCode(); code == sandbox.ExitSetup && strings.Contains(errOut.String(), "sandbox") {
			return out.Bytes(), errOut.String(), code, fmt.Errorf("could not be contained: %s", oneLine(errOut.String()))
		}
		if code < 0 {
			return out.Bytes(), errOut.String(), code, fmt.Errorf("was killed (%v); ignored", exit)
		}
		return out.Bytes(), errOut.String(), code, nil
	case err != nil:
		return out.Bytes(), errOut.String(), -1, fmt.Errorf("failed: %w", err)
	}
	return out.Bytes(), errOut.String(), 0, nil
}

// capped is a buffer that keeps the first maxOutput bytes written to it.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
