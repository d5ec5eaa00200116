// Package interact holds the tools that talk with the person and the session rather
// than with the workspace: think (a thought shown as one), ask_user (questions put to
// the person through the front end's confirmation path) and enter_plan_mode /
// exit_plan_mode (switching the session's approval mode, which asks the person first).
//
// The session a call belongs to reaches these tools through the call's context
// (WithSession), as the todo list of write_todos does: one registered tool serves every
// session of a workspace.
package interact

import (
	"context"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Session is what these tools need of the session that runs a call.
type Session interface {
	// Thought shows text to people as the model's thought.
	Thought(text string)
	// Mode returns the approval mode the session runs in.
	Mode() confirm.Mode
	// SetMode switches the session's approval mode and tells the front ends.
	SetMode(m confirm.Mode)
}

type sessionKey struct{}

// WithSession returns ctx for calls of the session s.
func WithSession(ctx context.Context, s Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// sessionOf returns the session of a call's context, or nil for a call of no session
// (one a person runs directly).
func sessionOf(ctx context.Context) Session {
	s, _ := ctx.Value(sessionKey{}).(Session)
	return s
}

// Tools returns think, ask_user, enter_plan_mode and exit_plan_mode; exit_plan_mode
// reads its plan file from ws.
func Tools(ws *workspace.Workspace) []tools.Tool {
	return []tools.Tool{thinkTool{}, askTool{}, enterPlanTool{}, exitPlanTool{ws: ws}}
}
