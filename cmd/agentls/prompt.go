package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/mcp"
)

// cmdPrompt runs one prompt through the agent loop and streams the answer to stdout.
func cmdPrompt(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls prompt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "the model (default: from settings, else "+clients.DefaultGeminiModel+")")
	mode := fs.String("approval-mode", "", "default, auto_edit, yolo or plan (default: from settings, else default)")
	id := fs.String("session", "", "continue the stored session with this id")
	output := fs.String("output", "text", "text, json or stream-json")
	root := fs.String("root", "", "workspace root (default: the current directory)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		fmt.Fprintf(stderr, "agentls prompt: want one prompt, quoted\n\n%s", usage)
		return exitBadUsage
	}
	if _, err := confirm.ParseMode(*mode); err != nil {
		fmt.Fprintf(stderr, "agentls prompt: %v\n", err)
		return exitBadUsage
	}
	out, err := newPromptOutput(*output, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentls prompt: %v\n", err)
		return exitBadUsage
	}

	logger := newLogger(stderr)
	// Without a terminal there is nobody to ask: a nil asker makes a call that needs
	// consent fail with how to allow it.
	var asker confirm.Asker
	var ta *terminalAsker
	var elicit mcp.Elicitor
	if in, ok := stdin.(*os.File); ok && term.IsTerminal(int(in.Fd())) {
		ta = &terminalAsker{in: in, out: stderr}
		asker, elicit = ta, ta
	}
	stateDir, err := session.StateDir()
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	// The client is made once the settings are known, before the external tools start:
	// without a model there is nothing to start them for.
	var client clients.Client
	host, err := session.NewHost(session.HostOptions{
		Toolbox: toolbox.Options{Roots: workspaceRoots([]string{*root}), Mode: *mode, Logger: logger,
			MCPAuthorize: terminalAuthorize(stderr), MCPElicit: elicit},
		Store:     session.NewStore(stateDir),
		NewClient: func(context.Context, settings.Settings) (clients.Client, error) { return client, nil },
		Asker:     asker,
		Observe:   out.update,
		Logger:    logger,
	})
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	defer host.Close()
	tb := host.Toolbox()
	s := tb.Config().Settings
	if *model != "" {
		s.Model.Name = *model
	}
	if client, err = modelClients(logger)(ctx, s); err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	if err := host.StartExternal(ctx); err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
	}
	noteExternal(tb, stderr)

	sess, err := host.Open(ctx, *id)
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	out.begin(sess.ID(), sess.Model())
	res, err := sess.Prompt(ctx, pos[0], nil)
	out.end(res, err, sess.Metrics())
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	case res.StopReason != session.StopEndTurn:
		fmt.Fprintf(stderr, "agentls: the turn ended: %s (session %s)\n", res.StopReason, sess.ID())
		return exitFailure
	}
	return exitOK
}

// promptOutput writes what a prompt does in one of three forms: text (the answer on
// stdout as it streams, tool calls on stderr), json (one object at the end) or
// stream-json (one JSON object per line as things happen). Its methods are called from
// the prompt's goroutine and from the scheduler's, hence the lock.
type promptOutput struct {
	format         string
	stdout, stderr io.Writer

	mu    sync.Mutex
	enc   *json.Encoder
	id    string
	text  strings.Builder
	calls []tools.CallResult
	// afterTools reports tool calls since the last message chunk.
	afterTools bool
}

func newPromptOutput(format string, stdout, stderr io.Writer) (*promptOutput, error) {
	switch format {
	case "text", "json", "stream-json":
	default:
		return nil, fmt.Errorf("--output %q: want text, json or stream-json", format)
	}
	return &promptOutput{format: format, stdout: stdout, stderr: stderr, enc: json.NewEncoder(stdout)}, nil
}

