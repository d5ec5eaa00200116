package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// The commands of workspace/executeCommand, for every client, and the agentls/* methods
// of rich clients that share their params and results.

// EditorSession is the session of the tool calls the editor starts itself
// (agentls.runTool): agentls/update notifications for them carry it, and agentls.cancel
// with it cancels them.
const EditorSession = "editor"

// executeCommandParams are the params of workspace/executeCommand. Every agentls command
// takes one object argument (or none, meaning {}).
type executeCommandParams struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments"`
}

// commandEntry is one editor command: an agentls.* command of workspace/executeCommand
// and, where it has one, the agentls/* method of rich clients that takes the same object
// as its params. commandHandler.table declares them all; the advertised command list
// and the method routes come from it.
type commandEntry struct {
	name   string // as workspace/executeCommand names it
	method string // the agentls/* method with the same params; "" when none
	// notify says that the method may also be sent as a notification.
	notify bool
	// needsModel says that the command is advertised only by a server with a model;
	// without one it is still served, and says what is missing.
	needsModel bool
	// settle says that the command reads or edits what the editor holds: it waits for
	// the editor's report of agentls's earlier edits (documents.awaitReports) first, so
	// that it works on the text the person sees.
	settle bool
	// run serves the command with its deps resolved; arg is its object argument ({}
	// when the client gave none), which typed decodes.
	run func(ctx context.Context, d deps, arg json.RawMessage) (any, error)
}

// deps are what a command runs with, resolved once per call (commandHandler.serve) so
// that no command reads the server's state field by field: what initialize set up,
// read together under s.mu.
type deps struct {
	// callee is what the client called, the command or the method, for messages.
	callee string
	caps   ClientCapabilities
	enc    workspace.PositionEncoding
	// host hosts the sessions and owns toolbox, the tool system.
	host    *session.Host
	toolbox *toolbox.Toolbox
	// stateDir is where transcripts go; stateErr says why there is none, and with
	// it no stored sessions.
	stateDir string
	stateErr error
}

