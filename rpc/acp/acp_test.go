package acp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testutil"
)

// TestInitialize: version 1, the capabilities, and the API key method, which names the
// key to set; without a key session/new and authenticate (for a client without forms)
// answer auth_required.
func TestInitialize(t *testing.T) {
	tests := []struct {
		name    string
		key     bool
		version sdk.ProtocolVersion
	}{
		{"with a key", true, 1},
		{"without a key", false, 1},
		{"a newer client", true, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			root := t.TempDir()
			var extra []string
			if tt.key {
				_, extra = fakeModel(t)
			}
			a := start(t, env(t.TempDir(), t.TempDir(), extra...), nil)
			res, err := a.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			caps := res.AgentCapabilities
			if res.ProtocolVersion != 1 || !caps.LoadSession || !caps.PromptCapabilities.EmbeddedContext ||
				!caps.McpCapabilities.Http || !caps.McpCapabilities.Sse || caps.SessionCapabilities.List == nil {
				t.Errorf("initialize = %+v", res)
			}
			if res.AgentInfo == nil || res.AgentInfo.Name != "agentls" {
				t.Errorf("agentInfo = %+v", res.AgentInfo)
			}
			if len(res.AuthMethods) != 1 || res.AuthMethods[0].Agent == nil || res.AuthMethods[0].Agent.Id != "gemini-api-key" {
				t.Errorf("auth methods %+v, want the API key method", res.AuthMethods)
			}
			if tt.key {
				// Clients set up for Gemini CLI authenticate with its method ids.
				for _, m := range []string{"gemini-api-key", "oauth-personal"} {
					if _, err := a.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: m}); err != nil {
						t.Errorf("authenticate %s with a key: %v", m, err)
					}
				}
				return
			}
			if d := res.AuthMethods[0].Agent.Description; d == nil || !strings.Contains(*d, "GEMINI_API_KEY") {
				t.Fatalf("the API key method's description %v does not name GEMINI_API_KEY", d)
			}
			_, err = a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
			if codeOf(err) != -32000 || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
				t.Errorf("session/new without a key: %v, want auth_required naming GEMINI_API_KEY", err)
			}
			_, err = a.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: res.AuthMethods[0].Agent.Id})
			if codeOf(err) != -32000 {
				t.Errorf("authenticate without a key: %v, want auth_required", err)
			}
		})
	}
}

