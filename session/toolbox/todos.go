package toolbox

import (
	"context"
	"encoding/json"
	"io"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/todos"
)

// todosKey is the context key of the todo list the calls of a context write.
type todosKey struct{}

// WithTodos returns ctx for calls that keep their plan in l: the session's own list, so
// that each session of a workspace has one list and a front end knows whose plan
// changed from the list that reports it, not from which call ran last.
func WithTodos(ctx context.Context, l *todos.List) context.Context {
	return context.WithValue(ctx, todosKey{}, l)
}

// sessionTodos is write_todos writing the list of the call's context (WithTodos), or
// the workspace's own list (Builtins.Todos) for calls of no session.
type sessionTodos struct {
	tools.Tool
}

// Build implements tools.Tool: the arguments are checked against the workspace's list,
// and written to the call's own list when the call executes.
func (t *sessionTodos) Build(args json.RawMessage) (tools.Invocation, error) {
	inv, err := t.Tool.Build(args)
	if err != nil || inv == nil {
		return inv, err
	}
	return &sessionTodosCall{Invocation: inv, args: args}, nil
}

type sessionTodosCall struct {
	tools.Invocation
	args json.RawMessage
}

// Execute implements tools.Invocation.
func (c *sessionTodosCall) Execute(ctx context.Context, out io.Writer) (*tools.Result, error) {
	l, ok := ctx.Value(todosKey{}).(*todos.List)
	if !ok {
		return c.Invocation.Execute(ctx, out)
	}
	inv, err := l.Tool().Build(c.args)
	if err != nil {
		return nil, err
	}
	return inv.Execute(ctx, out)
}
