// Package todos holds write_todos, the built-in tool with which the model keeps a plan
// for a multi-step task: a list of todos, each pending, in progress, completed,
// cancelled or blocked, that every call replaces whole. The list lives in the session; front ends
// show it as it changes. Its name and parameters follow Gemini CLI 0.61.
package todos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
)

// todosArgsSchema is the parameter schema of todosArgs, generated once, when first asked for.
var todosArgsSchema = tools.ParametersOnce[todosArgs](false)

// Name is the tool's name, as Gemini CLI calls it.
const Name = "write_todos"

// The statuses of a todo.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusCancelled  = "cancelled"
	StatusBlocked    = "blocked"
)

// statuses returns the statuses a todo may have.
func statuses() []string {
	return []string{StatusPending, StatusInProgress, StatusCompleted, StatusCancelled, StatusBlocked}
}

// Item is one todo.
type Item struct {
	Description string `json:"description" jsonschema:"One concrete step."`
	// Status is one of StatusPending, StatusInProgress, StatusCompleted,
	// StatusCancelled and StatusBlocked.
	Status string `json:"status" schema:"enum=pending|in_progress|completed|cancelled|blocked"`
}

// List is a session's todo list. It is safe for concurrent use.
type List struct {
	// write serialises replacements together with their onChange call, so that the
	// last list reported is the list held.
	write    sync.Mutex
	mu       sync.Mutex // guards items
	items    []Item
	onChange func([]Item)
}

// NewList returns an empty list. onChange, if not nil, is called with a copy of the new
// list after every replacement, one call at a time and in order; it may read the list
// but must not replace it.
func NewList(onChange func([]Item)) *List {
	return &List{onChange: onChange}
}

// Items returns a copy of the current list.
func (l *List) Items() []Item {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.items)
}

func (l *List) set(items []Item) {
	l.write.Lock()
	defer l.write.Unlock()
	l.mu.Lock()
	l.items = slices.Clone(items)
	l.mu.Unlock()
	if l.onChange != nil {
		l.onChange(slices.Clone(items))
	}
}

// Tool returns the write_todos tool, which replaces this list.
func (l *List) Tool() tools.Tool { return &tool{list: l} }

const description = "Keeps the plan of a task of several steps as a todo list the user follows (not for one or two steps). " +
	"Each call sends the whole list (empty clears it). Keep it current: one todo in_progress at a time, marked before you start it; " +
	"completed once done; cancelled when no longer needed; blocked when it waits, its description saying on what."

type tool struct{ list *List }

func (t *tool) Info() tools.Info {
	return tools.Info{
		Name:        Name,
		DisplayName: "WriteTodos",
		Description: description,
		Kind:        tools.KindThink,
		Source:      tools.SourceBuiltin,
		Parameters:  todosArgsSchema(),
		Markdown:    true,
		Idempotent:  true,
	}
}

// todosArgs are write_todos's parameters. Todos is a pointer so that a missing list is
// told from an empty one, which clears the list.
type todosArgs struct {
	Todos *[]Item `json:"todos"`
}

func (t *tool) Build(args json.RawMessage) (tools.Invocation, error) {
	var p todosArgs
	if err := tools.DecodeArgs(args, &p); err != nil {
		return nil, err
	}
	if p.Todos == nil {
		return nil, tools.Errorf(tools.ErrInvalidParams, `parameter "todos" must be an array of todos`)
	}
	items := *p.Todos
	var problems, inProgress []string
	for i := range items {
		it := &items[i]
		it.Description = strings.TrimSpace(it.Description)
		if it.Description == "" {
			problems = append(problems, fmt.Sprintf("todo %d has an empty description", i+1))
		}
		if !slices.Contains(statuses(), it.Status) {
			problems = append(problems, fmt.Sprintf("todo %d has status %q; use one of %s", i+1, it.Status, strings.Join(statuses(), ", ")))
		}
		if it.Status == StatusInProgress {
			inProgress = append(inProgress, strconv.Itoa(i+1))
		}
	}
	if len(inProgress) > 1 {
		problems = append(problems, fmt.Sprintf("only one todo may be in_progress at a time, but todos %s are", strings.Join(inProgress, ", ")))
	}
	if len(problems) > 0 {
		return nil, tools.Errorf(tools.ErrInvalidParams, "%s", strings.Join(problems, "; "))
	}
	return &call{list: t.list, items: items}, nil
}

type call struct {
	list  *List
	items []Item
}

func (c *call) Describe() string {
	switch n := len(c.items); n {
	case 0:
		return "Clear the todo list"
	case 1:
		return "Set 1 todo"
	default:
		return fmt.Sprintf("Set %d todos", n)
	}
}

func (c *call) Locations() []tools.Location { return nil }

// Confirmation returns nil: the list is the agent's own notes.
func (c *call) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

func (c *call) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.list.set(c.items)
	if len(c.items) == 0 {
		return &tools.Result{Summary: "Cleared the todo list", Output: "Successfully cleared the todo list."}, nil
	}
	var b strings.Builder
	b.WriteString("Successfully updated the todo list. The current list is now:")
	done := 0
	for i, it := range c.items {
		fmt.Fprintf(&b, "\n%d. [%s] %s", i+1, it.Status, it.Description)
		if it.Status == StatusCompleted {
			done++
		}
	}
	return &tools.Result{
		Summary: fmt.Sprintf("Updated the todo list: %d of %d completed", done, len(c.items)),
		Output:  b.String(),
	}, nil
}

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*call) Capabilities() tools.Capabilities { return tools.Capabilities{} }
