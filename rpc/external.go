package rpc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/mcp"
)

// External tools and folder trust.
//
// The discovered and MCP tools load on a goroutine of the host's once the client is
// initialized, and again when the configuration changes what they are (loadExternal),
// so that initialize and the read loop never wait for a server; the host's Close, at
// the end of Serve, cancels the load and waits for it. MCP status changes reach rich clients as
// agentls/update notifications of kind mcp_status (session "").
//
// In a workspace whose settings name tool sources or loosen consent but which the user
// has not trusted, the server asks once, after the first load (askTrust): trust this
// folder, trust its parent, or not now. "Not now" holds for this connection only.

// loadExternal starts loading the discovered and MCP tools of the settings in force
// on the host's goroutine, which Serve's host.Close cancels and waits for, then asks
// about trust if the workspace's settings were skipped for want of it. It takes no
// lock: applySettings calls it under s.mu.
func (s *Server) loadExternal(host *session.Host) {
	if host == nil || !s.externalAllowed() {
		return
	}
	tb := host.Toolbox()
	host.StartExternalInBackground(func(err error) {
		if errors.Is(err, toolbox.ErrClosed) {
			return // the connection is ending
		}
		if err != nil {
			s.log.Warn("loading external tools", "err", err)
			s.tell(protocol.MessageTypeWarning, fmt.Sprintf("agentls: %v", err))
		}
		s.askTrust(tb)
	})
}

// currentHost returns the host of the sessions; nil before initialize.
func (s *Server) currentHost() *session.Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

// externalAllowed reports whether the settings may start programs: not under the fuzz
// target (Options.onlyTools), whose settings are whatever the fuzzer writes.
func (s *Server) externalAllowed() bool { return len(s.opts.onlyTools) == 0 }

// onMCPStatus tells rich clients of an MCP server's new status.
func (s *Server) onMCPStatus(st toolbox.MCPStatus) {
	if s.capabilities().Rich() {
		s.send("agentls/update", map[string]any{"session": "", "update": map[string]any{"kind": "mcp_status", "server": st}})
	}
}

// trustAsk is the state of folder trust in this connection: the question is put once.
type trustAsk struct {
	once sync.Once
}

// Trust answers.
const (
	trustFolderLabel = "Trust this folder"
	trustParentLabel = "Trust the parent folder"
	trustNotNowLabel = "Not now"
)

// askTrust asks once per connection whether to trust the workspace, when its settings
// were skipped for want of trust.
func (s *Server) askTrust(tb *toolbox.Toolbox) {
	u := tb.Untrusted()
	if u == nil {
		return
	}
	s.trustAsk.once.Do(func() {
		prompt := fmt.Sprintf("The workspace %s has settings that run commands or loosen consent, which agentls ignores until you trust the folder:\n", u.Root)
		for _, item := range u.Ignored {
			prompt += "  - " + item + "\n"
		}
		prompt += "Only trust folders whose contents you trust: their settings can start programs."
		d := confirm.Details{
			Type: confirm.TypeInfo, Title: "Trust this folder?", Prompt: prompt,
			Choices: confirm.WithIDs([]confirm.Choice{
				{Outcome: confirm.ProceedOnce, Label: trustFolderLabel},
				{Outcome: confirm.ProceedAlways, Label: trustParentLabel},
				{Outcome: confirm.Cancel, Label: trustNotNowLabel},
			}),
		}
		a, err := s.Ask(s.ctx, confirm.Request{ID: fmt.Sprintf("trust-%d", s.seq.Add(1)), ToolName: "agentls", Details: d})
		if err == nil {
			a, err = a.Resolve(d)
		}
		var scope toolbox.TrustScope
		switch {
		case err != nil:
			s.log.Info("trust not granted", "root", u.Root, "reason", err)
		case a.Outcome == confirm.ProceedOnce:
			scope = toolbox.TrustFolder
		case a.Outcome == confirm.ProceedAlways:
			scope = toolbox.TrustParent
		default:
			s.log.Info("trust not granted for this session", "root", u.Root)
		}
		if scope == "" {
			return
		}
		res, err := s.setTrust(scope)
		if err != nil {
			s.log.Error("trusting the folder", "err", err)
			s.tell(protocol.MessageTypeError, fmt.Sprintf("agentls: %v", err))
			return
		}
		s.tell(protocol.MessageTypeInfo, "agentls: "+res.Message)
	})
}

// trustArgs are the arguments of agentls.trust.
type trustArgs struct {
	// Scope is "folder", "parent" or "revoke".
	Scope toolbox.TrustScope `json:"scope"`
}

