package rpc_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/tools"
)

// TestCancelRunningTool: $/cancelRequest for a runTool request, and agentls.cancel, stop
// the tool call it runs: the command is killed and the result is cancelled.
func TestCancelRunningTool(t *testing.T) {
	for _, how := range []string{"$/cancelRequest", "agentls.cancel", "agentls/cancel"} {
		t.Run(how, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, nil)
			c := session(t, root, capsRich, map[string]any{"approvalMode": "yolo"})
			marker := uniqueSleep()
			p := c.Go("workspace/executeCommand", map[string]any{"command": "agentls.runTool",
				"arguments": []any{map[string]any{"name": "run_shell_command", "args": map[string]any{"command": marker}}}})
			waitProcess(ctx, t, marker, true)
			switch how {
			case "$/cancelRequest":
				if err := c.Cancel(p.ID()); err != nil {
					t.Fatal(err)
				}
			case "agentls.cancel":
				if err := command(ctx, c, "agentls.cancel", map[string]any{"session": "editor"}, nil); err != nil {
					t.Fatal(err)
				}
			case "agentls/cancel":
				if err := c.Notify("agentls/cancel", map[string]any{}); err != nil {
					t.Fatal(err)
				}
			}
			var res tools.CallResult
			if err := p.Wait(ctx, &res); err != nil {
				t.Fatal(err)
			}
			if res.Status != tools.StatusCancelled {
				t.Errorf("result %+v, want cancelled", res)
			}
			waitProcess(ctx, t, marker, false)
			// The server serves on.
			if got := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo after"}); !strings.Contains(got.Output, "after") {
				t.Errorf("after the cancellation: %+v", got)
			}
		})
	}
}

func TestListTools(t *testing.T) {
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsRich, nil)
	var viaCommand, viaMethod []tools.Info
	if err := command(ctx, c, "agentls.listTools", map[string]any{}, &viaCommand); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "agentls/tools", map[string]any{}, &viaMethod); err != nil {
		t.Fatal(err)
	}
	if len(viaCommand) == 0 || mustJSON(t, viaCommand) != mustJSON(t, viaMethod) {
		t.Fatalf("agentls.listTools and agentls/tools differ or are empty:\n%v\n%v", viaCommand, viaMethod)
	}
	var names []string
	for _, in := range viaCommand {
		names = append(names, in.Name)
		if in.Kind == "" || in.Source != tools.SourceBuiltin || !json.Valid(in.Parameters) {
			t.Errorf("incomplete ToolInfo %+v", in)
		}
	}
	for _, want := range []string{"read_file", "write_file", "replace", "run_shell_command", "grep_search", "glob"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s missing from %v", want, names)
		}
	}
}

// TestRunToolMethod: agentls/runTool is agentls.runTool as a method; the result is a
// ToolResult also for calls that fail.
func TestRunToolMethod(t *testing.T) {
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.txt": "x\n"})
	c := session(t, root, capsRich, nil)
	var res tools.CallResult
	if err := c.Call(ctx, "agentls/runTool", map[string]any{"name": "read_file", "args": map[string]any{"file_path": "a.txt"}, "toolCallId": "mine-1"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != tools.StatusSuccess || res.Output != "x\n" || res.CallID != "mine-1" || res.Name != "read_file" {
		t.Errorf("agentls/runTool: %+v", res)
	}
	for _, tt := range []struct {
		name, args string
		want       tools.ErrorType
	}{
		{"read_fil", `{}`, tools.ErrNotRegistered},
		{"read_file", `{"file_path": 3}`, tools.ErrInvalidParams},
		{"read_file", `{"file_path": "missing.txt"}`, tools.ErrFileNotFound},
	} {
		var res tools.CallResult
		if err := c.Call(ctx, "agentls/runTool", map[string]any{"name": tt.name, "args": json.RawMessage(tt.args)}, &res); err != nil {
			t.Fatal(err)
		}
		if res.Status != tools.StatusError || res.Error == nil || res.Error.Type != tt.want {
			t.Errorf("%s %s: %+v, want %s", tt.name, tt.args, res, tt.want)
		}
	}
	// agentls.metrics counts them: read_file three times, two failed (the unknown name
	// is not a tool, and is not counted).
	var m struct {
		Process  []tools.ToolStats
		Sessions map[string][]tools.ToolStats
	}
	if err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "agentls.metrics"}, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Process) != 1 || m.Process[0].Name != "read_file" || m.Process[0].Calls != 3 || m.Process[0].Errors != 2 || m.Sessions == nil {
		t.Errorf("agentls.metrics = %+v", m)
	}
	if err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "agentls.metrics", "arguments": []any{"all"}}, &m); err == nil {
		t.Error("agentls.metrics took a string for its object argument")
	}
}