// TestTurn: one prompt through the whole loop: a thought, a read, an edit whose
// permission request carries its diff (allowed once, and the file changes), a shell
// command whose output streams, a plan, and the answer; then session/load in a new
// process replays it, and session/list lists it.
func TestTurn(t *testing.T) {
	ctx := testContext(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a1 := filepath.Join(root, "a.txt")
	os.WriteFile(a1, []byte("alpha\nbeta\n"), 0o644)
	fake, model := fakeModel(t,
		clients.Turn{Thought: "read it first", Calls: []clients.ScriptCall{call("r1", "read_file", map[string]any{"file_path": a1})}},
		clients.Turn{Calls: []clients.ScriptCall{call("e1", "replace", map[string]any{"file_path": a1, "old_string": "beta", "new_string": "gamma"})}},
		clients.Turn{Calls: []clients.ScriptCall{call("s1", "run_shell_command", map[string]any{"command": "echo first; echo second"})}},
		clients.Turn{Calls: []clients.ScriptCall{call("t1", "write_todos", map[string]any{"todos": []map[string]string{
			{"description": "edit a.txt", "status": "completed"}, {"description": "report", "status": "in_progress"}}})}},
		clients.Turn{Text: "Done: beta is gamma now.", Chunks: 2, Usage: &clients.Usage{PromptTokens: 40, OutputTokens: 7}},
	)
	cfg, state := t.TempDir(), t.TempDir()
	a := start(t, env(cfg, state, model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	if sess.Modes == nil || sess.Modes.CurrentModeId != "default" || len(sess.Modes.AvailableModes) != 4 {
		t.Errorf("modes = %+v", sess.Modes)
	}
	if len(sess.ConfigOptions) != 3 || sess.ConfigOptions[1].Select == nil || sess.ConfigOptions[1].Select.Id != "model" ||
		sess.ConfigOptions[2].Boolean == nil || sess.ConfigOptions[2].Boolean.Id != "thoughts" {
		t.Errorf("config options = %+v", sess.ConfigOptions)
	}

	res, err := a.prompt(ctx, sess.SessionId, "change beta to gamma in a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != sdk.StopReasonEndTurn || res.Usage == nil || res.Usage.InputTokens < 40 {
		t.Errorf("prompt = %+v, want end_turn with usage", res)
	}
	if got := readFile(t, a1); got != "alpha\ngamma\n" {
		t.Errorf("a.txt = %q after the allowed edit", got)
	}

	perms := a.client.takePermissions()
	var kinds []string
	for _, p := range perms {
		kinds = append(kinds, string(p.ToolCall.ToolCallId))
	}
	if len(perms) != 2 {
		t.Fatalf("permission requests for %v, want the edit and the command", kinds)
	}
	edit := perms[0]
	if len(edit.ToolCall.Content) != 1 || edit.ToolCall.Content[0].Diff == nil {
		t.Fatalf("the edit's permission request carries %+v, want its diff", edit.ToolCall.Content)
	}
	if d := edit.ToolCall.Content[0].Diff; d.Path != a1 || d.OldText == nil || *d.OldText != "alpha\nbeta\n" || d.NewText != "alpha\ngamma\n" {
		t.Errorf("diff = %+v", d)
	}
	// The options are the choices every front end offers, with their ids; the
	// "always" ones widest first, so that a client keeping the last of a kind keeps
	// the session's.
	var options []string
	for _, o := range edit.Options {
		options = append(options, fmt.Sprintf("%s %s %s", o.OptionId, o.Kind, o.Name))
	}
	if want := []string{"once allow_once Allow once", "always_save allow_always Always allow replace, and save it in your settings",
		"always allow_always Allow every edit for this session", "reject reject_once Reject",
		"reject_always reject_always Always reject replace for this session"}; !slices.Equal(options, want) {
		t.Errorf("options =\n  %q\nwant\n  %q", options, want)
	}

	var (
		thought, message, output strings.Builder
		started                  = map[string]*sdk.SessionUpdateToolCall{}
		ended                    = map[string]*sdk.SessionToolCallUpdate{}
		plans                    [][]sdk.PlanEntry
		usage                    *sdk.SessionUsageUpdate
	)
	for _, u := range a.client.take() {
		switch {
		case u.AgentThoughtChunk != nil:
			thought.WriteString(textOf(u.AgentThoughtChunk.Content))
		case u.AgentMessageChunk != nil:
			message.WriteString(textOf(u.AgentMessageChunk.Content))
		case u.ToolCall != nil:
			started[string(u.ToolCall.ToolCallId)] = u.ToolCall
		case u.ToolCallUpdate != nil:
			up := u.ToolCallUpdate
			if _, ok := started[string(up.ToolCallId)]; !ok {
				t.Errorf("tool_call_update of %s before its tool_call", up.ToolCallId)
			}
			if up.Status == nil && len(up.Content) > 0 && strings.HasSuffix(string(up.ToolCallId), "/s1") {
				output.Reset()
				output.WriteString(textOf(up.Content[0].Content.Content))
			}
			if up.Status != nil && (*up.Status == sdk.ToolCallStatusCompleted || *up.Status == sdk.ToolCallStatusFailed) {
				ended[string(up.ToolCallId)] = up
			}
		case u.Plan != nil:
			plans = append(plans, u.Plan.Entries)
		case u.UsageUpdate != nil:
			usage = u.UsageUpdate
		}
	}
	if thought.String() != "read it first" || message.String() != "Done: beta is gamma now." {
		t.Errorf("thought %q, message %q", thought.String(), message.String())
	}
	id := string(sess.SessionId)
	read := started[id+"/r1"]
	if read == nil || read.Kind != sdk.ToolKindRead || len(read.Locations) != 1 || read.Locations[0].Path != a1 || read.RawInput == nil {
		t.Errorf("read_file's tool_call = %+v", read)
	}
	for _, c := range []string{"r1", "e1", "s1", "t1"} {
		up := ended[id+"/"+c]
		if up == nil || *up.Status != sdk.ToolCallStatusCompleted || up.RawOutput == nil {
			t.Errorf("call %s ended with %+v, want completed with rawOutput", c, up)
		}
	}
	if e := ended[id+"/e1"]; e != nil && (len(e.Content) == 0 || e.Content[0].Diff == nil || e.Content[0].Diff.NewText != "alpha\ngamma\n") {
		t.Errorf("the edit's result shows %+v, want its diff", e.Content)
	}
	if s := started[id+"/s1"]; s == nil || s.Kind != sdk.ToolKindExecute {
		t.Errorf("the command's tool_call = %+v", s)
	}
	if !strings.Contains(output.String(), "first\nsecond") {
		t.Errorf("the command's streamed output = %q", output.String())
	}
	if len(plans) != 1 || len(plans[0]) != 2 || plans[0][0].Status != sdk.PlanEntryStatusCompleted || plans[0][1].Status != sdk.PlanEntryStatusInProgress {
		t.Errorf("plans = %+v", plans)
	}
	if usage == nil || usage.Used != 40 || usage.Size < 1<<20 {
		t.Errorf("usage_update = %+v, want the last request's 40 tokens of the model's window", usage)
	}
	if n := len(fake.Requests()); n < 5 {
		t.Errorf("the model got %d requests, want 5 turns", n)
	}

	// A second agent on the same store lists the session and replays it on load.
	b := start(t, env(cfg, state, model...), nil)
	b.initialize(ctx)
	list, err := b.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &root})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != sess.SessionId || list.Sessions[0].Cwd != root ||
		list.Sessions[0].Title == nil || *list.Sessions[0].Title != "change beta to gamma in a.txt" {
		t.Errorf("session/list = %+v", list)
	}
	other := t.TempDir()
	if list, _ := b.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &other}); len(list.Sessions) != 0 {
		t.Errorf("session/list of another cwd = %+v", list)
	}
	loaded, err := b.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sess.SessionId, Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Modes == nil || loaded.Modes.CurrentModeId != "default" {
		t.Errorf("session/load modes = %+v", loaded.Modes)
	}
	var replayed []string
	for _, u := range b.client.take() {
		switch {
		case u.UserMessageChunk != nil:
			replayed = append(replayed, "user "+textOf(u.UserMessageChunk.Content))
		case u.AgentMessageChunk != nil:
			replayed = append(replayed, "agent "+textOf(u.AgentMessageChunk.Content))
		case u.ToolCall != nil:
			replayed = append(replayed, "call "+string(u.ToolCall.ToolCallId))
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
			replayed = append(replayed, "end "+string(u.ToolCallUpdate.ToolCallId)+" "+string(*u.ToolCallUpdate.Status))
		}
	}
	want := []string{"user change beta to gamma in a.txt"}
	for _, c := range []string{"r1", "e1", "s1", "t1"} {
		want = append(want, "call "+id+"/"+c, "end "+id+"/"+c+" completed")
	}
	want = append(want, "agent Done: beta is gamma now.")
	if !slices.Equal(replayed, want) {
		t.Errorf("session/load replayed\n %q\nwant\n %q", replayed, want)
	}
}

