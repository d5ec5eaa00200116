// Package session is the agent side of agentls: the tool system of a workspace as a
// session sees it (Toolbox, with its external tools in external.go) and the agent loop
// that drives it from a model (Session: agent.go, with its history, compression, loop
// detection, system instruction, memory files and persistence in files of those names).
package toolbox

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/hooks"
	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/builtin"
	"github.com/agentls/agentls/tools/mcp"
	"github.com/agentls/agentls/tools/search"
	"github.com/agentls/agentls/tools/shell"
	"github.com/agentls/agentls/tools/todos"
	"github.com/agentls/agentls/tools/web"
	"github.com/agentls/agentls/trust"
	"github.com/agentls/agentls/workspace"
)

// Options say where a Toolbox works and with which settings.
type Options struct {
	// Roots are the workspace roots; the first holds the workspace settings files.
	Roots []string
	// ConfigDir is the user's configuration directory (settings.ConfigDir by default).
	ConfigDir string
	// Mode overrides the settings' approval mode when not empty.
	Mode string
	// Overrides are settings that count as the user's own, such as an editor's
	// initializationOptions: they are merged over the user's settings file
	// (settings.LoadWith), so the workspace's settings files can still only tighten
	// them.
	Overrides settings.Settings
	// Tool, when set, sees every built-in tool before it is registered, and returns the
	// tool to register in its place (itself, or a wrapper of it), or nil to leave it
	// out. A front end uses it to adapt a tool to itself.
	Tool func(tools.Tool) tools.Tool
	// Extra makes tools of the layer above (the session core's invoke_agent) for the
	// settings of a new registry; they are registered with the built-in tools and
	// adapted by Tool as they are. A change of the settings' agents makes a new
	// registry.
	Extra func(settings.Settings) []tools.Tool
	// CheckRoots refuses (with a *RootError) roots after the first that the user
	// cannot read, or that lie in a path the sandbox keeps from commands (the user's
	// keys, agentls's configuration, tools.sandbox.hiddenPaths), which a root there would
	// open to them: for roots a client names, such as ACP's additionalDirectories.
	CheckRoots bool
	// NoteUnsaved says that the front end's editor may leave the agent's edits in its
	// buffers unsaved: run_shell_command's results then name those still unsaved.
	NoteUnsaved bool
	// OnTodos is called whenever write_todos changes the workspace's own todo list: the
	// list of calls that belong to no session's list (see WithTodos).
	OnTodos func([]todos.Item)
	// OnMCPStatus is called whenever an MCP server's status changes.
	OnMCPStatus func(mcp.ServerStatus)
	// MCPAuthorize shows a person an MCP server's OAuth authorization page (see
	// mcp.Options.Authorize); nil means nobody can be asked.
	MCPAuthorize mcp.AuthorizeFunc
	// MCPElicit asks the person an MCP server's questions; nil declines them.
	MCPElicit mcp.Elicitor
	// MCPTokenDir is where MCP OAuth tokens are kept; empty means mcp.DefaultTokenDir.
	MCPTokenDir string
	// GeminiDir is Gemini CLI's user directory, whose settings are read for the keys
	// both share; empty means ~/.gemini.
	GeminiDir string
	// SandboxHelper is the program that contains commands (sandbox.Helper); empty
	// means sandbox.Helper's, which is agentls itself or the agentls-sandbox beside it,
	// and none in a test binary.
	SandboxHelper string
	// Metrics, when set, receive the metrics of every call of the toolbox's
	// schedulers: the process's, shared by its toolboxes. Nil gives the toolbox one of
	// its own.
	Metrics *tools.Metrics
	Logger  *slog.Logger
}

