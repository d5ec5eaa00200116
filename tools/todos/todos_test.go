package todos_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/todos"
)

func TestWriteTodos(t *testing.T) {
	var changes [][]todos.Item
	list := todos.NewList(func(items []todos.Item) { changes = append(changes, items) })
	tool := list.Tool()
	ctx := context.Background()

	res, err := testutil.Call(ctx, t, tool, `{"todos": [
		{"description": "Read the parser", "status": "completed"},
		{"description": "  Fix the off-by-one  ", "status": "in_progress"},
		{"description": "Add a test", "status": "pending"},
		{"description": "Refactor everything", "status": "cancelled"}
	]}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOutput := "Successfully updated the todo list. The current list is now:\n" +
		"1. [completed] Read the parser\n" +
		"2. [in_progress] Fix the off-by-one\n" +
		"3. [pending] Add a test\n" +
		"4. [cancelled] Refactor everything"
	if res.Output != wantOutput {
		t.Errorf("Output:\n%s\nwant:\n%s", res.Output, wantOutput)
	}
	if res.Summary != "Updated the todo list: 1 of 4 completed" {
		t.Errorf("Summary = %q", res.Summary)
	}
	want := []todos.Item{
		{Description: "Read the parser", Status: "completed"},
		{Description: "Fix the off-by-one", Status: "in_progress"},
		{Description: "Add a test", Status: "pending"},
		{Description: "Refactor everything", Status: "cancelled"},
	}
	if got := list.Items(); !slices.Equal(got, want) {
		t.Errorf("Items() = %+v", got)
	}
	if len(changes) != 1 || !slices.Equal(changes[0], want) {
		t.Errorf("onChange got %+v", changes)
	}

	// Items returns a copy.
	list.Items()[0].Status = "pending"
	if list.Items()[0].Status != "completed" {
		t.Error("changing the result of Items changed the list")
	}

	// The next call replaces the list whole.
	if _, err := testutil.Call(ctx, t, tool, `{"todos": [{"description": "Only this", "status": "pending"}]}`, nil); err != nil {
		t.Fatal(err)
	}
	if got := list.Items(); !slices.Equal(got, []todos.Item{{Description: "Only this", Status: "pending"}}) {
		t.Errorf("after replacement: %+v", got)
	}

	res, err = testutil.Call(ctx, t, tool, `{"todos": []}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "Successfully cleared the todo list." || len(list.Items()) != 0 {
		t.Errorf("clearing: %q, %+v", res.Output, list.Items())
	}
	if len(changes) != 3 || len(changes[2]) != 0 {
		t.Errorf("onChange calls: %+v", changes)
	}
}

func TestWriteTodosBadInput(t *testing.T) {
	tests := []struct {
		name, args string
		msg        string // part of the error message
	}{
		{"two in progress", `{"todos": [{"description": "a", "status": "in_progress"}, {"description": "b", "status": "pending"}, {"description": "c", "status": "in_progress"}]}`, "todos 1, 3 are"},
		{"empty description", `{"todos": [{"description": "", "status": "pending"}]}`, "todo 1 has an empty description"},
		{"blank description", `{"todos": [{"description": "ok", "status": "pending"}, {"description": " \n ", "status": "pending"}]}`, "todo 2 has an empty description"},
		{"unknown status", `{"todos": [{"description": "a", "status": "done"}]}`, "status"},
		{"missing status", `{"todos": [{"description": "a"}]}`, "status"},
		{"extra property", `{"todos": [{"description": "a", "status": "pending", "priority": "high"}]}`, "priority"},
		{"missing todos", `{}`, "todos"},
		{"todos not an array", `{"todos": "a, b"}`, "todos"},
		{"null todos", `{"todos": null}`, "todos"},
		{"string items", `{"todos": ["a"]}`, "todos"},
	}
	for _, tt := range tests {
		called := false
		list := todos.NewList(func([]todos.Item) { called = true })
		_, err := testutil.Call(context.Background(), t, list.Tool(), tt.args, nil)
		if testutil.ErrorType(err) != tools.ErrInvalidParams || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %v, want invalid_tool_params mentioning %q", tt.name, err, tt.msg)
		}
		if called || len(list.Items()) != 0 {
			t.Errorf("%s: a refused call changed the list", tt.name)
		}
	}
}