// TestRejectAlways: "reject always" refuses the command, and every later call of the
// same program in the session without asking; the model is told, and the files stay.
func TestRejectAlways(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	for _, f := range []string{"x.txt", "y.txt"} {
		os.WriteFile(filepath.Join(root, f), []byte(f), 0o644)
	}
	fake, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("d1", "run_shell_command", map[string]any{"command": "rm x.txt"})}},
		clients.Turn{Calls: []clients.ScriptCall{call("d2", "run_shell_command", map[string]any{"command": "rm -f y.txt"})}},
		clients.Turn{Text: "I may not delete files."},
		clients.Turn{Calls: []clients.ScriptCall{call("d3", "run_shell_command", map[string]any{"command": "rm y.txt"})}},
		clients.Turn{Text: "Still not."},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "reject_always" })
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	for _, p := range []string{"delete x.txt and y.txt", "delete y.txt"} {
		res, err := a.prompt(ctx, sess.SessionId, p)
		if err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt %q = %+v, %v", p, res, err)
		}
	}
	if perms := a.client.takePermissions(); len(perms) != 1 {
		t.Errorf("%d permission requests, want 1: reject_always holds for the session", len(perms))
	}
	for _, f := range []string{"x.txt", "y.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	failed := 0
	for _, u := range a.client.take() {
		if up := u.ToolCallUpdate; up != nil && up.Status != nil && *up.Status == sdk.ToolCallStatusFailed {
			failed++
		}
	}
	if failed != 3 {
		t.Errorf("%d calls failed, want the 3 rejected", failed)
	}
	reqs, err := fake.GenerateRequests()
	if err != nil {
		t.Fatal(err)
	}
	last := reqs[1].Contents[len(reqs[1].Contents)-1]
	if len(last.Parts) != 1 || last.Parts[0].FunctionResponse == nil || !strings.Contains(string(last.Parts[0].FunctionResponse.Response), "error") {
		t.Errorf("the model was told %+v of the rejected call", last)
	}
}