// Toolbox is the tool system of one workspace: the workspace itself, the built-in
// tools and the external ones, and the configuration they run with (Config). Front ends
// build schedulers over it.
type Toolbox struct {
	Workspace *workspace.Workspace
	Builtins  *builtin.Set
	ConfigDir string
	Logger    *slog.Logger
	// Metrics are the tool metrics of every scheduler built over the toolbox.
	Metrics *tools.Metrics

	tool      func(tools.Tool) tools.Tool
	extra     func(settings.Settings) []tools.Tool
	geminiDir string
	// helper is the sandbox helper program, machine what this machine supports (probed
	// once, in New).
	helper   string
	machine  sandbox.Machine
	onStatus func(mcp.ServerStatus)
	mcpOpts  mcp.Options // Authorize, Elicit and TokenDir of every MCP manager

	// cfg is the configuration in force. It is swapped whole, under mu (publishLocked),
	// so that no change of the registry is lost to another made meanwhile.
	cfg atomic.Pointer[Config]
	// reconfigure serialises Reconfigure and SetTrust, which read files without
	// holding mu, and guards overrides, the front end's settings in force.
	reconfigure sync.Mutex
	overrides   settings.Settings

	// mu guards the external tool sources, and the swapping of cfg (MCP servers report
	// new tools from their own goroutines).
	mu sync.Mutex
	// closed is set by Close: no external tool source starts after it.
	closed     bool
	discovered []tools.Tool
	mcp        *mcp.Manager
	logged     map[string]bool

	// saving serialises SaveApproval, so that two answers saved at once both land in
	// the file rather than one overwriting the other.
	saving sync.Mutex

	// addonsDone is closed once the Gemini CLI setup (extensions, custom commands,
	// skills), read after New returns, is in the Config; addonsIn, guarded by
	// reconfigure, says that a Config with it was published (by that read, or by a
	// Reconfigure, which reads it itself).
	addonsDone chan struct{}
	addonsIn   bool
}

// Config is the toolbox's configuration at one time: the merged settings, the user's
// trust in the workspace, the consent policy and the tool registry. A Config does not
// change once published, nor does its Registry: a change (Reconfigure, SetMode, the
// external tools as they load) makes a new Config, with a new Registry or Policy where
// those change, and swaps it in, so that a reader takes one with Toolbox.Config and sees
// a consistent whole without a lock, and a scheduler built over one keeps it. (The
// Policy's "always" answers, and its switch to auto_edit on an edit's "always", still
// change it in place.)
type Config struct {
	Settings settings.Settings
	// Trust is the user's trust in the first root, as decided when the settings were
	// read: only a trusted workspace's settings may loosen consent.
	Trust    trust.Decision
	Policy   *confirm.Policy
	Registry *tools.Registry
	// Sandbox is what contains the commands run_shell_command and the discovered tools
	// run, from the settings' tools.sandbox.
	Sandbox *sandbox.Sandbox
	// Hooks runs the settings' hooks, contained by Sandbox; nil when there are none.
	// HookErrors say which hooks of the settings were left out and why.
	Hooks      *hooks.Runner
	HookErrors error
	// untrusted is what of the workspace's settings was skipped for want of trust.
	untrusted untrusted
}

// Config returns the configuration in force.
func (tb *Toolbox) Config() *Config { return tb.cfg.Load() }

