// Package builtin assembles agentls's built-in tools — files, search, shell, memory,
// todos, the web, and think, ask_user and the plan mode switches — over one workspace, so that every front end registers the same set.
package builtin

import (
	"slices"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/files"
	"github.com/agentls/agentls/tools/interact"
	"github.com/agentls/agentls/tools/memory"
	"github.com/agentls/agentls/tools/search"
	"github.com/agentls/agentls/tools/shell"
	"github.com/agentls/agentls/tools/todos"
	"github.com/agentls/agentls/tools/web"
	"github.com/agentls/agentls/workspace"
)

// Options configure the built-in tools.
type Options struct {
	Workspace *workspace.Workspace
	// ConfigDir is the user's agentls configuration directory, where save_memory keeps
	// the facts of scope "user" (those of scope "project" go to the workspace root).
	ConfigDir string
	Search    search.Options
	Shell     shell.Options
	// OnTodos is called with the new list whenever write_todos changes it.
	OnTodos func([]todos.Item)
	// Web configures web_fetch (and google_web_search, when it has a Searcher).
	Web web.Options
}

// Set is the built-in tools of one session, with the state some of them keep.
type Set struct {
	// Shell owns the background jobs of run_shell_command.
	Shell *shell.Shell
	// Todos is the session's todo list, written by write_todos.
	Todos *todos.List
	// Web holds web_fetch's connections and rate limits.
	Web   *web.Set
	tools []tools.Tool
}

// New builds the built-in tools.
func New(o Options) *Set {
	s := &Set{
		Shell: shell.New(o.Workspace, o.Shell),
		Todos: todos.NewList(o.OnTodos),
		Web:   web.New(o.Web),
	}
	s.tools = append(s.tools, files.Tools(o.Workspace)...)
	s.tools = append(s.tools, search.Tools(o.Workspace, o.Search)...)
	s.tools = append(s.tools, s.Shell.Tools()...)
	s.tools = append(s.tools, memory.New(o.Workspace, o.ConfigDir), s.Todos.Tool())
	s.tools = append(s.tools, s.Web.Tools()...)
	s.tools = append(s.tools, interact.Tools(o.Workspace)...)
	return s
}

// Close stops what the tools still run in the background.
func (s *Set) Close() error {
	s.Web.CloseIdleConnections()
	return s.Shell.Close()
}

// Tools returns the built-in tools.
func (s *Set) Tools() []tools.Tool { return slices.Clone(s.tools) }
