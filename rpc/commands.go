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
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/tools"
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

// editorCommand is one editor command: an agentls.* command of workspace/executeCommand
// and, where it has one, the agentls/* method of rich clients that takes the same object
// as its params. Server.commandTable declares them all; the advertised command list and
// the method routes come from it.
type editorCommand struct {
	name   string // as workspace/executeCommand names it
	method string // the agentls/* method with the same params; "" when none
	// notify says that the method may also be sent as a notification.
	notify bool
	// needsModel says that the command is advertised only by a server with a model;
	// without one it is still served, and says what is missing.
	needsModel bool
	// run serves the command; callee is what the client called (name or method), for
	// messages, and arg its object argument ({} when the client gave none).
	run func(ctx context.Context, callee string, arg json.RawMessage) (any, error)
}

// commandTable declares the editor commands, in the order they are advertised.
func (s *Server) commandTable() []editorCommand {
	return []editorCommand{
		{name: cmdRunTool, method: "agentls/runTool", run: s.runTool},
		{name: cmdListTools, method: "agentls/tools", run: s.listTools},
		{name: cmdCancel, method: "agentls/cancel", notify: true, run: s.cancel},
		{name: cmdSetApprovalMode, run: s.setApprovalMode},
		{name: cmdConfirm, run: s.answerConfirmation},
		{name: cmdListSessions, method: "agentls/sessions", run: s.listSessions},
		{name: cmdSessionHistory, run: s.sessionHistory},
		{name: cmdDiscoverTools, run: s.discoverTools},
		{name: cmdMCPStatus, run: s.mcpStatus},
		{name: cmdMCPAuth, run: s.mcpAuth},
		{name: cmdMetrics, run: s.metrics},
		{name: cmdListPrompts, run: s.listPrompts},
		{name: cmdTrust, run: s.trustCommand},
		{name: cmdUndoTurn, run: s.undoTurn},
		{name: cmdTurnDiff, run: s.turnDiff},
		{name: cmdListRules, run: s.listRules},
		{name: cmdRemoveRule, run: s.removeRule},
		{name: cmdStatus, run: s.status},
		{name: cmdPrompt, method: "agentls/prompt", needsModel: true, run: s.prompt},
		{name: cmdRunPrompt, needsModel: true, run: s.runPrompt},
	}
}

// addCommands routes the commands' agentls/* methods, and maps their names for
// executeCommand.
func (s *Server) addCommands() {
	s.cmds = map[string]editorCommand{}
	for _, c := range s.commandTable() {
		s.cmds[c.name] = c
		if c.method == "" {
			continue
		}
		serve := func(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
			arg := json.RawMessage(bytes.TrimSpace(params))
			if len(arg) == 0 || string(arg) == "null" {
				arg = json.RawMessage("{}")
			}
			return c.run(ctx, c.method, arg)
		}
		s.routes[c.method] = route{serve: serve}
		if c.notify {
			s.notifications[c.method] = func(ctx context.Context, params jsonrpc2.RawMessage) error {
				_, err := serve(ctx, params)
				return err
			}
		}
	}
}

// commands are the commands executeCommandProvider lists: those that do not need a
// model and, when the server has one (Options.NewClient), those that do.
func (s *Server) commands() []string {
	var out []string
	for _, c := range s.commandTable() {
		if !c.needsModel || s.opts.NewClient != nil {
			out = append(out, c.name)
		}
	}
	return out
}