// typed adapts a command's method to the table: its object argument is decoded into an
// A once, here, so that a wrong argument is an InvalidParams error naming the command
// and what is wrong, the same for every command.
func typed[A, R any](fn func(ctx context.Context, d deps, a A) (R, error)) func(context.Context, deps, json.RawMessage) (any, error) {
	return func(ctx context.Context, d deps, arg json.RawMessage) (any, error) {
		var a A
		if err := decodeArg(d.callee, arg, &a); err != nil {
			return nil, err
		}
		r, err := fn(ctx, d, a)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// commandHandler serves the editor commands, apart from the server's LSP lifecycle and
// document sync: each of its command methods gets its typed argument and its deps
// from the table.
type commandHandler struct {
	s      *Server
	table  []commandEntry          // in the order they are advertised
	byName map[string]commandEntry // by name, for workspace/executeCommand
}

// newCommandHandler returns the command handler of s.
func newCommandHandler(s *Server) *commandHandler {
	c := &commandHandler{s: s}
	c.table = []commandEntry{
		{name: cmdRunTool, settle: true, method: "agentls/runTool", run: typed(c.runTool)},
		{name: cmdListTools, method: "agentls/tools", run: typed(c.listTools)},
		{name: cmdCancel, method: "agentls/cancel", notify: true, run: typed(c.cancel)},
		{name: cmdSetApprovalMode, run: typed(c.setApprovalMode)},
		{name: cmdConfirm, run: typed(c.answerConfirmation)},
		{name: cmdListSessions, method: "agentls/sessions", run: typed(c.listSessions)},
		{name: cmdSessionHistory, run: typed(c.sessionHistory)},
		{name: cmdDiscoverTools, run: typed(c.discoverTools)},
		{name: cmdMCPStatus, run: typed(c.mcpStatus)},
		{name: cmdMCPAuth, run: typed(c.mcpAuth)},
		{name: cmdMetrics, run: typed(c.metrics)},
		{name: cmdListPrompts, run: typed(c.listPrompts)},
		{name: cmdTrust, run: typed(c.trust)},
		{name: cmdUndoTurn, settle: true, run: typed(c.undoTurn)},
		{name: cmdRedoTurn, settle: true, run: typed(c.redoTurn)},
		{name: cmdTurnDiff, settle: true, run: typed(c.turnDiff)},
		{name: cmdListRules, run: typed(c.listRules)},
		{name: cmdRemoveRule, run: typed(c.removeRule)},
		{name: cmdStatus, run: typed(c.status)},
		{name: cmdPrompt, settle: true, method: "agentls/prompt", needsModel: true, run: typed(c.prompt)},
		{name: cmdRunPrompt, settle: true, needsModel: true, run: typed(c.runPrompt)},
	}
	c.byName = map[string]commandEntry{}
	for _, e := range c.table {
		c.byName[e.name] = e
	}
	return c
}

// route adds the commands' agentls/* methods to the server's routes and notifications.
func (c *commandHandler) route(routes map[string]route, notifications map[string]notification) {
	for _, e := range c.table {
		if e.method == "" {
			continue
		}
		serve := func(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
			arg := json.RawMessage(bytes.TrimSpace(params))
			if len(arg) == 0 || string(arg) == "null" {
				arg = json.RawMessage("{}")
			}
			return c.serve(ctx, e, e.method, arg)
		}
		routes[e.method] = route{serve: serve}
		if e.notify {
			notifications[e.method] = func(ctx context.Context, params jsonrpc2.RawMessage) error {
				_, err := serve(ctx, params)
				return err
			}
		}
	}
}

// serve runs the command e, called as callee, with its deps.
func (c *commandHandler) serve(ctx context.Context, e commandEntry, callee string, arg json.RawMessage) (any, error) {
	s := c.s
	s.mu.Lock()
	d := deps{callee: callee, caps: s.caps, enc: s.enc, host: s.host, toolbox: s.toolbox, stateDir: s.stateDir, stateErr: s.stateErr}
	s.mu.Unlock()
	if d.host == nil {
		// Unreachable through the lifecycle gate, which lets commands in only after
		// initialize has set the host up.
		return nil, jsonrpc2.Errorf(codeRequestFailed, "%s: the workspace is not set up yet", callee)
	}
	if e.settle {
		s.docs.awaitReports(ctx, nil, s.log)
	}
	return e.run(ctx, d, arg)
}

// names are the commands executeCommandProvider lists: those that do not need a model
// and, when the server has one (Options.NewClient), those that do.
func (c *commandHandler) names() []string {
	var out []string
	for _, e := range c.table {
		if !e.needsModel || c.s.opts.NewClient != nil {
			out = append(out, e.name)
		}
	}
	return out
}

// executeCommand serves workspace/executeCommand.
func (c *commandHandler) executeCommand(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p executeCommandParams
	if err := decodeParams("workspace/executeCommand", params, &p); err != nil {
		return nil, err
	}
	if len(p.Arguments) > 1 {
		return nil, invalidArgs(p.Command, "want one object argument, got %d arguments", len(p.Arguments))
	}
	arg := json.RawMessage("{}")
	if len(p.Arguments) == 1 && string(bytes.TrimSpace(p.Arguments[0])) != "null" {
		arg = p.Arguments[0]
	}
	e, ok := c.byName[p.Command]
	if !ok {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q: agentls offers %s", p.Command, strings.Join(c.names(), ", "))
	}
	return c.serve(ctx, e, p.Command, arg)
}

// invalidArgs is the InvalidParams error of a command (or method) whose argument is wrong.
func invalidArgs(command, format string, args ...any) error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid arguments for %s: %s", command, fmt.Sprintf(format, args...))
}

// decodeArg decodes a command's object argument into v, strictly enough to say what is
// wrong with it.
func decodeArg(command string, arg json.RawMessage, v any) error {
	arg = bytes.TrimSpace(arg)
	if len(arg) == 0 || arg[0] != '{' {
		return invalidArgs(command, "want a JSON object, got %s", tools.Abbreviate(string(arg), 60))
	}
	if err := (codec{}).Unmarshal(arg, v); err != nil {
		return invalidArgs(command, "%v", err)
	}
	return nil
}

// runToolArgs are the arguments of agentls.runTool.
type runToolArgs struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	// ToolCallID optionally names the call (an extension; see docs/protocol.md).
	ToolCallID string `json:"toolCallId"`
}

// runTool runs one tool call through the host, exactly as a model's call runs:
// validation, policy, approval mode, confirmation. Its result is the ToolResult, also
// when the call failed or was cancelled.
func (c *commandHandler) runTool(ctx context.Context, d deps, a runToolArgs) (tools.CallResult, error) {
	if a.Name == "" {
		return tools.CallResult{}, invalidArgs(d.callee, `"name" must name a tool (see %s)`, cmdListTools)
	}
	args := bytes.TrimSpace(a.Args)
	switch {
	case len(args) == 0 || string(args) == "null":
		args = json.RawMessage("{}")
	case args[0] != '{':
		return tools.CallResult{}, invalidArgs(d.callee, `"args" must be an object with the tool's parameters, got %s`, tools.Abbreviate(string(args), 60))
	}
	id := a.ToolCallID
	if id == "" {
		id = EditorSession + "-" + strconv.FormatUint(c.s.seq.Add(1), 10)
	}
	// Each call the editor runs is a turn of its own: the failures of earlier ones are
	// no longer news.
	c.s.newTurn(EditorSession)
	return d.host.RunTool(ctx, EditorSession, tools.Request{CallID: id, Name: a.Name, Args: args}), nil
}