// TestUpdates: a rich client follows a tool call through agentls/update.
func TestUpdates(t *testing.T) {
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"f.txt": "one\n"})
	c := session(t, root, capsRich, map[string]any{"approvalMode": "yolo"})
	res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "printf 'a\\n'; sleep 0.1; printf 'b\\n'"})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("%+v", res)
	}
	type update struct {
		Session string
		Update  struct {
			Kind       string
			ToolCallID string
			Name       string
			Title      string
			ToolKind   string
			Status     string
			Output     string
			Locations  []struct{ URI string }
			RawInput   map[string]any
			Content    *struct {
				Text string
				Diff *struct{ Path, URI, Diff, NewContent string }
			}
		}
	}
	updates := func(id string) []update {
		var out []update
		for _, m := range c.Received("agentls/update") {
			var u update
			if err := json.Unmarshal(m.Params, &u); err != nil {
				t.Fatal(err)
			}
			if u.Update.ToolCallID == id {
				out = append(out, u)
			}
		}
		return out
	}
	us := updates(res.CallID)
	var statuses []string
	var output string
	for _, u := range us {
		if u.Session != "editor" {
			t.Errorf("session %q, want editor", u.Session)
		}
		if u.Update.Status != "" {
			statuses = append(statuses, u.Update.Kind+":"+u.Update.Status)
		}
		output += u.Update.Output
	}
	want := []string{"tool_call:pending", "tool_call_update:in_progress", "tool_call_update:completed"}
	if !slices.Equal(statuses, want) || output != "a\nb\n" {
		t.Errorf("updates %v with output %q, want %v with output %q", statuses, output, want, "a\nb\n")
	}
	if first := us[0].Update; first.ToolKind != "execute" || first.Name != "run_shell_command" || first.RawInput["command"] == nil || first.Title == "" {
		t.Errorf("tool_call %+v", first)
	}

	// An edit ends with its diff, and names its location.
	res = runTool(ctx, t, c, "replace", replaceArgs("f.txt", "one", "two"))
	us = updates(res.CallID)
	last := us[len(us)-1].Update
	if len(us[0].Update.Locations) != 1 || us[0].Update.Locations[0].URI != lsptest.FileURI(filepath.Join(root, "f.txt")) ||
		last.Status != "completed" || last.Content == nil || last.Content.Diff == nil || !strings.Contains(last.Content.Diff.Diff, "+two") {
		t.Errorf("edit updates %+v ... %+v", us[0].Update, last)
	}

	// A call that never gets scheduled is announced when it fails.
	res = runTool(ctx, t, c, "no_such_tool", map[string]any{})
	us = updates(res.CallID)
	if len(us) != 2 || us[0].Update.Kind != "tool_call" || us[0].Update.Status != "failed" || us[1].Update.Status != "failed" {
		t.Errorf("updates of an unknown tool: %+v", us)
	}
}

// TestNoUpdatesForPlainClients: agentls/update goes only to clients that asked.
func TestNoUpdatesForPlainClients(t *testing.T) {
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, withCaps(capsEditor, "experimental", map[string]any{"agentls": map[string]any{"confirm": true}}), map[string]any{"approvalMode": "yolo"})
	runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo x"})
	if got := c.Received("agentls/update"); got != nil {
		t.Errorf("agentls/update sent to a client without experimental.agentls.updates: %v", got)
	}
}

// TestUnsavedFilesNote: for a client that does not save what the agent edits, a shell
// command's result names the edited files still unsaved in the editor.
func TestUnsavedFilesNote(t *testing.T) {
	notSaving := withCaps(capsEditor, "experimental", map[string]any{"agentls": map[string]any{"confirm": true, "updates": true, "savesEdits": false}})
	for _, tt := range []struct {
		name string
		caps map[string]any
		note bool
	}{
		{"plain", capsEditor, true},
		{"rich", capsRich, false},
		{"rich, not saving", notSaving, true},
	} {
		caps, rich := tt.caps, !tt.note
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, map[string]string{"a.txt": "old\n", "b.txt": "b\n"})
			c := session(t, root, caps, map[string]any{"approvalMode": "yolo"})
			uri := lsptest.FileURI(filepath.Join(root, "a.txt"))
			if err := c.Editor().Open(uri, "old\n"); err != nil {
				t.Fatal(err)
			}
			if res := runTool(ctx, t, c, "replace", replaceArgs("a.txt", "old", "new")); res.Status != tools.StatusSuccess {
				t.Fatal(res)
			}
			res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "cat a.txt"})
			hasNote := strings.Contains(res.Output, "a.txt are not saved") || strings.Contains(res.Output, "not saved in the editor")
			if !strings.Contains(res.Output, "old") || hasNote == rich {
				t.Errorf("result %q: the note must be there exactly for a plain client", res.Output)
			}
			if !rich && !strings.Contains(res.Output, "a.txt") {
				t.Errorf("the note does not name a.txt: %q", res.Output)
			}
			// Once the editor saved the file, there is nothing to say.
			if err := c.Editor().Save(uri); err != nil {
				t.Fatal(err)
			}
			res = runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "cat a.txt"})
			if strings.Contains(res.Output, "not saved") || !strings.Contains(res.Output, "new") {
				t.Errorf("after saving: %q", res.Output)
			}
		})
	}
}

// TestToolCallSummary: the last tool_call_update of a call carries its one-line
// summary, such as a command's exit code.
func TestToolCallSummary(t *testing.T) {
	ctx := testContext(t)
	c := session(t, workspaceDir(t, nil), capsRich, map[string]any{"approvalMode": "yolo"})
	if res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "exit 3"}); res.Summary != "Exit code 3" {
		t.Fatalf("result %+v", res)
	}
	for _, u := range updates(t, c, "editor") {
		if u.Kind == "tool_call_update" && u.Status == "completed" {
			if u.Summary != "Exit code 3" {
				t.Errorf("the last update's summary is %q, want the exit code", u.Summary)
			}
			return
		}
	}
	t.Error("no completed tool_call_update")
}