// New loads the settings for o.Roots, with o.Overrides, and builds the tool system.
func New(o Options) (*Toolbox, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ws, err := workspace.New(o.Roots...)
	if err != nil {
		return nil, err
	}
	configDir := o.ConfigDir
	if configDir == "" {
		if configDir, err = settings.ConfigDir(); err != nil {
			return nil, err
		}
	}
	metrics := o.Metrics
	if metrics == nil {
		metrics = tools.NewMetrics()
	}
	tb := &Toolbox{Workspace: ws, ConfigDir: configDir, Logger: logger, Metrics: metrics, tool: o.Tool, extra: o.Extra, addonsDone: make(chan struct{}),
		geminiDir: o.GeminiDir, onStatus: o.OnMCPStatus, logged: make(map[string]bool), overrides: o.Overrides,
		mcpOpts: mcp.Options{Authorize: o.MCPAuthorize, Elicit: o.MCPElicit, TokenDir: o.MCPTokenDir}}
	if tb.mcpOpts.TokenDir == "" {
		// Without a home the tokens live in memory only.
		tb.mcpOpts.TokenDir, _ = mcp.DefaultTokenDir()
	}
	tb.helper = o.SandboxHelper
	if tb.helper == "" {
		tb.helper = sandbox.Helper()
	}
	// The machine is probed (it starts the helper) while the settings, commands, skills
	// and extensions are read: neither needs the other, and both take milliseconds.
	probed := make(chan sandbox.Machine, 1)
	go func() {
		if tb.helper == "" {
			probed <- sandbox.Machine{OS: runtime.GOOS}
			return
		}
		probed <- sandbox.Probe(tb.helper)
	}()
	s, decision, untrusted, err := tb.load(o.Overrides, true)
	tb.machine = <-probed
	if err != nil {
		return nil, err
	}
	box, err := tb.newSandbox(s)
	if err != nil {
		return nil, err
	}
	if o.CheckRoots {
		if err := checkRoots(ws.Roots()[1:], box); err != nil {
			return nil, err
		}
	}
	mode := o.Mode
	if mode == "" {
		mode = s.ApprovalMode
	}
	m, err := confirm.ParseMode(mode)
	if err != nil {
		return nil, err
	}
	policy, err := confirm.NewPolicy(m, s.Policy.Rules, ws.Roots)
	if err != nil {
		return nil, fmt.Errorf("policy rules in settings: %w", err)
	}
	policy = policy.WithAutoAllowContained(box.Status().AutoAllow)
	timeout, err := s.ShellTimeout()
	if err != nil {
		return nil, err
	}
	searchOpts := search.Options{}
	if !useRipgrep(s) {
		searchOpts.Ripgrep = "none"
	}
	tb.Builtins = builtin.New(builtin.Options{
		Workspace: ws,
		ConfigDir: configDir,
		Search:    searchOpts,
		Shell: shell.Options{NoOutputTimeout: timeout, HideEnv: tb.hiddenEnv, NoteUnsaved: o.NoteUnsaved,
			Sandbox: func() *sandbox.Sandbox { return tb.Config().Sandbox }},
		OnTodos: o.OnTodos,
		Web:     web.Options{AllowPrivate: s.Web.AllowPrivateAddresses, Logger: logger},
	})
	runner, hookErrs := tb.newHooks(s, box)
	tb.cfg.Store(&Config{Settings: s, Trust: decision, Policy: policy, Registry: tb.newRegistry(s), Sandbox: box,
		Hooks: runner, HookErrors: hookErrs, untrusted: untrusted})
	go tb.readAddons(decision.Trusted)
	return tb, nil
}

// readAddons reads the Gemini CLI setup (extensions, custom commands, skills) after
// New, off the path of a front end's start (50 commands, 20 skills and 5 extensions
// are a hundred files), and publishes a Config with it, unless a Reconfigure read it
// first. WaitAddons waits for it.
func (tb *Toolbox) readAddons(trusted bool) {
	defer close(tb.addonsDone)
	a := settings.ReadAddons(tb.ConfigDir, tb.Workspace.Roots()[0], settings.Options{Trusted: trusted, GeminiDir: tb.geminiDir})
	tb.reconfigure.Lock()
	defer tb.reconfigure.Unlock()
	if tb.addonsIn {
		return
	}
	tb.addonsIn = true
	for _, why := range a.Ignored() {
		tb.logOnce("ignored setting", "setting", why)
	}
	// The extensions' policy rules and hooks: a new policy (nothing has asked it
	// anything yet, see WaitAddons) and a new hook runner when they bring any. The
	// settings, the policy and the sandbox change only under tb.reconfigure, held.
	cur := tb.Config()
	merged := a.Merge(cur.Settings)
	policy := cur.Policy
	if len(merged.Policy.Rules) != len(cur.Settings.Policy.Rules) {
		p, err := confirm.NewPolicy(cur.Policy.Mode(), merged.Policy.Rules, tb.Workspace.Roots)
		if err != nil {
			// readPolicies checked each rule: this cannot happen, and must not pass silently.
			tb.logOnce("extension policies left out", "err", err.Error())
		} else {
			policy = p.WithAutoAllowContained(cur.Policy.AutoAllowContained())
		}
	}
	runner, hookErrs := cur.Hooks, cur.HookErrors
	if !reflect.DeepEqual(merged.Hooks, cur.Settings.Hooks) {
		runner, hookErrs = tb.newHooks(merged, cur.Sandbox)
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	// Read again under mu: the external tools may have published a registry since.
	next := *tb.Config()
	next.Settings, next.Policy, next.Hooks, next.HookErrors = merged, policy, runner, hookErrs
	next.untrusted.ignored = append(slices.Clone(next.untrusted.ignored), a.Untrusted()...)
	next.Registry = tb.newRegistry(next.Settings)
	tb.cfg.Store(&next)
}

// WaitAddons waits until the Gemini CLI setup (extensions, custom commands, skills) is
// in the Config, which New leaves to a goroutine: what lists or runs commands, opens a
// session or starts the MCP servers waits for it first.
func (tb *Toolbox) WaitAddons() { <-tb.addonsDone }

// RootError is the error of a workspace root a toolbox refuses (Options.CheckRoots).
type RootError struct {
	Root   string
	Reason string
}

func (e *RootError) Error() string {
	return fmt.Sprintf("the folder %s cannot be a workspace root: %s", e.Root, e.Reason)
}

// checkRoots refuses roots the user cannot read and roots that lie in what box keeps
// from commands.
func checkRoots(roots []string, box *sandbox.Sandbox) error {
	for _, r := range roots {
		f, err := os.Open(r)
		if err == nil {
			_, err = f.Readdirnames(1)
			f.Close()
			if errors.Is(err, io.EOF) {
				err = nil
			}
		}
		if err != nil {
			return &RootError{Root: r, Reason: fmt.Sprintf("it cannot be read (%v)", errors.Unwrap(err))}
		}
		if h := box.Secret(r); h != "" {
			return &RootError{Root: r, Reason: fmt.Sprintf("it lies in %s, which agentls keeps from commands "+
				"(the user's keys, agentls's configuration, or tools.sandbox.hiddenPaths)", h)}
		}
	}
	return nil
}

// newSandbox returns the sandbox of settings s on this machine.
func (tb *Toolbox) newSandbox(s settings.Settings) (*sandbox.Sandbox, error) {
	dirs := []string{tb.ConfigDir}
	if tb.geminiDir != "" {
		dirs = append(dirs, tb.geminiDir)
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".gemini"))
	}
	return sandbox.New(tb.machine, s.Tools.Sandbox.Config(), sandbox.Options{
		Roots: tb.Workspace.Roots(), ConfigDirs: dirs, Helper: tb.helper})
}

