package toolbox

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/discovered"
	"github.com/agentls/agentls/tools/mcp"
	"github.com/agentls/agentls/tools/web"
)

// Untrusted says what of the workspace's settings was skipped because the user has not
// trusted the folder — its tool sources among them — and how to trust it.
type Untrusted struct {
	Root string `json:"root"`
	// Skipped names each skipped tool source and its file, e.g. "mcpServers.db in
	// /repo/.agentls/settings.json".
	Skipped []string `json:"skipped"`
	// Ignored says, for every setting ignored for want of trust (tool sources, the
	// approval mode, allow rules, …), where it is and why.
	Ignored []string `json:"ignored"`
	// Hint says how to trust the folder.
	Hint string `json:"hint"`
}

// untrusted is what of the workspace's settings was skipped for want of trust.
type untrusted struct{ tools, ignored []string }

// Untrusted reports what of the workspace's settings was skipped for want of trust, or
// nil when nothing was.
func (tb *Toolbox) Untrusted() *Untrusted {
	tb.WaitAddons()
	u := tb.Config().untrusted
	if len(u.ignored) == 0 {
		return nil
	}
	root := tb.Workspace.Roots()[0]
	return &Untrusted{
		Root:    root,
		Skipped: slices.Clone(u.tools),
		Ignored: slices.Clone(u.ignored),
		Hint:    fmt.Sprintf("the folder is not trusted; to trust it, run: agentls trust %s", root),
	}
}

// StartExternal runs the discovery command and connects the MCP servers of the
// settings, in parallel, and registers their tools. It returns when every source has
// loaded or failed: a failure is logged and reported in the error, and never takes the
// built-in tools or the other sources down. Front ends that must not wait call it on a
// goroutine; the tools appear in the registry as each source loads. After Close it
// starts nothing and returns ErrClosed.
func (tb *Toolbox) StartExternal(ctx context.Context) error {
	if tb.isClosed() {
		return ErrClosed
	}
	// An extension's MCP servers are in the settings once the setup is read.
	select {
	case <-tb.addonsDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	configured := tb.Config().Settings.MCPServers
	servers := mcpServers(configured)
	errc := make(chan error, 1)
	go func() {
		_, err := tb.Discover(ctx)
		errc <- err
	}()
	mcpErr := tb.startMCP(ctx, servers)
	err := <-errc
	if errors.Is(mcpErr, ErrClosed) {
		return ErrClosed
	}
	return err
}

// startMCP replaces the MCP manager by one for servers and connects them.
func (tb *Toolbox) startMCP(ctx context.Context, servers map[string]mcp.ServerConfig) error {
	tb.mu.Lock()
	if tb.closed {
		tb.mu.Unlock()
		return ErrClosed
	}
	old := tb.mcp
	tb.mcp = nil
	tb.publishLocked(func(reg *tools.Registry) { reg.RemoveSource(tools.SourceMCP, "") })
	if len(servers) > 0 {
		opts := tb.mcpOpts
		opts.Servers, opts.Dir, opts.Logger = servers, tb.Workspace.Roots()[0], tb.Logger
		opts.OnTools, opts.OnStatus = tb.setMCPTools, tb.onMCPStatus
		tb.mcp = mcp.NewManager(opts)
	}
	m := tb.mcp
	tb.mu.Unlock()
	if old != nil {
		if err := old.Close(); err != nil {
			tb.Logger.Warn("closing MCP servers", "err", err)
		}
	}
	if m == nil {
		return nil
	}
	if err := m.Start(ctx); err != nil {
		tb.Logger.Warn("starting MCP servers", "err", err)
	}
	// The resource tools belong to no one server, so OnTools never brings them.
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.closed {
		// Closed while the servers started: Close closed m.
		return ErrClosed
	}
	tb.publishLocked(func(reg *tools.Registry) {
		for _, t := range m.Tools() {
			if t.Info().Server == "" {
				reg.Register(t)
			}
		}
	})
	return nil
}

// setMCPTools replaces the tools of one MCP server in the registry.
func (tb *Toolbox) setMCPTools(server string, ts []tools.Tool) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.closed {
		return
	}
	tb.publishLocked(func(reg *tools.Registry) {
		reg.RemoveSource(tools.SourceMCP, server)
		for _, t := range ts {
			reg.Register(t)
		}
	})
}

func (tb *Toolbox) onMCPStatus(st mcp.ServerStatus) {
	if st.State == mcp.StateError {
		tb.Logger.Warn("MCP server failed", "server", st.Name, "err", st.Error)
	}
	if tb.onStatus != nil {
		tb.onStatus(st)
	}
}

// MCPStatus is the status of one MCP server, as front ends show it.
type MCPStatus = mcp.ServerStatus

// MCPPrompt is a prompt an MCP server offers.
type MCPPrompt = mcp.PromptInfo

// MCPStatuses returns the status of each configured MCP server; empty, not nil, when
// the settings name none.
func (tb *Toolbox) MCPStatuses() []MCPStatus {
	out := []MCPStatus{}
	if m := tb.mcpManager(); m != nil {
		out = append(out, m.Statuses()...)
	}
	return out
}

