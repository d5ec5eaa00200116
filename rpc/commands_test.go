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

// TestUnsavedFilesNote: a shell command never runs silently on files older than the
// agent's own edits, for every kind of client. Helix, which no request can ask to
// save, gets an edit of a buffer without other unsaved changes written to disk by the
// server too, so the command sees it; a buffer holding the user's own unsaved change is
// not written, and the command's result names it. Other plain clients (eglot, which
// would then ask to discard its buffer) are not written behind: the result names the
// file. A rich client saves after applying; where it did not (saving off, or failed),
// the result names the file.
func TestUnsavedFilesNote(t *testing.T) {
	for _, tt := range []struct {
		name   string
		caps   map[string]any
		client string // clientInfo.name
		// open is the buffer's text before the edit ("" leaves a.txt unopened); the
		// disk holds "old\n".
		open string
		// save has the editor save a.txt after the edit, as a rich client does.
		save bool
		// seen is what `cat a.txt` prints; note whether the result names a.txt.
		seen string
		note bool
	}{
		{name: "helix, clean buffer", caps: capsEditor, client: "helix", open: "old\n", seen: "new\n"},
		{name: "helix, file not open", caps: capsEditor, client: "helix", seen: "new\n"},
		{name: "helix, buffer with the user's unsaved change", caps: capsEditor, client: "helix", open: "old\nmine\n", seen: "old\n", note: true},
		{name: "helix, no documentChanges", caps: withCaps(capsEditor, "workspace", map[string]any{"applyEdit": true}), client: "helix", open: "old\n", seen: "new\n"},
		{name: "other plain client", caps: capsEditor, client: "Eglot", open: "old\n", seen: "old\n", note: true},
		{name: "rich, saved", caps: capsRich, client: "helix", open: "old\n", save: true, seen: "new\n"},
		{name: "rich, not saved", caps: capsRich, open: "old\n", seen: "old\n", note: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, map[string]string{"a.txt": "old\n", "b.txt": "b\n"})
			c := sessionAs(t, tt.client, root, tt.caps, map[string]any{"approvalMode": "yolo"})
			uri := lsptest.FileURI(filepath.Join(root, "a.txt"))
			if tt.open != "" {
				if err := c.Editor().Open(uri, tt.open); err != nil {
					t.Fatal(err)
				}
			}
			if res := runTool(ctx, t, c, "replace", replaceArgs("a.txt", "old", "new")); res.Status != tools.StatusSuccess {
				t.Fatal(res)
			}
			if len(c.Editor().Applied()) != 1 {
				t.Fatalf("the editor applied %d edits, want the edit through it", len(c.Editor().Applied()))
			}
			if doc, ok := c.Editor().Doc(uri); tt.open != "" && (!ok || !strings.HasPrefix(doc.Text, "new\n")) {
				t.Fatalf("the editor's buffer is %+v, want the edit applied to it", doc)
			}
			if tt.save {
				if err := c.Editor().Save(uri); err != nil {
					t.Fatal(err)
				}
			}
			res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "cat a.txt"})
			noted := strings.Contains(res.Output, "a.txt are not saved in the editor")
			if commandOutput(res.Output) != strings.TrimSpace(tt.seen) || noted != tt.note {
				t.Errorf("result %q: want the command to see %q, and a note naming a.txt: %v", res.Output, tt.seen, tt.note)
			}
			if !tt.note {
				return
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

// sessionAs is session for a client that names itself client in clientInfo ("" keeps
// lsptest's name).
func sessionAs(t *testing.T, client, root string, caps map[string]any, options any) *lsptest.Client {
	t.Helper()
	if client == "" {
		return session(t, root, caps, options)
	}
	c := start(t, root)
	params := initParams(root, caps, options)
	params["clientInfo"] = map[string]any{"name": client, "version": "1"}
	if _, err := c.Initialize(testContext(t), params); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// TestPlainClientNewFile: a file the agent creates through Helix is on disk for the
// next command.
func TestPlainClientNewFile(t *testing.T) {
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := sessionAs(t, "helix", root, capsEditor, map[string]any{"approvalMode": "yolo"})
	if res := runTool(ctx, t, c, "write_file", map[string]any{"file_path": "c.txt", "content": "created\n"}); res.Status != tools.StatusSuccess {
		t.Fatal(res)
	}
	if res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "cat c.txt"}); commandOutput(res.Output) != "created" {
		t.Errorf("the command saw %q, want the created file", res.Output)
	}
}