// newHooks returns the runner of the hooks of settings s, contained by box, run with
// run_shell_command's environment in the first root, and what was wrong with them.
func (tb *Toolbox) newHooks(s settings.Settings, box *sandbox.Sandbox) (*hooks.Runner, error) {
	r, err := hooks.New(hooks.Options{
		Settings: s,
		Sandbox:  box,
		Environ:  func() []string { return shell.Environ(tb.hiddenEnv()) },
		Dir:      tb.Workspace.Roots()[0],
		Logger:   tb.Logger,
	})
	if err != nil {
		tb.logOnce("hooks left out", "err", err.Error())
	}
	return r, err
}

// load decides the user's trust in the first root from the trust file in the
// configuration directory, then reads the user's and the workspace's settings files
// with overrides merged in as user settings (and the Gemini CLI setup, unless
// deferAddons). It returns what of the workspace's
// settings was skipped for want of trust. A damaged trust file is an error: it must neither trust a
// folder nor be silently passed over.
func (tb *Toolbox) load(overrides settings.Settings, deferAddons bool) (settings.Settings, trust.Decision, untrusted, error) {
	store, err := trust.Load(tb.ConfigDir)
	if err != nil {
		return settings.Settings{}, trust.Decision{}, untrusted{}, err
	}
	root := tb.Workspace.Roots()[0]
	decision := store.Decide(root)
	loaded, err := settings.LoadWith(tb.ConfigDir, root, settings.Options{
		Overrides: overrides, Trusted: decision.Trusted, GeminiDir: tb.geminiDir, DeferAddons: deferAddons})
	if err != nil {
		return settings.Settings{}, trust.Decision{}, untrusted{}, err
	}
	tb.Logger.Info("workspace trust", "root", root, "trusted", decision.Trusted, "source", decision.Source)
	for _, why := range loaded.Ignored {
		tb.logOnce("ignored setting", "setting", why)
	}
	return loaded.Settings, decision, untrusted{loaded.UntrustedTools, loaded.Untrusted}, nil
}

