// Package session is the agent side of agentls: the tool system of a workspace as one
// session sees it (Toolbox) and, later, the agent loop that drives it from a model.
package session

import (
	"fmt"
	"log/slog"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/builtin"
	"github.com/agentls/agentls/tools/search"
	"github.com/agentls/agentls/tools/shell"
	"github.com/agentls/agentls/tools/todos"
	"github.com/agentls/agentls/workspace"
)

// ToolboxOptions say where a Toolbox works and with which settings.
type ToolboxOptions struct {
	// Roots are the workspace roots; the first holds the workspace settings files.
	Roots []string
	// ConfigDir is the user's configuration directory (settings.ConfigDir by default).
	ConfigDir string
	// Mode overrides the settings' approval mode when not empty.
	Mode string
	// OnTodos is called whenever write_todos changes the todo list.
	OnTodos func([]todos.Item)
	Logger  *slog.Logger
}

// Toolbox is the tool system of one workspace: the workspace itself, the merged settings,
// the registry with the built-in tools, and the consent policy. Front ends build
// schedulers over it.
type Toolbox struct {
	Workspace *workspace.Workspace
	Settings  settings.Settings
	Policy    *confirm.Policy
	Registry  *tools.Registry
	Builtins  *builtin.Set
	ConfigDir string
	Logger    *slog.Logger
}

// NewToolbox loads the settings for o.Roots and builds the tool system.
func NewToolbox(o ToolboxOptions) (*Toolbox, error) {
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
	loaded, err := settings.Load(configDir, ws.Roots()[0])
	if err != nil {
		return nil, err
	}
	for _, why := range loaded.Ignored {
		logger.Warn("ignored workspace setting", "setting", why)
	}
	s := loaded.Settings
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
	timeout, err := s.ShellTimeout()
	if err != nil {
		return nil, err
	}
	searchOpts := search.Options{}
	if s.Tools.Ripgrep != nil && !*s.Tools.Ripgrep {
		searchOpts.Ripgrep = "none"
	}
	tb := &Toolbox{Workspace: ws, Settings: s, Policy: policy, ConfigDir: configDir, Logger: logger}
	tb.Registry = tools.NewRegistry(logger, tools.Filter{Core: s.Core(), Exclude: s.Exclude()})
	tb.Builtins = builtin.New(builtin.Options{
		Workspace: ws,
		ConfigDir: configDir,
		Search:    searchOpts,
		Shell:     shell.Options{NoOutputTimeout: timeout},
		OnTodos:   o.OnTodos,
	})
	tb.Builtins.Register(tb.Registry)
	return tb, nil
}

// Scheduler returns a scheduler over the toolbox that asks through asker and reports to
// observe (either may be nil).
func (tb *Toolbox) Scheduler(asker confirm.Asker, observe tools.Observer) *tools.Scheduler {
	return tools.NewScheduler(tools.Options{
		Registry: tb.Registry,
		Policy:   tb.Policy,
		Asker:    asker,
		Observe:  observe,
		Logger:   tb.Logger,
	})
}

// Close stops what the tools left running in the background.
func (tb *Toolbox) Close() error { return tb.Builtins.Close() }