// TestPlainClientUndo: Helix's undo of an edit written to disk behind it leaves a
// buffer Helix takes for saved, so the file gets its text back too, one edit at a
// time; a change of the user's that is no undo, or anything after the editor saved, is
// never written.
func TestPlainClientUndo(t *testing.T) {
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.txt": "one\ntwo\n", "b.txt": "b\n"})
	c := sessionAs(t, "helix", root, capsEditor, map[string]any{"approvalMode": "yolo"})
	path := filepath.Join(root, "a.txt")
	uri := lsptest.FileURI(path)
	if err := c.Editor().Open(uri, "one\ntwo\n"); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]string{{"one", "ONE"}, {"two", "TWO"}} {
		if res := runTool(ctx, t, c, "replace", replaceArgs("a.txt", r[0], r[1])); res.Status != tools.StatusSuccess {
			t.Fatal(res)
		}
	}
	// undo sets the buffer's text, then a request makes sure the server took it.
	undo := func(text string) string {
		t.Helper()
		if err := c.Editor().Change(uri, lsptest.Change{Text: text}); err != nil {
			t.Fatal(err)
		}
		runTool(ctx, t, c, "read_file", map[string]any{"file_path": "b.txt"})
		return readFile(t, path)
	}
	if disk := readFile(t, path); disk != "ONE\nTWO\n" {
		t.Fatalf("after both edits the disk holds %q", disk)
	}
	if disk := undo("ONE\ntwo\n"); disk != "ONE\ntwo\n" {
		t.Errorf("after undoing the second edit the disk holds %q", disk)
	}
	if disk := undo("one\ntwo\n"); disk != "one\ntwo\n" {
		t.Errorf("after undoing the first edit the disk holds %q", disk)
	}
	// Typing is not written, nor is a change back once the user has saved.
	if disk := undo("one\ntwo\nmine\n"); disk != "one\ntwo\n" {
		t.Errorf("the user's typing reached the disk: %q", disk)
	}
	if res := runTool(ctx, t, c, "replace", replaceArgs("a.txt", "mine", "theirs")); res.Status != tools.StatusSuccess {
		t.Fatal(res)
	}
	if disk := readFile(t, path); disk != "one\ntwo\n" {
		t.Errorf("an edit of a buffer with the user's unsaved change reached the disk: %q", disk)
	}
	if err := c.Editor().Save(uri); err != nil {
		t.Fatal(err)
	}
	if disk := undo("one\ntwo\nmine\n"); disk != "one\ntwo\ntheirs\n" {
		t.Errorf("after the user saved, an undo reached the disk: %q", disk)
	}
}

// commandOutput is the output a run_shell_command result reports, trimmed.
func commandOutput(result string) string {
	_, out, _ := strings.Cut(result, "\nOutput: ")
	out, _, _ = strings.Cut(out, "\nError: ")
	return strings.TrimSpace(out)
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

// TestCommandArgumentsAreObjects: every command the server advertises, and every
// agentls/* method, answers an argument that is not an object with InvalidParams
// naming what was called, before doing anything: the command table decodes each
// command's argument, the same way for all of them.
func TestCommandArgumentsAreObjects(t *testing.T) {
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := start(t, root)
	raw, err := c.Initialize(ctx, initParams(root, capsRich, nil))
	if err != nil {
		t.Fatal(err)
	}
	var init struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &init); err != nil {
		t.Fatal(err)
	}
	commands := init.Capabilities.ExecuteCommandProvider.Commands
	if len(commands) == 0 {
		t.Fatalf("no commands advertised: %s", raw)
	}
	for _, cmd := range commands {
		err := command(ctx, c, cmd, "not an object", nil)
		if want := "invalid arguments for " + cmd + ": want a JSON object"; codeOf(err) != lsptest.CodeInvalidParams || !strings.Contains(err.Error(), want) {
			t.Errorf("%s with a string argument: %v, want InvalidParams saying %q", cmd, err, want)
		}
	}
	for _, method := range []string{"agentls/runTool", "agentls/tools", "agentls/cancel", "agentls/sessions", "agentls/prompt"} {
		err := c.Call(ctx, method, []int{1}, nil)
		if want := "invalid arguments for " + method + ": want a JSON object"; codeOf(err) != lsptest.CodeInvalidParams || !strings.Contains(err.Error(), want) {
			t.Errorf("%s with an array: %v, want InvalidParams saying %q", method, err, want)
		}
	}
}