// newRegistry returns a registry of the built-in tools (as Options.Tool adapts
// them) and the external tools loaded so far, with the tool selection of s. tb.mu is
// held or not yet needed.
func (tb *Toolbox) newRegistry(s settings.Settings) *tools.Registry {
	reg := tools.NewRegistry(tb.Logger, tools.Filter{Core: s.Core(), Exclude: s.Exclude()})
	builtins := append(tb.Builtins.Tools(), tb.extraTools(s)...)
	if len(s.Skills) > 0 {
		// Declared only when there are skills: it costs every request its declaration.
		builtins = append(builtins, &skillTool{skills: s.Skills})
	}
	for _, t := range builtins {
		if t.Info().Name == todos.Name {
			t = &sessionTodos{Tool: t}
		}
		if tb.tool != nil {
			if t = tb.tool(t); t == nil {
				continue
			}
		}
		reg.Register(t)
	}
	for _, t := range tb.external() {
		reg.Register(t)
	}
	return reg
}

// extraTools returns the tools of Options.Extra for s.
func (tb *Toolbox) extraTools(s settings.Settings) []tools.Tool {
	if tb.extra == nil {
		return nil
	}
	return tb.extra(s)
}

func useRipgrep(s settings.Settings) bool { return s.Tools.Ripgrep == nil || *s.Tools.Ripgrep }

// Reconfiguration says what Reconfigure changed.
type Reconfiguration struct {
	// Policy reports a new consent policy: the policy rules changed, and the answers
	// "always" given so far are forgotten. Registry reports a new registry: the tool
	// selection changed. Schedulers built before either keep the old one.
	Policy, Registry bool
	// Mode reports that the approval mode changed to the settings' new one.
	Mode bool
	// Restart names the settings that changed but take effect only in a new Toolbox.
	Restart []string
	// External reports that the MCP servers or the discovery command changed: the front
	// end loads them again (session.Host.StartExternalInBackground: it connects servers).
	External bool
}

// Reconfigure reads the settings files again, with overrides in place of the overrides
// given before, and swaps in a new Config with what changed: the approval mode when the
// settings' approval mode changed (a mode set on the policy since stays otherwise), a
// new policy when the rules changed (in the mode in force), a new registry when the
// tool selection changed. The shell's inactivity timeout and the ripgrep choice take
// effect only in a new Toolbox. On an error nothing changes.
func (tb *Toolbox) Reconfigure(overrides settings.Settings) (Reconfiguration, error) {
	tb.reconfigure.Lock()
	defer tb.reconfigure.Unlock()
	return tb.reconfigureLocked(overrides)
}

// reconfigureLocked is Reconfigure; tb.reconfigure is held.
func (tb *Toolbox) reconfigureLocked(overrides settings.Settings) (Reconfiguration, error) {
	var r Reconfiguration
	next, decision, untrusted, err := tb.load(overrides, false)
	if err != nil {
		return r, err
	}
	tb.addonsIn = true
	cur := tb.Config()
	prev := cur.Settings
	mode := cur.Policy.Mode()
	if next.ApprovalMode != prev.ApprovalMode {
		if mode, err = confirm.ParseMode(next.ApprovalMode); err != nil {
			return r, fmt.Errorf("approvalMode: %w", err)
		}
		r.Mode = true
	}
	box, err := tb.newSandbox(next)
	if err != nil {
		return r, err
	}
	var policy *confirm.Policy
	if !reflect.DeepEqual(prev.Policy.Rules, next.Policy.Rules) {
		if policy, err = confirm.NewPolicy(mode, next.Policy.Rules, tb.Workspace.Roots); err != nil {
			return r, fmt.Errorf("policy rules in settings: %w", err)
		}
		policy = policy.WithAutoAllowContained(box.Status().AutoAllow)
	} else if box.Status().AutoAllow != cur.Policy.AutoAllowContained() {
		policy = cur.Policy.WithAutoAllowContained(box.Status().AutoAllow)
		if r.Mode {
			policy = policy.WithMode(mode)
		}
	}
	timeout, err := next.ShellTimeout()
	if err != nil {
		return r, err
	}
	if prevTimeout, _ := prev.ShellTimeout(); timeout != prevTimeout {
		r.Restart = append(r.Restart, "tools.shell.inactivityTimeout")
	}
	if useRipgrep(prev) != useRipgrep(next) {
		r.Restart = append(r.Restart, "tools.useRipgrep")
	}

	prevDiscover, prevCall := prev.Discovery()
	nextDiscover, nextCall := next.Discovery()
	r.External = prevDiscover != nextDiscover || prevCall != nextCall ||
		!reflect.DeepEqual(prev.MCPServers, next.MCPServers)

	runner, hookErrs := tb.newHooks(next, box)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	// Read again under mu: the external tools may have published a registry since.
	cur = tb.Config()
	cfg := &Config{Settings: next, Trust: decision, Policy: cur.Policy, Registry: cur.Registry, Sandbox: box,
		Hooks: runner, HookErrors: hookErrs, untrusted: untrusted}
	switch {
	case policy != nil:
		cfg.Policy, r.Policy = policy, true
	case r.Mode:
		// A new policy, not the old one changed: the old Config stays as it was.
		cfg.Policy = cur.Policy.WithMode(mode)
	}
	if !slices.Equal(prev.Core(), next.Core()) || !slices.Equal(prev.Exclude(), next.Exclude()) ||
		!reflect.DeepEqual(prev.Agents, next.Agents) || !reflect.DeepEqual(prev.Skills, next.Skills) {
		cfg.Registry, r.Registry = tb.newRegistry(next), true
	}
	tb.cfg.Store(cfg)
	tb.overrides = overrides
	return r, nil
}