func (s *Server) executeCommand(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
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
	c, ok := s.cmds[p.Command]
	if !ok {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q: agentls offers %s", p.Command, strings.Join(s.commands(), ", "))
	}
	return c.run(ctx, p.Command, arg)
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
func (s *Server) runTool(ctx context.Context, command string, arg json.RawMessage) (any, error) {
	var a runToolArgs
	if err := decodeArg(command, arg, &a); err != nil {
		return nil, err
	}
	if a.Name == "" {
		return nil, invalidArgs(command, `"name" must name a tool (see %s)`, cmdListTools)
	}
	args := bytes.TrimSpace(a.Args)
	switch {
	case len(args) == 0 || string(args) == "null":
		args = json.RawMessage("{}")
	case args[0] != '{':
		return nil, invalidArgs(command, `"args" must be an object with the tool's parameters, got %s`, tools.Abbreviate(string(args), 60))
	}
	id := a.ToolCallID
	if id == "" {
		id = EditorSession + "-" + strconv.FormatUint(s.seq.Add(1), 10)
	}
	// Each call the editor runs is a turn of its own: the failures of earlier ones are
	// no longer news.
	s.newTurn(EditorSession)
	return s.host.RunTool(ctx, EditorSession, tools.Request{CallID: id, Name: a.Name, Args: args}), nil
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
func (s *Server) listTools(_ context.Context, command string, arg json.RawMessage) (any, error) {
	var a listToolsArgs
	if err := decodeArg(command, arg, &a); err != nil {
		return nil, err
	}
	infos := s.registry().List()
	if infos == nil {
		infos = []tools.Info{}
	}
	if !a.Details {
		return infos, nil
	}
	_, _, tb := s.state()
	return toolList{Tools: infos, Untrusted: tb.Untrusted(), MCPServers: tb.MCPStatuses()}, nil
}

// cancelArgs are the arguments of agentls.cancel and agentls/cancel.
type cancelArgs struct {
	Session string `json:"session"`
}

// cancel cancels the running prompt and tool calls of a session, or of every session.
func (s *Server) cancel(_ context.Context, command string, arg json.RawMessage) (any, error) {
	var a cancelArgs
	if err := decodeArg(command, arg, &a); err != nil {
		return nil, err
	}
	prompts, calls := s.host.Cancel(a.Session)
	s.clearFailures(a.Session)
	s.log.Info("cancelled", "session", a.Session, "prompts", prompts, "calls", calls)
	return nil, nil
}

// setApprovalMode switches the approval mode of the workspace's policy or, given a
// session, of that session only.
func (s *Server) setApprovalMode(_ context.Context, command string, arg json.RawMessage) (any, error) {
	var a struct {
		Mode    string `json:"mode"`
		Session string `json:"session"`
	}
	if err := decodeArg(command, arg, &a); err != nil {
		return nil, err
	}
	if a.Mode == "" {
		return nil, invalidArgs(command, `"mode" is required: default, auto_edit, yolo or plan`)
	}
	m, err := confirm.ParseMode(a.Mode)
	if err != nil {
		return nil, invalidArgs(command, "%v", err)
	}
	if a.Session != "" {
		if !s.host.SetMode(a.Session, m) {
			return nil, invalidArgs(command, "session %q is not running here: a session's own approval mode is set while it is open", a.Session)
		}
		s.log.Info("approval mode", "mode", m, "session", a.Session)
		if s.capabilities().RichUpdates() {
			s.notifier(a.Session)(modeNotice{Kind: updateMode, Mode: m})
		}
		return nil, nil
	}
	s.host.Toolbox().SetMode(m)
	s.log.Info("approval mode", "mode", m)
	s.announceMode()
	return nil, nil
}

// answerConfirmation answers a pending confirmation by its id (agentls.confirm).
func (s *Server) answerConfirmation(_ context.Context, command string, arg json.RawMessage) (any, error) {
	var a struct {
		ID            string  `json:"id"`
		Outcome       string  `json:"outcome"`
		Content       *string `json:"content"`
		AcceptedHunks []int   `json:"acceptedHunks"`
		Persist       string  `json:"persist"`
	}
	if err := decodeArg(command, arg, &a); err != nil {
		return nil, err
	}
	ans, err := parseAnswer(a.Outcome, a.Content, a.AcceptedHunks, a.Persist)
	if err != nil {
		return nil, invalidArgs(command, "%v", err)
	}
	if a.ID == "" {
		return nil, invalidArgs(command, `"id" must name a pending confirmation`)
	}
	if !s.confirms.answer(a.ID, ans) {
		return nil, invalidArgs(command, "no confirmation %q is pending (it may have been answered or cancelled already)", a.ID)
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
func (s *Server) metrics(_ context.Context, command string, arg json.RawMessage) (any, error) {
	if err := decodeArg(command, arg, &struct{}{}); err != nil {
		return nil, err
	}
	s.mu.Lock()
	host := s.host
	s.mu.Unlock()
	if host == nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "%s: the workspace is not set up yet", command)
	}
	return metricsResult{Process: nonNil(host.Metrics()), Sessions: host.SessionMetrics()}, nil
}

// nonNil returns stats, or an empty list for nil, which JSON must show as [].
func nonNil(stats []tools.ToolStats) []tools.ToolStats {
	if stats == nil {
		return []tools.ToolStats{}
	}
	return stats
}