// streamEvent is one line of stream-json output.
type streamEvent struct {
	Type       string `json:"type"`
	Session    string `json:"session,omitempty"`
	Model      string `json:"model,omitempty"`
	Text       string `json:"text,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// ParentToolCallID is the call a sub-agent's call runs within (invoke_agent's).
	ParentToolCallID string             `json:"parentToolCallId,omitempty"`
	Name             string             `json:"name,omitempty"`
	Title            string             `json:"title,omitempty"`
	Status           tools.Status       `json:"status,omitempty"`
	Args             json.RawMessage    `json:"args,omitempty"`
	Result           *tools.CallResult  `json:"result,omitempty"`
	StopReason       session.StopReason `json:"stopReason,omitempty"`
	Usage            *clients.Usage     `json:"usage,omitempty"`
	Error            string             `json:"error,omitempty"`
	Todos            []todo             `json:"todos,omitempty"`
	Mode             confirm.Mode       `json:"mode,omitempty"`
	// ToolMetrics are the session's tool metrics, with the result.
	ToolMetrics []tools.ToolStats `json:"toolMetrics,omitempty"`
}

// todo is an entry of a plan event, in write_todos's terms.
type todo struct {
	Description string `json:"description"`
	Status      string `json:"status"`
}

func (o *promptOutput) emit(ev streamEvent) {
	if o.format == "stream-json" {
		o.enc.Encode(ev)
	}
}

func (o *promptOutput) begin(id, model string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.id = id
	o.emit(streamEvent{Type: "init", Session: id, Model: model})
}

// update takes the session's update stream.
func (o *promptOutput) update(u session.Update) {
	switch u.Kind {
	case session.UpdateToolCall:
		o.event(*u.Call)
		return
	case session.UpdatePlan:
		o.plan(u.Plan)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch u.Kind {
	case session.UpdateMessage:
		if o.afterTools && o.format == "text" && o.text.Len() > 0 && !strings.HasSuffix(o.text.String(), "\n") {
			// A new model turn after tool calls starts on a line of its own.
			io.WriteString(o.stdout, "\n")
			o.text.WriteString("\n")
		}
		o.afterTools = false
		o.text.WriteString(u.Text)
		if o.format == "text" {
			io.WriteString(o.stdout, u.Text)
		}
		o.emit(streamEvent{Type: "message", Text: u.Text})
	case session.UpdateThought:
		o.emit(streamEvent{Type: "thought", Text: u.Text})
	case session.UpdateCompression:
		if o.format == "text" {
			fmt.Fprintf(o.stderr, "[%s]\n", u.Text)
		}
		o.emit(streamEvent{Type: "compression", Text: u.Text})
	case session.UpdateMode:
		// A call switched the approval mode, with the person's consent.
		if o.format == "text" {
			fmt.Fprintf(o.stderr, "[approval mode: %s]\n", u.Mode)
		}
		o.emit(streamEvent{Type: "mode", Mode: u.Mode})
	}
}

func (o *promptOutput) event(ev tools.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	// The host's call ids are the model's prefixed with the session: here, with one
	// session, the model's own are shown.
	ev.CallID = strings.TrimPrefix(ev.CallID, o.id+"/")
	ev.Parent = strings.TrimPrefix(ev.Parent, o.id+"/")
	// A sub-agent's calls show indented under the call that started the sub-agent.
	indent := ""
	if ev.Parent != "" {
		indent = "  "
	}
	if ev.Result != nil {
		r := *ev.Result
		r.CallID = strings.TrimPrefix(r.CallID, o.id+"/")
		ev.Result = &r
	}
	switch {
	case ev.Note != nil:
		// Where an approval was saved, or why not.
		fmt.Fprintf(o.stderr, "agentls: %s\n", visible(ev.Note.Text))
	case ev.Output != "":
		if o.format == "text" {
			io.WriteString(o.stderr, ev.Output)
		}
		o.emit(streamEvent{Type: "tool_output", ToolCallID: ev.CallID, ParentToolCallID: ev.Parent, Name: ev.Name, Text: ev.Output})
	case ev.Status == tools.StatusExecuting:
		o.afterTools = true
		if o.format == "text" {
			fmt.Fprintf(o.stderr, "\n%s[%s] %s\n", indent, ev.Name, ev.Title)
		}
		o.emit(streamEvent{Type: "tool_call", ToolCallID: ev.CallID, ParentToolCallID: ev.Parent, Name: ev.Name, Title: ev.Title, Args: ev.Args})
	case ev.Status.Terminal() && ev.Result != nil:
		if ev.Parent == "" {
			// The json form's toolCalls are the model's; a sub-agent's are in its
			// answer, and counted in the metrics.
			o.calls = append(o.calls, *ev.Result)
		}
		if o.format == "text" {
			for _, h := range ev.Result.Hooks {
				fmt.Fprintf(o.stderr, "%s[%s] %s\n", indent, ev.Name, visible(h))
			}
		}
		if o.format == "text" && ev.Status != tools.StatusSuccess {
			msg := string(ev.Status)
			if ev.Result.Error != nil {
				msg = fmt.Sprintf("%s: %s", ev.Result.Error.Type, ev.Result.Error.Message)
			}
			fmt.Fprintf(o.stderr, "%s[%s] %s\n", indent, ev.Name, msg)
		}
		o.emit(streamEvent{Type: "tool_result", ToolCallID: ev.CallID, ParentToolCallID: ev.Parent, Name: ev.Name, Status: ev.Status, Result: ev.Result})
	}
}

func (o *promptOutput) plan(plan []session.PlanEntry) {
	o.mu.Lock()
	defer o.mu.Unlock()
	items := make([]todo, len(plan))
	for i, e := range plan {
		items[i] = todo{Description: e.Content, Status: e.Status}
	}
	o.emit(streamEvent{Type: "plan", Todos: items})
}

// end writes how the prompt ended, with the metrics of the session's tool calls (the
// json and stream-json forms).
func (o *promptOutput) end(res session.Result, err error, metrics []tools.ToolStats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	switch o.format {
	case "text":
		if o.text.Len() > 0 && !strings.HasSuffix(o.text.String(), "\n") {
			io.WriteString(o.stdout, "\n")
		}
	case "json":
		enc := json.NewEncoder(o.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Session    string             `json:"session"`
			StopReason session.StopReason `json:"stopReason"`
			Response   string             `json:"response"`
			Usage      clients.Usage      `json:"usage"`
			ToolCalls  []tools.CallResult `json:"toolCalls"`
			// ToolMetrics are per tool: calls, errors, p50 and p95 durations.
			ToolMetrics []tools.ToolStats `json:"toolMetrics"`
			Error       string            `json:"error,omitempty"`
		}{o.id, res.StopReason, res.Text, res.Usage, o.calls, nonNilStats(metrics), msg})
	case "stream-json":
		o.emit(streamEvent{Type: "result", StopReason: res.StopReason, Usage: &res.Usage, Error: msg, ToolMetrics: metrics})
	}
}

// nonNilStats returns stats, or an empty list for nil, which JSON must show as [].
func nonNilStats(stats []tools.ToolStats) []tools.ToolStats {
	if stats == nil {
		return []tools.ToolStats{}
	}
	return stats
}