// listToolsArgs are the arguments of agentls.listTools and agentls/tools.
type listToolsArgs struct {
	// Details asks for a ToolList instead of the bare ToolInfo array.
	Details bool `json:"details"`
}

// toolList is the detailed result of agentls.listTools: the tools, the workspace tool
// sources skipped because the folder is untrusted, and the MCP servers' status.
type toolList struct {
	Tools      []tools.Info        `json:"tools"`
	Untrusted  *toolbox.Untrusted  `json:"untrusted,omitempty"`
	MCPServers []toolbox.MCPStatus `json:"mcpServers"`
}

// listTools returns the enabled tools as ToolInfo objects, or with details a toolList.
func (c *commandHandler) listTools(_ context.Context, d deps, a listToolsArgs) (any, error) {
	d.toolbox.WaitAddons() // activate_skill and the extensions' excludeTools
	infos := d.toolbox.Config().Registry.List()
	if infos == nil {
		infos = []tools.Info{}
	}
	if !a.Details {
		return infos, nil
	}
	return toolList{Tools: infos, Untrusted: d.toolbox.Untrusted(), MCPServers: d.toolbox.MCPStatuses()}, nil
}

// cancelArgs are the arguments of agentls.cancel and agentls/cancel.
type cancelArgs struct {
	Session string `json:"session"`
}

// cancel cancels the running prompt and tool calls of a session, or of every session.
func (c *commandHandler) cancel(_ context.Context, d deps, a cancelArgs) (any, error) {
	prompts, calls := d.host.Cancel(a.Session)
	c.s.clearFailures(a.Session)
	c.s.log.Info("cancelled", "session", a.Session, "prompts", prompts, "calls", calls)
	return nil, nil
}

// approvalModeArgs are the arguments of agentls.setApprovalMode.
type approvalModeArgs struct {
	Mode    string `json:"mode"`
	Session string `json:"session"`
}

// setApprovalMode switches the approval mode of the workspace's policy or, given a
// session, of that session only.
func (c *commandHandler) setApprovalMode(_ context.Context, d deps, a approvalModeArgs) (any, error) {
	s := c.s
	if a.Mode == "" {
		return nil, invalidArgs(d.callee, `"mode" is required: default, auto_edit, yolo or plan`)
	}
	m, err := confirm.ParseMode(a.Mode)
	if err != nil {
		return nil, invalidArgs(d.callee, "%v", err)
	}
	if a.Session != "" {
		if !d.host.SetMode(a.Session, m) {
			return nil, invalidArgs(d.callee, "session %q is not running here: a session's own approval mode is set while it is open", a.Session)
		}
		s.log.Info("approval mode", "mode", m, "session", a.Session)
		if d.caps.RichUpdates() {
			s.notifier(a.Session)(modeNotice{Kind: updateMode, Mode: m})
		}
		return nil, nil
	}
	d.toolbox.SetMode(m)
	s.log.Info("approval mode", "mode", m)
	s.announceMode()
	return nil, nil
}

// answerConfirmation answers a pending confirmation by its id (agentls.confirm).
func (c *commandHandler) answerConfirmation(_ context.Context, d deps, a confirmArgs) (any, error) {
	ans, err := parseAnswer(a.answerFields)
	if err != nil {
		return nil, invalidArgs(d.callee, "%v", err)
	}
	if a.ID == "" {
		return nil, invalidArgs(d.callee, `"id" must name a pending confirmation`)
	}
	if !c.s.confirms.answer(a.ID, ans) {
		return nil, invalidArgs(d.callee, "no confirmation %q is pending (it may have been answered or cancelled already)", a.ID)
	}
	return nil, nil
}

// metricsResult is the result of agentls.metrics.
type metricsResult struct {
	// Process are the metrics of every tool call the server ran; Sessions those of
	// each live session, by id.
	Process  []tools.ToolStats            `json:"process"`
	Sessions map[string][]tools.ToolStats `json:"sessions"`
}

// metrics returns the tool metrics of the process and of each live session.
func (c *commandHandler) metrics(_ context.Context, d deps, _ struct{}) (metricsResult, error) {
	return metricsResult{Process: nonNil(d.host.Metrics()), Sessions: d.host.SessionMetrics()}, nil
}

// nonNil returns stats, or an empty list for nil, which JSON must show as [].
func nonNil(stats []tools.ToolStats) []tools.ToolStats {
	if stats == nil {
		return []tools.ToolStats{}
	}
	return stats
}
