package rpc

import (
	"slices"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
)

// Settings and the tool system.
//
// The editor's settings (initializationOptions, then workspace/didChangeConfiguration)
// are user-level overrides, which toolbox.Toolbox merges over the user's settings file
// before the workspace files, which may only tighten them. The toolbox is built once,
// at initialize, with the overrides of initializationOptions; a configuration change
// or a change of the workspace folders re-applies the settings through
// session.Host.Reconfigure, whose schedulers are made anew when it changed the policy
// or the registry.

// buildToolbox builds the host of the sessions and tool system for roots.
func (s *Server) buildToolbox(roots []string) error {
	s.mu.Lock()
	overrides := s.initOptions
	s.mu.Unlock()
	store, stateDir, stateErr := s.sessionStore()
	host, err := session.NewHost(session.HostOptions{
		Toolbox: toolbox.Options{
			Roots:     roots,
			ConfigDir: s.opts.ConfigDir,
			Overrides: overrides,
			Tool:      s.adaptTool,
			// get_diagnostics, declared only while the client reports diagnostics.
			Extra: func(settings.Settings) []tools.Tool {
				if len(s.opts.onlyTools) > 0 {
					return nil
				}
				return []tools.Tool{newGetDiagnostics(s)}
			},
			// Whatever the client, a shell result names the agent's edits that are
			// not on disk when the command starts: it is a check of the disk, so
			// edits saved (by a rich client, or written behind a plain one, see
			// editwriter.go) give no note, and a save that failed or was turned
			// off never lets a command run silently on the old text.
			NoteUnsaved:  true,
			Logger:       s.log,
			MCPAuthorize: s.authorize,
			MCPElicit:    s,
		},
		Store:     store,
		NewClient: s.opts.NewClient,
		Asker:     s,
		Observe:   s.onUpdate,
		MaxTurns:  s.opts.MaxTurns,
		Logger:    s.log,
	})
	if err != nil {
		return err
	}
	tb := host.Toolbox()
	tb.Workspace.SetWriter(&editWriter{s: s})
	s.mu.Lock()
	s.host, s.toolbox, s.stateDir, s.stateErr = host, tb, stateDir, stateErr
	s.mu.Unlock()
	return nil
}

// adaptTool leaves out the built-in tools that Options.onlyTools does not name, and
// makes the others that change files report the editor's diagnostics (editordiags.go).
func (s *Server) adaptTool(t tools.Tool) tools.Tool {
	if len(s.opts.onlyTools) > 0 && !slices.Contains(s.opts.onlyTools, t.Info().Name) {
		return nil
	}
	return s.diagnosticTool(t)
}

// reconfigure re-reads the settings files and applies them with the editor's overrides,
// and tells a rich client when the approval mode changed with them. Nothing changes
// when they are invalid.
func (s *Server) reconfigure() error {
	if err := s.applySettings(); err != nil {
		return err
	}
	s.announceMode()
	return nil
}

// applySettings is reconfigure under s.mu.
func (s *Server) applySettings() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.host.Reconfigure(settings.Merge(s.initOptions, s.config))
	if err != nil {
		return err
	}
	if r.External {
		s.loadExternal(s.host)
	}
	if len(r.Restart) > 0 {
		s.log.Info("these settings take effect when agentls restarts", "settings", r.Restart)
	}
	return nil
}

// registry returns the tool registry in force; nil before initialize.
func (s *Server) registry() *tools.Registry {
	_, _, tb := s.state()
	if tb == nil {
		return nil
	}
	return tb.Config().Registry
}

// policy returns the consent policy in force; nil before initialize.
func (s *Server) policy() *confirm.Policy {
	_, _, tb := s.state()
	if tb == nil {
		return nil
	}
	return tb.Config().Policy
}