// MCPPrompts returns the prompts of the connected MCP servers; empty, not nil, when
// there are none.
func (tb *Toolbox) MCPPrompts(ctx context.Context) ([]MCPPrompt, error) {
	out := []MCPPrompt{}
	if m := tb.mcpManager(); m != nil {
		ps, err := m.Prompts(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// RenderMCPPrompt returns the text of the MCP prompt name of server, rendered with args.
func (tb *Toolbox) RenderMCPPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	m := tb.mcpManager()
	if m == nil {
		return "", errors.New("no MCP servers are configured")
	}
	return m.GetPrompt(ctx, server, name, args)
}

// mcpServers converts the servers of the settings.
func mcpServers(configured map[string]settings.MCPServer) map[string]mcp.ServerConfig {
	servers := make(map[string]mcp.ServerConfig, len(configured))
	for name, c := range configured {
		servers[name] = mcp.ServerConfig(c)
	}
	return servers
}

// AuthorizeMCP runs the OAuth flow of the MCP server called name, as the person asked
// (agentls.mcpAuth): its browser step goes through Options.MCPAuthorize.
func (tb *Toolbox) AuthorizeMCP(ctx context.Context, name string) error {
	m := tb.mcpManager()
	if m == nil {
		return errors.New("no MCP servers are configured")
	}
	return m.Authorize(ctx, name)
}

// NewMCPManager returns a manager of the one MCP server of the settings called name,
// not started, whose OAuth flow may start by itself: for `agentls mcp auth` and
// `agentls mcp logout`. The caller closes it.
func (tb *Toolbox) NewMCPManager(name string) (*mcp.Manager, error) {
	tb.WaitAddons()
	c, ok := tb.Config().Settings.MCPServers[name]
	if !ok {
		return nil, fmt.Errorf("no MCP server is called %q in the settings", name)
	}
	opts := tb.mcpOpts
	opts.Servers = mcpServers(map[string]settings.MCPServer{name: c})
	opts.Dir, opts.Logger, opts.AutoAuthorize = tb.Workspace.Roots()[0], tb.Logger, true
	return mcp.NewManager(opts), nil
}

// mcpManager returns the manager of the MCP servers, or nil when the settings name none.
func (tb *Toolbox) mcpManager() *mcp.Manager {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.mcp
}

// Discover runs the settings' discovery command, if any, and replaces the previously
// discovered tools by what it found. Without a discovery command it removes them.
// After Close it runs nothing and returns ErrClosed.
func (tb *Toolbox) Discover(ctx context.Context) ([]tools.Info, error) {
	if tb.isClosed() {
		return nil, ErrClosed
	}
	discover, call := tb.Config().Settings.Discovery()
	var found []tools.Tool
	if discover != "" {
		var err error
		found, err = discovered.Discover(ctx, discovered.Options{
			DiscoveryCommand: discover,
			CallCommand:      call,
			Dir:              tb.Workspace.Roots()[0],
			Builtin:          tb.isBuiltin,
			Logger:           tb.Logger,
			HideEnv:          tb.hiddenEnv,
			Sandbox:          func() *sandbox.Sandbox { return tb.Config().Sandbox },
		})
		if err != nil {
			tb.Logger.Error("tool discovery failed; the built-in tools still work", "command", discover, "err", err)
			return nil, fmt.Errorf("tool discovery: %w", err)
		}
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.closed {
		return nil, ErrClosed
	}
	tb.discovered = found
	infos := make([]tools.Info, 0, len(found))
	tb.publishLocked(func(reg *tools.Registry) {
		reg.RemoveSource(tools.SourceDiscovered, "")
		for _, t := range found {
			reg.Register(t)
			infos = append(infos, t.Info())
		}
	})
	return infos, nil
}

func (tb *Toolbox) isBuiltin(name string) bool {
	extra := tb.extraTools(tb.Config().Settings)
	return slices.ContainsFunc(append(tb.Builtins.Tools(), extra...), func(t tools.Tool) bool { return t.Info().Name == name })
}

// external returns the tools added after the built-in set (the discovered and the MCP
// tools), for a new registry. tb.mu is held.
func (tb *Toolbox) external() []tools.Tool {
	out := slices.Clone(tb.discovered)
	if tb.mcp != nil {
		out = append(out, tb.mcp.Tools()...)
	}
	return out
}

// logOnce logs msg as a warning the first time this toolbox sees it: settings are read
// again on every configuration change, and a skipped setting is news only once.
func (tb *Toolbox) logOnce(msg string, args ...any) {
	key := msg + fmt.Sprint(args...)
	tb.mu.Lock()
	seen := tb.logged[key]
	tb.logged[key] = true
	tb.mu.Unlock()
	if !seen {
		tb.Logger.Warn(msg, args...)
	}
}

// Declarations returns the enabled tools as the model is told of them.
func (tb *Toolbox) Declarations() []tools.Declaration {
	return tb.Config().Registry.Declarations()
}

// SearchTool returns google_web_search answered by s, for one session's registry (a
// model's search belongs to its session), or nil when s is nil. Package session makes
// the Searcher of a model client that can ground its answers in web search
// (session.Searcher).
func (tb *Toolbox) SearchTool(s web.Searcher) tools.Tool {
	if s == nil {
		return nil
	}
	for _, t := range web.New(web.Options{Searcher: s, Logger: tb.Logger}).Tools() {
		if t.Info().Name == web.SearchName {
			return t
		}
	}
	return nil
}