// TestClientMCPServers: the MCP servers of session/new join the session's tools; a
// call of one is asked about with the server and tool named, and runs; their prompts
// are slash commands.
func TestClientMCPServers(t *testing.T) {
	entry := testutil.NPMServer(t, "server-everything")
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	fake, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("m1", "everything__echo", map[string]any{"message": "hello over MCP"})}},
		clients.Turn{Text: "echoed"},
		clients.Turn{Text: "sunny"},
		clients.Turn{Text: "take the umbrella"},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
	a.initialize(ctx)
	sess, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "everything", Command: "node", Args: []string{entry}, Env: []sdk.EnvVariable{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The server's prompts are slash commands, announced after the session/new answer;
	// "/args-prompt" is sent to the model as the prompt rendered with its arguments.
	var commands []sdk.AvailableCommand
	for len(commands) == 0 {
		for _, u := range a.client.take() {
			if u.AvailableCommandsUpdate != nil {
				commands = u.AvailableCommandsUpdate.AvailableCommands
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("no available_commands_update")
		case <-time.After(10 * time.Millisecond):
		}
	}
	hints := map[string]string{}
	for _, c := range commands {
		hints[c.Name] = ""
		if c.Input != nil && c.Input.Unstructured != nil {
			hints[c.Name] = c.Input.Unstructured.Hint
		}
	}
	if h, ok := hints["args-prompt"]; !ok || h != "--city=… [--state=…]" {
		t.Errorf("commands %+v, want args-prompt with its arguments' hint", hints)
	}
	if _, ok := hints["simple-prompt"]; !ok {
		t.Errorf("commands %+v, want simple-prompt", hints)
	}
	if res, err := a.prompt(ctx, sess.SessionId, "echo"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	perms := a.client.takePermissions()
	var texts []string
	for _, p := range perms {
		for _, c := range p.ToolCall.Content {
			if c.Content != nil {
				texts = append(texts, textOf(c.Content.Content))
			}
		}
	}
	if len(perms) != 1 || !strings.Contains(strings.Join(texts, "\n"), "echo of MCP server everything") {
		t.Errorf("%d permission requests, saying %q; want one naming the server's tool", len(perms), texts)
	}
	var out string
	for _, u := range a.client.take() {
		if up := u.ToolCallUpdate; up != nil && up.Status != nil && *up.Status == sdk.ToolCallStatusCompleted {
			for _, c := range up.Content {
				if c.Content != nil {
					out += textOf(c.Content.Content)
				}
			}
		}
	}
	if !strings.Contains(out, "hello over MCP") {
		t.Errorf("the MCP call showed %q", out)
	}

	if res, err := a.prompt(ctx, sess.SessionId, "/args-prompt --state=Texas Austin"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("/args-prompt = %+v, %v", res, err)
	}
	reqs, err := fake.GenerateRequests()
	if err != nil {
		t.Fatal(err)
	}
	last := reqs[len(reqs)-1].Contents
	if got := last[len(last)-1].Parts[0].Text; !strings.Contains(got, "What's weather in Austin, Texas?") {
		t.Errorf("the model was sent %q for /args-prompt", got)
	}

	// A file the command's line refers to is context after the rendered prompt, not
	// the last argument's words.
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("the umbrella is in the hall\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := a.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("/args-prompt Austin "),
		sdk.ResourceLinkBlock("notes.txt", "file://"+filepath.Join(root, "notes.txt")),
	}}); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("/args-prompt with a file = %+v, %v", res, err)
	}
	if reqs, err = fake.GenerateRequests(); err != nil {
		t.Fatal(err)
	}
	last = reqs[len(reqs)-1].Contents
	got := last[len(last)-1].Parts[0].Text
	if !strings.Contains(got, "What's weather in Austin?") || !strings.Contains(got, "Content from @notes.txt:\nthe umbrella is in the hall\n") {
		t.Errorf("the model was sent %q for /args-prompt with a file", got)
	}

	_, err = a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Command: "x"}}}})
	if codeOf(err) != -32602 || !strings.Contains(err.Error(), "no name") {
		t.Errorf("an MCP server without a name: %v", err)
	}
}