// TestWriteTodosStatuses checks each status, blocked among them, and that at most one
// todo is in progress.
func TestWriteTodosStatuses(t *testing.T) {
	tests := []struct {
		name     string
		statuses []string
		err      string // part of the error; "" for success
	}{
		{"blocked", []string{"blocked"}, ""},
		{"every status, one in progress", []string{"pending", "in_progress", "completed", "cancelled", "blocked"}, ""},
		{"blocked twice", []string{"blocked", "blocked", "in_progress"}, ""},
		{"none in progress", []string{"pending", "blocked"}, ""},
		{"two in progress", []string{"in_progress", "blocked", "in_progress"}, "only one todo may be in_progress at a time, but todos 1, 3 are"},
		{"three in progress", []string{"in_progress", "in_progress", "in_progress"}, "todos 1, 2, 3 are"},
		{"unknown status lists blocked", []string{"waiting"}, "use one of pending, in_progress, completed, cancelled, blocked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var items []string
			var want strings.Builder
			want.WriteString("Successfully updated the todo list. The current list is now:")
			for i, st := range tt.statuses {
				items = append(items, fmt.Sprintf(`{"description": "step %d", "status": %q}`, i+1, st))
				fmt.Fprintf(&want, "\n%d. [%s] step %d", i+1, st, i+1)
			}
			list := todos.NewList(nil)
			args := `{"todos": [` + strings.Join(items, ", ") + `]}`
			// Build alone (without the schema) and the whole call agree.
			_, buildErr := list.Tool().Build([]byte(args))
			res, err := testutil.Call(context.Background(), t, list.Tool(), args, nil)
			if tt.err == "" {
				if err != nil || buildErr != nil {
					t.Fatalf("refused: %v / %v", err, buildErr)
				}
				if res.Output != want.String() || len(list.Items()) != len(tt.statuses) {
					t.Errorf("output %q", res.Output)
				}
				return
			}
			if testutil.ErrorType(err) != tools.ErrInvalidParams || testutil.ErrorType(buildErr) != tools.ErrInvalidParams ||
				!strings.Contains(buildErr.Error(), tt.err) {
				t.Errorf("error %v / %v, want invalid_tool_params mentioning %q", err, buildErr, tt.err)
			}
			if len(list.Items()) != 0 {
				t.Error("a refused call changed the list")
			}
		})
	}
}

// Build checks its arguments itself, without the schema's help.
func TestWriteTodosBuildUnvalidated(t *testing.T) {
	tool := todos.NewList(nil).Tool()
	for _, args := range []string{`{"todos": [{"description": "a", "status": "bogus"}]}`, `{"todos": null}`, `[1]`} {
		if _, err := tool.Build([]byte(args)); testutil.ErrorType(err) != tools.ErrInvalidParams {
			t.Errorf("Build(%s) = %v, want invalid_tool_params", args, err)
		}
	}
}

func TestWriteTodosInvocation(t *testing.T) {
	list := todos.NewList(nil)
	tool := list.Tool()
	info := tool.Info()
	if info.Name != "write_todos" || info.Kind != tools.KindThink || !strings.Contains(info.Description, "in_progress") {
		t.Errorf("Info = %+v", info)
	}
	inv, err := testutil.Build(t, tool, `{"todos": [{"description": "a", "status": "pending"}, {"description": "b", "status": "pending"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := inv.Confirmation(context.Background()); d != nil || err != nil {
		t.Errorf("Confirmation = %v, %v; want none", d, err)
	}
	if inv.Describe() != "Set 2 todos" || len(inv.Locations()) != 0 {
		t.Errorf("Describe = %q, Locations = %v", inv.Describe(), inv.Locations())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := inv.Execute(ctx, nil); err == nil || len(list.Items()) != 0 {
		t.Errorf("a cancelled call: %v, list %+v", err, list.Items())
	}
}

// Concurrent calls each replace the list whole, and the last list reported to onChange
// is the list held.
func TestWriteTodosConcurrent(t *testing.T) {
	var mu sync.Mutex
	var last []todos.Item
	var list *todos.List
	list = todos.NewList(func(items []todos.Item) {
		_ = list.Items() // reading the list from the callback must not deadlock
		mu.Lock()
		last = items
		mu.Unlock()
	})
	tool := list.Tool()
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			args := fmt.Sprintf(`{"todos": [{"description": "from %d", "status": "pending"}, {"description": "also %d", "status": "in_progress"}]}`, i, i)
			if _, err := testutil.Call(context.Background(), t, tool, args, nil); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() { _ = list.Items() })
	}
	wg.Wait()
	got := list.Items()
	if len(got) != 2 || strings.TrimPrefix(got[0].Description, "from ") != strings.TrimPrefix(got[1].Description, "also ") {
		t.Errorf("the list mixes calls: %+v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(last, got) {
		t.Errorf("last reported %+v, list holds %+v", last, got)
	}
}
