package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/tools"
)

// Terminal delegation. When the client declares terminal, a foreground
// run_shell_command runs in a terminal of the client's (terminal/create, bash -c and
// the command line, in the call's directory), which the call's tool_call_update
// embeds so that the user sees it in the editor's terminal UI; consent is asked as
// before. A cancelled call kills the terminal. The model gets the output and the exit
// status as the shell tool reports them. Background commands run in agentls as before.

// shellTool is the name of the tool whose calls a client's terminal runs.
const shellTool = "run_shell_command"

// maxTerminalOutput is the output a client's terminal keeps for the model.
const maxTerminalOutput = 256 << 10

// releaseTimeout bounds the requests that end a terminal after its call was cancelled.
const releaseTimeout = 5 * time.Second

// terminalTool is run_shell_command running foreground commands in the client's
// terminals.
type terminalTool struct {
	tools.Tool
	wh *workspaceHost
}

// Build implements tools.Tool.
func (t *terminalTool) Build(args json.RawMessage) (tools.Invocation, error) {
	inv, err := t.Tool.Build(args)
	if err != nil {
		return nil, err
	}
	var a struct {
		Command      string `json:"command"`
		DirPath      string `json:"dir_path"`
		IsBackground bool   `json:"is_background"`
		Sandbox      *bool  `json:"sandbox"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.IsBackground {
		return inv, nil
	}
	return &terminalCall{Invocation: inv, wh: t.wh, args: string(args), command: a.Command, dir: a.DirPath,
		outside: a.Sandbox != nil && !*a.Sandbox}, nil
}

// terminalCall is a foreground run_shell_command call run in a terminal of the client.
type terminalCall struct {
	tools.Invocation
	wh      *workspaceHost
	args    string
	command string
	dir     string
	// outside says the model asked to run the command outside the sandbox.
	outside bool
}

// Execute implements tools.Invocation.
func (c *terminalCall) Execute(ctx context.Context, w io.Writer) (*tools.Result, error) {
	st := c.wh.c.stateOf(ctx)
	if st == nil {
		// A call of no session of the client's has no terminal to run in.
		return c.Invocation.Execute(ctx, w)
	}
	ws := st.host.Toolbox().Workspace
	dir := ws.Roots()[0]
	if c.dir != "" {
		d, err := ws.Resolve(c.dir)
		if err != nil {
			return nil, &tools.Error{Type: tools.ErrPathNotInWorkspace, Message: err.Error()}
		}
		dir = d
	}
	// A contained command runs as `agentls sandbox --root ROOT -- bash -c LINE`, which
	// holds it to the policy this workspace's own commands are held to.
	name, args := "bash", []string{"-c", c.command}
	var env []sdk.EnvVariable
	box := st.host.Toolbox().Config().Sandbox
	if err := box.Err(); err != nil {
		return nil, &tools.Error{Type: tools.ErrExecutionFailed, Message: err.Error(), Err: err}
	}
	if box.Contained() && !c.outside {
		exe, err := os.Executable()
		if err != nil {
			return nil, &tools.Error{Type: tools.ErrExecutionFailed, Message: fmt.Sprintf("finding agentls to contain the command: %v", err), Err: err}
		}
		name, args = exe, append([]string{"sandbox", "--root", ws.Roots()[0], "--", name}, args...)
		env = []sdk.EnvVariable{{Name: sandbox.EnvPolicy, Value: box.Encode()}}
	}
	sid := sdk.SessionId(st.id)
	// terminal/create is not withdrawn when the call is cancelled meanwhile: the
	// client may have started the command already, and only a terminal id lets it be
	// killed and released (the wait below ends at once for a cancelled call).
	create, cancelCreate := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	term, err := st.c.sdk.CreateTerminal(create, sdk.CreateTerminalRequest{SessionId: sid, Command: name,
		Args: args, Env: env, Cwd: &dir, OutputByteLimit: sdk.Ptr(maxTerminalOutput)})
	cancelCreate()
	if err != nil {
		return nil, &tools.Error{Type: tools.ErrExecutionFailed, Message: fmt.Sprintf("terminal/create: %v", err), Err: err}
	}
	tid := term.TerminalId
	if callID, ok := st.takeExecuting(c.args); ok {
		st.showTerminal(callID, tid)
	}
	exit, waitErr := st.c.sdk.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: tid})
	// The terminal outlives the wait (a cancelled call's context, say) only as long as
	// it takes to kill it and read what it printed: the bound starts now, not at
	// terminal/create, or a command that ran longer than the bound would lose its
	// kill, output and release.
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	defer func() {
		if _, err := st.c.sdk.ReleaseTerminal(end, sdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: tid}); err != nil {
			st.c.log.Debug("terminal/release", "terminal", tid, "error", err)
		}
	}()
	if waitErr != nil {
		if _, err := st.c.sdk.KillTerminal(end, sdk.KillTerminalRequest{SessionId: sid, TerminalId: tid}); err != nil {
			st.c.log.Debug("terminal/kill", "terminal", tid, "error", err)
		}
	}
	out, err := st.c.sdk.TerminalOutput(end, sdk.TerminalOutputRequest{SessionId: sid, TerminalId: tid})
	if err != nil {
		st.c.log.Debug("terminal/output", "terminal", tid, "error", err)
	}
	if ctx.Err() != nil {
		return nil, &tools.Error{Type: tools.ErrCancelled, Message: "The command was cancelled; its terminal was killed.", Err: ctx.Err()}
	}
	if waitErr != nil {
		return nil, &tools.Error{Type: tools.ErrExecutionFailed, Message: fmt.Sprintf("terminal/wait_for_exit: %v", waitErr), Err: waitErr}
	}
	res := terminalResult(c.command, ws.Rel(dir), out, exit)
	res.Output += "\n\nNote: " + box.Note(c.outside, res.Summary != "Exit code 0", res.Display, dir)
	return res, nil
}

// terminalResult reports a command a client's terminal ran as the shell tool reports
// its own.
func terminalResult(line, dir string, out sdk.TerminalOutputResponse, exit sdk.WaitForTerminalExitResponse) *tools.Result {
	exitCode, signal, summary := "(none)", "(none)", ""
	switch {
	case exit.ExitCode != nil:
		exitCode = strconv.Itoa(*exit.ExitCode)
		summary = "Exit code " + exitCode
	case exit.Signal != nil:
		signal = *exit.Signal
		summary = "Killed by " + signal
	}
	if dir == "" || dir == "." {
		dir = "(root)"
	}
	text := out.Output
	if text == "" {
		text = "(empty)"
	}
	if out.Truncated {
		summary += ", output shortened by the terminal"
	}
	return &tools.Result{
		Summary: summary,
		Output: fmt.Sprintf("Command: %s\nDirectory: %s\nOutput: %s\nError: (none)\nExit Code: %s\nSignal: %s\nBackground PIDs: (none)\nProcess Group PGID: (none)",
			line, dir, text, exitCode, signal),
		Display: out.Output,
	}
}

// forgetExecuting forgets the call id with args, if its Execute did not take it (a
// background command). st.mu is held.
func (st *sessionState) forgetExecuting(id, args string) {
	ids := slices.DeleteFunc(st.executing[args], func(x string) bool { return x == id })
	if len(ids) == 0 {
		delete(st.executing, args)
	} else {
		st.executing[args] = ids
	}
}

// takeExecuting returns the id of the executing call with args.
func (st *sessionState) takeExecuting(args string) (string, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ids := st.executing[args]
	if len(ids) == 0 {
		return "", false
	}
	id := ids[0]
	if len(ids) == 1 {
		delete(st.executing, args)
	} else {
		st.executing[args] = ids[1:]
	}
	return id, true
}

// showTerminal embeds the terminal in the call's content, now and in its result.
func (st *sessionState) showTerminal(callID, terminalID string) {
	st.mu.Lock()
	if v, ok := st.calls[callID]; ok {
		v.terminal = terminalID
	}
	st.mu.Unlock()
	st.c.notify(st.id, sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(callID),
		Content: []sdk.ToolCallContent{sdk.ToolTerminalRef(terminalID)}}})
}