// TestAnswersHoldForTheirSession: an "always" answer in one ACP session allows the
// same command again in that session only; another session of the same connection
// is asked, as is a third after a "reject always" in the second.
func TestAnswersHoldForTheirSession(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	touch := func(id, file string) clients.Turn {
		return clients.Turn{Calls: []clients.ScriptCall{call(id, "run_shell_command", map[string]any{"command": "touch " + file})}}
	}
	_, model := fakeModel(t,
		touch("a1", "a1"), clients.Turn{Text: "made a1"},
		touch("a2", "a2"), clients.Turn{Text: "made a2"},
		touch("b1", "b1"), clients.Turn{Text: "not allowed"},
		touch("b2", "b2"), clients.Turn{Text: "still not"},
		touch("c1", "c1"), clients.Turn{Text: "made c1"},
	)
	answers := []sdk.PermissionOptionId{"allow_always", "reject_always", "allow_once"}
	var asked int
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId {
		asked++
		return answers[min(asked, len(answers))-1]
	})
	a.initialize(ctx)
	first, second, third := a.newSession(ctx, root), a.newSession(ctx, root), a.newSession(ctx, root)
	for _, p := range []struct {
		id   sdk.SessionId
		text string
	}{{first.SessionId, "a1"}, {first.SessionId, "a2"}, {second.SessionId, "b1"}, {second.SessionId, "b2"}, {third.SessionId, "c1"}} {
		if res, err := a.prompt(ctx, p.id, p.text); err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt %q = %+v, %v", p.text, res, err)
		}
	}
	if perms := a.client.takePermissions(); len(perms) != 3 {
		t.Errorf("%d permission requests, want 3 (a1, b1, c1): each session's answers are its own", len(perms))
	}
	for f, want := range map[string]bool{"a1": true, "a2": true, "b1": false, "b2": false, "c1": true} {
		if _, err := os.Stat(filepath.Join(root, f)); (err == nil) != want {
			t.Errorf("%s made: %v, want %v", f, err == nil, want)
		}
	}
}