// SetMode sets the workspace's approval mode, for the front end's mode switch: it
// publishes a Config with a policy in mode m (which keeps the "always" answers).
func (tb *Toolbox) SetMode(m confirm.Mode) {
	tb.reconfigure.Lock()
	defer tb.reconfigure.Unlock()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	next := *tb.Config()
	next.Policy = next.Policy.WithMode(m)
	tb.cfg.Store(&next)
}

// publishLocked publishes a Config whose registry is a clone of the one in force as
// change leaves it: whoever holds the Config in force keeps it unchanged. tb.mu is
// held.
func (tb *Toolbox) publishLocked(change func(*tools.Registry)) {
	next := *tb.Config()
	next.Registry = next.Registry.Clone()
	change(next.Registry)
	tb.cfg.Store(&next)
}

// isClosed reports whether Close was called.
func (tb *Toolbox) isClosed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.closed
}

// Scheduler returns a scheduler over the toolbox that decides with policy (nil: the
// toolbox's), asks through asker and reports to observe (either may be nil). Its calls
// are counted in the toolbox's Metrics and in metrics (a session's, say). Every
// scheduler of the toolbox shares the workspace's path locks, so that edits of one file
// by two sessions, or a session and the editor's runTool, follow one another instead of
// losing one.
func (tb *Toolbox) Scheduler(policy tools.Policy, asker confirm.Asker, observe tools.Observer, metrics ...*tools.Metrics) *tools.Scheduler {
	cfg := tb.Config()
	if policy == nil {
		policy = cfg.Policy
	}
	return tb.SchedulerOver(cfg.Registry, policy, asker, observe, metrics...)
}

// SchedulerOver is Scheduler over reg, a registry of the toolbox's with tools of one
// session's added (its google_web_search), and with policy, which is not nil.
func (tb *Toolbox) SchedulerOver(reg *tools.Registry, policy tools.Policy, asker confirm.Asker, observe tools.Observer, metrics ...*tools.Metrics) *tools.Scheduler {
	return tb.SchedulerWith(reg, policy, asker, observe, nil, metrics...)
}

// SchedulerWith is SchedulerOver with the user's tool hooks (tools.Options.Hooks): a
// model session's scheduler.
func (tb *Toolbox) SchedulerWith(reg *tools.Registry, policy tools.Policy, asker confirm.Asker, observe tools.Observer, hooks tools.ToolHooks, metrics ...*tools.Metrics) *tools.Scheduler {
	return tools.NewScheduler(tools.Options{
		Hooks:    hooks,
		Registry: reg,
		Policy:   policy,
		Asker:    asker,
		Observe:  observe,
		Saver:    tb,
		Logger:   tb.Logger,
		Locks:    tb.Workspace,
		Metrics:  append([]*tools.Metrics{tb.Metrics}, metrics...),
	})
}

// ErrClosed is the error of starting external tools in a closed Toolbox.
var ErrClosed = errors.New("the toolbox is closed")