// trust records the user's trust in the workspace (agentls.trust).
func (c *commandHandler) trust(_ context.Context, d deps, a trustArgs) (toolbox.TrustChange, error) {
	switch a.Scope {
	case toolbox.TrustFolder, toolbox.TrustParent, toolbox.TrustRevoke:
	default:
		return toolbox.TrustChange{}, invalidArgs(d.callee, `scope %q: want "folder", "parent" or "revoke"`, a.Scope)
	}
	res, err := c.s.setTrust(a.Scope)
	if err != nil {
		return toolbox.TrustChange{}, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	return res, nil
}

// setTrust records the user's trust in the workspace (toolbox.SetTrust) and loads the
// external tools the settings now allow.
func (s *Server) setTrust(scope toolbox.TrustScope) (toolbox.TrustChange, error) {
	_, _, tb := s.state()
	if tb == nil {
		return toolbox.TrustChange{}, errors.New("no workspace yet")
	}
	res, r, err := tb.SetTrust(scope)
	if err != nil {
		return res, err
	}
	// The workspace's settings, now read or now ignored, may set another mode.
	s.announceMode()
	if r.External {
		s.loadExternal(s.currentHost())
	}
	return res, nil
}

// discoverTools re-runs the discovery command and returns the tools it found.
func (c *commandHandler) discoverTools(ctx context.Context, d deps, _ struct{}) ([]tools.Info, error) {
	if !c.s.externalAllowed() {
		return []tools.Info{}, nil
	}
	infos, err := d.toolbox.Discover(ctx)
	if err != nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	if infos == nil {
		infos = []tools.Info{}
	}
	return infos, nil
}

// mcpStatus returns the status of each MCP server.
func (c *commandHandler) mcpStatus(_ context.Context, d deps, _ struct{}) ([]toolbox.MCPStatus, error) {
	return d.toolbox.MCPStatuses(), nil
}

// promptInfo is an entry of agentls.listPrompts: an MCP server's prompt, or a custom
// command (Command set, Server empty).
type promptInfo struct {
	toolbox.MCPPrompt
	// Command is the slash command of a custom command ("/git:commit"): a prompt that
	// starts with it runs the command, its arguments the rest of the prompt.
	Command string `json:"command,omitempty"`
}

// customArg is the one argument of a custom command: the text after its name.
const customArg = "args"

// listPrompts returns the custom commands, then the prompts of the connected MCP
// servers.
func (c *commandHandler) listPrompts(ctx context.Context, d deps, _ struct{}) ([]promptInfo, error) {
	out := []promptInfo{}
	for _, cmd := range d.host.Commands() {
		out = append(out, promptInfo{Command: "/" + cmd.Name, MCPPrompt: toolbox.MCPPrompt{
			Name: cmd.Name, Description: cmd.Description,
			Arguments: []mcp.PromptArgument{{Name: customArg, Description: "the text after the command ({{args}})"}},
		}})
	}
	prompts, err := d.toolbox.MCPPrompts(ctx)
	if err != nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	for _, p := range prompts {
		out = append(out, promptInfo{MCPPrompt: p})
	}
	return out, nil
}

// runPromptArgs are the arguments of agentls.runPrompt.
type runPromptArgs struct {
	Server    string            `json:"server"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
	// Session continues a session, as in agentls.prompt.
	Session string `json:"session"`
	// Context is text the model gets after the rendered prompt (an extension): what
	// the editor attaches to the command line, such as the files it mentions.
	Context string `json:"context"`
}

// withContext is the text of an MCP prompt sent to the model: the rendered prompt,
// then the editor's context after a blank line.
func withContext(rendered, context string) string {
	context = strings.TrimLeft(context, "\r\n")
	if strings.TrimSpace(context) == "" {
		return rendered
	}
	return strings.TrimRight(rendered, "\r\n") + "\n\n" + context
}

// runPrompt renders an MCP prompt and sends it to the agent as agentls.prompt would.
func (c *commandHandler) runPrompt(ctx context.Context, d deps, a runPromptArgs) (promptResult, error) {
	if a.Server == "" && slices.ContainsFunc(d.host.Commands(), func(c settings.Command) bool { return c.Name == a.Name }) {
		// A custom command: sent as its command line, which the session expands.
		line := "/" + a.Name
		if args := a.Arguments[customArg]; args != "" {
			line += " " + args
		}
		return c.prompt(ctx, d, promptArgs{Prompt: withContext(line, a.Context), Session: a.Session})
	}
	if a.Server == "" || a.Name == "" {
		return promptResult{}, invalidArgs(d.callee, "want the prompt's server and name, or a custom command's name")
	}
	text, err := d.toolbox.RenderMCPPrompt(ctx, a.Server, a.Name, a.Arguments)
	if err != nil {
		return promptResult{}, jsonrpc2.Errorf(codeRequestFailed, "%v", err)
	}
	return c.prompt(ctx, d, promptArgs{Prompt: withContext(text, a.Context), Session: a.Session})
}

// tell shows the user a message with window/showMessage.
func (s *Server) tell(typ protocol.MessageType, message string) {
	s.send("window/showMessage", protocol.ShowMessageParams{Type: typ, Message: message})
}
