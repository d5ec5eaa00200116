package rpc

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/builtin"
	"github.com/agentls/agentls/tools/search"
	"github.com/agentls/agentls/tools/shell"
)

// Settings and the tool system.
//
// The editor's settings (initializationOptions, then workspace/didChangeConfiguration)
// are user-level overrides: they merge over the user's settings file before the
// workspace files, which may only tighten them (settings.LoadWith). session.NewToolbox
// reads the files alone, so the server applies the merged settings to the toolbox it
// built: a new policy when the rules change (which forgets "always" answers), a new
// registry when the tool selection changes, the approval mode, and, at initialize only,
// rebuilt built-in tools when the shell timeout or the ripgrep choice differ. A
// toolbox option for overrides in package session would make the last part
// unnecessary.
//
// The toolbox's Settings, Policy and Registry fields change under s.mu; the server
// reads them only through s.mu.

// buildToolbox builds the tool system for roots and the scheduler over it.
func (s *Server) buildToolbox(roots []string) error {
	tb, err := session.NewToolbox(session.ToolboxOptions{Roots: roots, ConfigDir: s.opts.ConfigDir, Logger: s.log})
	if err != nil {
		return err
	}
	tb.Workspace.SetWriter(&editWriter{s: s})
	next, err := s.loadSettings(tb)
	if err == nil {
		err = s.applySettings(tb, next, true)
	}
	if err != nil {
		if cerr := tb.Close(); cerr != nil {
			s.log.Warn("stopping background tools", "error", cerr)
		}
		return err
	}
	return nil
}

// reconfigure re-reads the settings files and applies them with the editor's overrides.
func (s *Server) reconfigure() error {
	s.mu.Lock()
	tb := s.toolbox
	s.mu.Unlock()
	next, err := s.loadSettings(tb)
	if err != nil {
		return err
	}
	return s.applySettings(tb, next, false)
}

// loadSettings reads the user's and the workspace's settings files with the editor's
// overrides merged in as user settings.
func (s *Server) loadSettings(tb *session.Toolbox) (settings.Settings, error) {
	s.mu.Lock()
	over := settings.Merge(s.initOptions, s.config)
	s.mu.Unlock()
	loaded, err := settings.LoadWith(tb.ConfigDir, tb.Workspace.Roots()[0], over)
	if err != nil {
		return settings.Settings{}, err
	}
	for _, why := range loaded.Ignored {
		s.log.Warn("ignored workspace setting", "setting", why)
	}
	return loaded.Settings, nil
}

// applySettings makes next the settings in force for tb; initial is set while
// initialize builds tb. Nothing changes when next is invalid.
func (s *Server) applySettings(tb *session.Toolbox, next settings.Settings, initial bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := tb.Settings
	modeChanged := initial || next.ApprovalMode != prev.ApprovalMode
	mode := confirm.ModeDefault
	if tb.Policy != nil {
		mode = tb.Policy.Mode()
	}
	if modeChanged {
		m, err := confirm.ParseMode(next.ApprovalMode)
		if err != nil {
			return fmt.Errorf("approvalMode: %w", err)
		}
		mode = m
	}
	var policy *confirm.Policy
	if initial || !reflect.DeepEqual(prev.Policy.Rules, next.Policy.Rules) {
		p, err := confirm.NewPolicy(mode, next.Policy.Rules, tb.Workspace.Roots)
		if err != nil {
			return fmt.Errorf("policy rules in settings: %w", err)
		}
		policy = p
	}
	timeout, err := next.ShellTimeout()
	if err != nil {
		return err
	}
	prevTimeout, _ := prev.ShellTimeout()
	builtinsDiffer := timeout != prevTimeout || useRipgrep(prev) != useRipgrep(next)

	changed := false
	switch {
	case policy != nil:
		tb.Policy = policy
		changed = true
	case modeChanged:
		tb.Policy.SetMode(mode)
	}
	if builtinsDiffer && initial {
		// Nothing runs yet, so the built-in tools can be rebuilt with these settings.
		if err := tb.Builtins.Close(); err != nil {
			s.log.Warn("stopping background tools", "error", err)
		}
		searchOpts := search.Options{}
		if !useRipgrep(next) {
			searchOpts.Ripgrep = "none"
		}
		tb.Builtins = builtin.New(builtin.Options{
			Workspace: tb.Workspace,
			ConfigDir: tb.ConfigDir,
			Search:    searchOpts,
			Shell:     shell.Options{NoOutputTimeout: timeout},
		})
	} else if builtinsDiffer {
		s.log.Info("tools.shell.inactivityTimeout and tools.useRipgrep take effect when agentls restarts")
	}
	if initial || !slices.Equal(prev.Core(), next.Core()) || !slices.Equal(prev.Exclude(), next.Exclude()) {
		tb.Registry = s.newRegistry(tb, next)
		changed = true
	}
	tb.Settings = next
	s.toolbox = tb
	if changed || s.scheduler == nil {
		s.scheduler = tb.Scheduler(s, s.observe)
	}
	return nil
}

func useRipgrep(s settings.Settings) bool { return s.Tools.Ripgrep == nil || *s.Tools.Ripgrep }

// newRegistry returns a registry of tb's built-in tools with the tool selection of st;
// for clients that do not save the buffers the agent edits, run_shell_command reports
// the files still unsaved (see unsaved.go).
func (s *Server) newRegistry(tb *session.Toolbox, st settings.Settings) *tools.Registry {
	all := tools.NewRegistry(slog.New(slog.DiscardHandler), tools.Filter{})
	tb.Builtins.Register(all)
	reg := tools.NewRegistry(s.log, tools.Filter{Core: st.Core(), Exclude: st.Exclude()})
	for _, info := range all.List() {
		if len(s.opts.onlyTools) > 0 && !slices.Contains(s.opts.onlyTools, info.Name) {
			continue
		}
		t, ok := all.Get(info.Name)
		if !ok {
			continue
		}
		if info.Name == shellToolName && !s.caps.Rich() {
			t = &unsavedNoteTool{Tool: t, s: s}
		}
		reg.Register(t)
	}
	return reg
}

// registry returns the tool registry in force; nil before initialize.
func (s *Server) registry() *tools.Registry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.toolbox == nil {
		return nil
	}
	return s.toolbox.Registry
}

// policy returns the consent policy in force; nil before initialize.
func (s *Server) policy() *confirm.Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.toolbox == nil {
		return nil
	}
	return s.toolbox.Policy
}