// Close stops what the tools left running in the background and disconnects the MCP
// servers. It is final: the toolbox starts no MCP server and registers no external
// tool after it (StartExternal and Discover return ErrClosed).
func (tb *Toolbox) Close() error {
	tb.mu.Lock()
	tb.closed = true
	m := tb.mcp
	tb.mcp = nil
	tb.mu.Unlock()
	err := tb.Builtins.Close()
	if m != nil {
		err = errors.Join(err, m.Close())
	}
	return err
}

// SaveApproval saves the rule that the "always" answer a to req stands for (see
// confirm.Policy.RuleFor) in the settings file a.Persist names: the user's, or the
// workspace's when the user trusts it. It returns what to tell the person: where the
// rule went, or, as an error, why nothing was written (an untrusted workspace, an
// answer that cannot be saved, a settings file that cannot be edited). The answer
// holds for the session either way. An answer without Persist saves nothing.
func (tb *Toolbox) SaveApproval(req confirm.Request, a confirm.Answer) (string, error) {
	if a.Persist == "" {
		return "", nil
	}
	if err := a.Check(req.Details); err != nil {
		return "", fmt.Errorf("the approval was not saved: %w", err)
	}
	cfg := tb.Config()
	d := req.Details
	rule, err := cfg.Policy.RuleFor(confirm.Call{Tool: req.ToolName, Server: d.Server, Details: &d}, a.Outcome)
	if err != nil {
		return "", fmt.Errorf("the approval was not saved: %w", err)
	}
	var file string
	switch a.Persist {
	case confirm.ScopeUser:
		for _, prefix := range rule.CommandPrefix {
			if confirm.RunByPath(prefix) {
				// ./build.sh in this repository is not ./build.sh in the next one: a
				// rule of the user's, which holds in every workspace, would run the
				// next one's unseen.
				return "", fmt.Errorf("the approval was not saved in your settings: %q is run by its path, which means another program in every other workspace; it holds for this session (a trusted workspace's settings can keep it)", prefix)
			}
		}
		file = settings.UserFile(tb.ConfigDir)
	case confirm.ScopeWorkspace:
		root := tb.Workspace.Roots()[0]
		if !cfg.Trust.Trusted {
			// An untrusted workspace's allow rules are never read, and its files are
			// the repository's, not the user's: nothing is written.
			return "", fmt.Errorf("the approval was not saved: the workspace %s is not trusted, and its settings could not allow anything (to trust it, run: agentls trust %s); it holds for this session", root, root)
		}
		file = settings.WorkspaceFile(root)
		if err := insideRoot(root, file); err != nil {
			return "", fmt.Errorf("the approval was not saved: %w; it holds for this session", err)
		}
	}
	tb.saving.Lock()
	err = settings.AddRule(file, rule)
	tb.saving.Unlock()
	if err != nil {
		return "", fmt.Errorf("the approval was not saved: %w", err)
	}
	tb.Logger.Info("approval saved", "file", file, "tool", rule.ToolName, "commandPrefix", rule.CommandPrefix)
	return fmt.Sprintf("Saved in %s: %s. `agentls rules` lists saved rules.", file, DescribeRule(rule)), nil
}

// insideRoot returns an error unless file, with every symbolic link on its way
// resolved, is inside root: a repository's settings file linked to one outside it (the
// user's own, or any other) must not be written as the workspace's.
func insideRoot(root, file string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	// The deepest of file and its folders that exists decides where a write goes.
	p := file
	for {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if !within(realRoot, real) {
		return fmt.Errorf("%s leads outside the workspace (to %s)", p, real)
	}
	return nil
}

// DescribeRule says in one line what a policy rule does.
func DescribeRule(r confirm.Rule) string {
	s := fmt.Sprintf("%s %s", r.Decision, r.ToolName)
	if r.ToolName == "" {
		s = fmt.Sprintf("%s every tool", r.Decision)
	}
	if len(r.CommandPrefix) > 0 {
		s += fmt.Sprintf(" for commands starting with %q", r.CommandPrefix)
	}
	if r.CommandRegex != "" {
		s += fmt.Sprintf(" for commands matching %q", r.CommandRegex)
	}
	if r.ArgsPattern != "" {
		s += fmt.Sprintf(" with arguments matching %q", r.ArgsPattern)
	}
	if r.Priority != 0 {
		s += fmt.Sprintf(" (priority %d)", r.Priority)
	}
	return s
}
