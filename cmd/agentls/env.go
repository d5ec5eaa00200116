package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/builtin"
	"github.com/agentls/agentls/tools/search"
	"github.com/agentls/agentls/tools/shell"
	"github.com/agentls/agentls/workspace"
)

// env is the tool system of one command-line invocation.
type env struct {
	ws       *workspace.Workspace
	policy   *confirm.Policy
	registry *tools.Registry
	builtins *builtin.Set
	logger   *slog.Logger
}

// newEnv loads the settings for the workspace at root and builds the registry and
// policy. mode overrides the settings' approval mode when not empty.
func newEnv(root, mode string, logger *slog.Logger) (*env, error) {
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		root = wd
	}
	ws, err := workspace.New(root)
	if err != nil {
		return nil, err
	}
	configDir, err := settings.ConfigDir()
	if err != nil {
		return nil, err
	}
	loaded, err := settings.Load(configDir, ws.Roots()[0])
	if err != nil {
		return nil, err
	}
	for _, why := range loaded.Ignored {
		logger.Warn("ignored workspace setting", "setting", why)
	}
	s := loaded.Settings
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
	e := &env{ws: ws, policy: policy, logger: logger}
	e.registry = tools.NewRegistry(logger, tools.Filter{Core: s.Core(), Exclude: s.Exclude()})
	e.builtins = builtin.New(builtin.Options{
		Workspace: ws,
		ConfigDir: configDir,
		Search:    searchOpts,
		Shell:     shell.Options{NoOutputTimeout: timeout},
	})
	e.builtins.Register(e.registry)
	return e, nil
}

// close stops what the tools left running.
func (e *env) close() {
	if err := e.builtins.Close(); err != nil {
		e.logger.Warn("stopping background jobs", "err", err)
	}
}
