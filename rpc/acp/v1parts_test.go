package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// The parts of ACP v1 stabilised in 2026: session/list pages, session/delete,
// session/resume in its workspace, session_info_update, usage_update, message ids,
// additionalDirectories, $/cancel_request, the boolean config option, and live shell
// output by the _meta.terminal_* convention.

// storeSessions writes n stored sessions in the session store of an agent whose state
// is under state, started in root, each updated a second before the one before from
// the skip-th second before noon, and returns their ids, newest first.
func storeSessions(t testing.TB, state, root string, skip, n int) []string {
	t.Helper()
	dir := filepath.Join(state, "agentls", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	var ids []string
	for i := range n {
		at := t0.Add(-time.Duration(skip+i) * time.Second)
		id := fmt.Sprintf("%s-%08x", at.Format("20060102-150405.000"), skip+i)
		var b bytes.Buffer
		// As the store writes them: the type first.
		rootJSON, _ := json.Marshal(root)
		fmt.Fprintf(&b, `{"type":"session","id":%q,"created":%q,"model":"gemini-2.5-flash","roots":[%s]}`+"\n", id, at.Format(time.RFC3339), rootJSON)
		fmt.Fprintf(&b, `{"type":"prompt","text":"stored prompt %d\nmore","time":%q}`+"\n", skip+i, at.Format(time.RFC3339))
		path := filepath.Join(dir, id+".jsonl")
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// raw sends a request the Go SDK's client has no method for and returns its answer's
// result, or its error as a *sdk.RequestError.
func (a *agent) raw(ctx context.Context, id, method string, params any) (json.RawMessage, error) {
	a.t.Helper()
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := a.stdin.Write(append(line, '\n')); err != nil {
		a.t.Fatal(err)
	}
	for ctx.Err() == nil {
		for l := range strings.Lines(a.wire.String()) {
			var m struct {
				ID     json.RawMessage   `json:"id"`
				Result json.RawMessage   `json:"result"`
				Error  *sdk.RequestError `json:"error"`
			}
			if json.Unmarshal([]byte(l), &m) != nil || string(m.ID) != `"`+id+`"` {
				continue
			}
			if m.Error != nil {
				return nil, m.Error
			}
			return m.Result, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	a.t.Fatalf("no answer to %s", method)
	return nil, nil
}

// wantError fails t unless err is a JSON-RPC error with code whose message says says.
func wantError(t *testing.T, what string, err error, code int, says string) {
	t.Helper()
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != code || !strings.Contains(re.Message, says) {
		t.Errorf("%s: %v, want error %d saying %q", what, err, code, says)
	}
}

// TestSessionListPages: session/list over 120 stored sessions in two workspaces gives
// them newest first in pages with nextCursor, without a gap or a repeat, filtered by
// cwd; a cursor of another list, one no list gave and a relative cwd are refused with
// Invalid params, and the list still serves.
func TestSessionListPages(t *testing.T) {
	ctx := testContext(t)
	rootA, _ := filepath.EvalSymlinks(t.TempDir())
	rootB, _ := filepath.EvalSymlinks(t.TempDir())
	cfg, state := t.TempDir(), t.TempDir()
	inA := storeSessions(t, state, rootA, 0, 80)
	storeSessions(t, state, rootB, 80, 40)
	a := start(t, env(cfg, state, "GEMINI_API_KEY=test-key"), nil)
	init := a.initialize(ctx)
	// The Go SDK's type has no delete: it is read from the wire.
	if init.AgentCapabilities.SessionCapabilities.AdditionalDirectories == nil || !strings.Contains(a.wire.String(), `"delete":{}`) {
		t.Errorf("sessionCapabilities do not offer additionalDirectories and delete: %s", a.wire.String())
	}

	pages := func(cwd *string) ([]string, []sdk.SessionInfo, int) {
		var ids []string
		var infos []sdk.SessionInfo
		n := 0
		req := sdk.ListSessionsRequest{Cwd: cwd}
		for ; n < 20; n++ {
			res, err := a.conn.ListSessions(ctx, req)
			if err != nil {
				t.Fatalf("session/list: %v", err)
			}
			for _, s := range res.Sessions {
				ids = append(ids, string(s.SessionId))
				infos = append(infos, s)
			}
			if res.NextCursor == nil {
				return ids, infos, n + 1
			}
			req.Cursor = res.NextCursor
		}
		t.Fatal("the pages do not end")
		return nil, nil, 0
	}
	all, _, n := pages(nil)
	if len(all) != 120 || n < 3 {
		t.Errorf("%d sessions in %d pages, want 120 in several", len(all), n)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(all)))) != 120 {
		t.Errorf("a session listed twice")
	}
	got, infos, _ := pages(&rootA)
	if !slices.Equal(got, inA) {
		t.Errorf("the sessions of %s: %d, want %d newest first", rootA, len(got), len(inA))
	}
	if s := infos[0]; s.Cwd != rootA || s.Title == nil || *s.Title != "stored prompt 0" || s.UpdatedAt == nil || *s.UpdatedAt != "2026-06-01T12:00:00Z" {
		t.Errorf("first session: %+v", s)
	}

	first, err := a.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &rootA})
	if err != nil || first.NextCursor == nil {
		t.Fatalf("session/list of %s: %+v, %v", rootA, first, err)
	}
	_, err = a.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &rootB, Cursor: first.NextCursor})
	wantError(t, "a cursor of another cwd's list", err, -32602, "another workspace")
	_, err = a.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cursor: first.NextCursor})
	wantError(t, "a cursor of a cwd's list, without the cwd", err, -32602, "another workspace")
	_, err = a.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cursor: sdk.Ptr("bm90IGEgY3Vyc29y")})
	wantError(t, "a cursor no list gave", err, -32602, "invalid cursor")
	_, err = a.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr("relative")})
	wantError(t, "a relative cwd", err, -32602, "not an absolute path")
	if again, _, _ := pages(&rootA); !slices.Equal(again, inA) {
		t.Errorf("after the bad requests, the list has %d sessions of %s, want %d", len(again), rootA, len(inA))
	}
}

// TestSessionLifecycle: a session's first prompt gives it its title
// (session_info_update), each model request its usage_update, the chunks their
// message ids; session/resume in another workspace is refused; session/delete of a
// session answering a prompt, or from another process while this one has it open, is
// refused and deletes nothing, and once idle deletes it (gone from the list; resume
// then says not found); bad ids are refused.
func TestSessionLifecycle(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	other, _ := filepath.EvalSymlinks(t.TempDir())
	cfg, state := t.TempDir(), t.TempDir()
	_, model := fakeModel(t,
		clients.Turn{Text: "Hello.", Chunks: 2, Usage: &clients.Usage{PromptTokens: 1234}},
		clients.Turn{Text: "Thinking about it", Chunks: 1, Hang: true},
	)
	a := start(t, env(cfg, state, model...), nil)
	a.initialize(ctx)
	s := a.newSession(ctx, root)
	if res, err := a.prompt(ctx, s.SessionId, "\nSay hello\nto everyone"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	var title string
	var used, size int
	msgIDs := map[string]bool{}
	for _, u := range a.client.take() {
		switch {
		case u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Title != nil:
			title = *u.SessionInfoUpdate.Title
		case u.UsageUpdate != nil:
			used, size = u.UsageUpdate.Used, u.UsageUpdate.Size
		case u.AgentMessageChunk != nil:
			if u.AgentMessageChunk.MessageId == nil {
				t.Errorf("a message chunk without messageId")
			} else {
				msgIDs[*u.AgentMessageChunk.MessageId] = true
			}
		}
	}
	if title != "Say hello" {
		t.Errorf("session_info_update title %q, want %q", title, "Say hello")
	}
	if used != 1234 || size <= 0 {
		t.Errorf("usage_update used %d of %d, want 1234 of the model's window", used, size)
	}
	if len(msgIDs) != 1 {
		t.Errorf("the chunks of one answer have message ids %v, want one", msgIDs)
	}

	_, err := a.conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: s.SessionId, Cwd: other, McpServers: []sdk.McpServer{}})
	wantError(t, "session/resume in another workspace", err, -32602, "belongs to the workspace "+root)
	b := start(t, env(cfg, state, model...), nil)
	b.initialize(ctx)
	_, err = b.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: other, McpServers: []sdk.McpServer{}})
	wantError(t, "session/load of a stored session in another workspace", err, -32602, "belongs to the workspace "+root)
	// Another process cannot delete the session a holds open: it would be written again.
	file := filepath.Join(state, "agentls", "sessions", string(s.SessionId)+".jsonl")
	_, err = b.raw(ctx, "del-0", "session/delete", map[string]any{"sessionId": s.SessionId})
	wantError(t, "session/delete of a session another process has open", err, -32600, "open in another agentls process")
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the refused delete removed the session: %v", err)
	}

	// A prompt that hangs: the session cannot be deleted meanwhile.
	done := make(chan error, 1)
	go func() {
		res, err := a.prompt(ctx, s.SessionId, "and again")
		if err == nil && res.StopReason != sdk.StopReasonCancelled {
			err = fmt.Errorf("stop reason %s, want cancelled", res.StopReason)
		}
		done <- err
	}()
	for !strings.Contains(a.wire.String(), "Thinking about it") {
		time.Sleep(5 * time.Millisecond)
	}
	_, err = a.raw(ctx, "del-1", "session/delete", map[string]any{"sessionId": s.SessionId})
	wantError(t, "session/delete of a session answering a prompt", err, -32600, "session/cancel")
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the refused delete removed the session: %v", err)
	}
	if err := a.conn.Cancel(ctx, sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the cancelled prompt: %v", err)
	}
	if _, err := a.raw(ctx, "del-2", "session/delete", map[string]any{"sessionId": s.SessionId}); err != nil {
		t.Fatalf("session/delete: %v", err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the deleted session's file: %v", err)
	}
	list, err := a.conn.ListSessions(ctx, sdk.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 0 {
		t.Errorf("session/list after the delete: %+v, %v", list, err)
	}
	_, err = a.conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: s.SessionId, Cwd: root, McpServers: []sdk.McpServer{}})
	wantError(t, "session/resume of the deleted session", err, -32002, "session/list")
	_, err = a.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}})
	wantError(t, "a prompt to the deleted session", err, -32602, "unknown session")
	_, err = a.raw(ctx, "del-3", "session/delete", map[string]any{"sessionId": s.SessionId})
	wantError(t, "deleting it again", err, -32002, "no session")
	_, err = a.raw(ctx, "del-4", "session/delete", map[string]any{"sessionId": "../../x"})
	wantError(t, "deleting ../../x", err, -32602, "invalid session id")
	_, err = a.raw(ctx, "del-5", "session/delete", map[string]any{})
	wantError(t, "session/delete without an id", err, -32602, "sessionId")
}

// TestAdditionalDirectories: a session's additionalDirectories are roots its tools
// reach (a file there is read; one outside every root is not), listed with the
// session; a relative path, a missing folder, a folder of the user's keys and one of
// the settings' hiddenPaths are refused with Invalid params, and the agent serves on.
func TestAdditionalDirectories(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	extra, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	writeFile(t, extra, "b.txt", "in the extra root\n")
	writeFile(t, outside, "c.txt", "outside\n")
	cfg, state := t.TempDir(), t.TempDir()
	secret := filepath.Join(cfg, "secret")
	keys := filepath.Join(cfg, ".ssh")
	for _, d := range []string{secret, keys} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(cfg, "agentls"), "settings.json", `{"tools": {"sandbox": {"hiddenPaths": ["`+secret+`"]}}}`)
	fake, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{
			call("r1", "read_file", map[string]any{"file_path": filepath.Join(extra, "b.txt")}),
			call("r2", "read_file", map[string]any{"file_path": filepath.Join(outside, "c.txt")}),
		}},
		clients.Turn{Text: "Read."},
	)
	a := start(t, env(cfg, state, model...), nil)
	a.initialize(ctx)
	for _, tc := range []struct {
		name string
		dirs []string
		says string
	}{
		{"relative", []string{"rel/dir"}, "not an absolute path"},
		{"missing", []string{filepath.Join(extra, "nope")}, "not a directory"},
		{"the user's keys", []string{keys}, "keeps from commands"},
		{"a hidden path's folder", []string{filepath.Join(secret)}, "keeps from commands"},
	} {
		_, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, AdditionalDirectories: tc.dirs, McpServers: []sdk.McpServer{}})
		wantError(t, "additionalDirectories "+tc.name, err, -32602, tc.says)
	}
	s, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, AdditionalDirectories: []string{extra}, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new with an additional directory: %v", err)
	}
	if res, err := a.prompt(ctx, s.SessionId, "read both"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	reqs, err := fake.GenerateRequests()
	if err != nil || len(reqs) != 2 {
		t.Fatalf("%d model requests, %v", len(reqs), err)
	}
	responses, _ := json.Marshal(reqs[1].Contents[len(reqs[1].Contents)-1])
	if !strings.Contains(string(responses), "in the extra root") {
		t.Errorf("the file in the additional directory was not read: %s", responses)
	}
	if strings.Contains(string(responses), "outside\\n") || !strings.Contains(string(responses), "outside") {
		t.Errorf("the file outside every root: %s", responses)
	}
	list, err := a.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &root})
	if err != nil || len(list.Sessions) != 1 || !slices.Equal(list.Sessions[0].AdditionalDirectories, []string{extra}) {
		t.Errorf("session/list: %+v, %v; want the session with additionalDirectories [%s]", list, err, extra)
	}
}

// TestCancelRequestOfPrompt: a $/cancel_request of a session/prompt stops it as
// session/cancel does, and the prompt is answered (stopReason cancelled).
func TestCancelRequestOfPrompt(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	_, model := fakeModel(t, clients.Turn{Text: "Working on it", Chunks: 1, Hang: true}, clients.Turn{Text: "Next."})
	a := start(t, env(t.TempDir(), t.TempDir(), model...), nil)
	a.initialize(ctx)
	s := a.newSession(ctx, root)
	pctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := a.prompt(pctx, s.SessionId, "work")
		errc <- err
	}()
	for !strings.Contains(a.wire.String(), "Working on it") {
		time.Sleep(5 * time.Millisecond)
	}
	cancel() // the SDK's client withdraws the request with $/cancel_request
	<-errc
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(a.wire.String(), `"stopReason":"cancelled"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the withdrawn prompt was not answered cancelled:\n%s", a.wire.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The session is free for the next prompt.
	if res, err := a.prompt(ctx, s.SessionId, "next"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("the next prompt: %+v, %v", res, err)
	}
}

// TestThoughtsOption: the boolean config option "thoughts" (category model_config)
// asks the Gemini model for its reasoning from the next request on; a boolean for
// another option, and a value id for this one, are refused.
func TestThoughtsOption(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	fake, model := fakeModel(t, clients.Turn{Text: "One."}, clients.Turn{Thought: "Hmm.", Text: "Two."})
	a := start(t, env(t.TempDir(), t.TempDir(), model...), nil)
	a.initialize(ctx)
	s := a.newSession(ctx, root)
	option := func(opts []sdk.SessionConfigOption) *sdk.SessionConfigOptionBoolean {
		for _, o := range opts {
			if o.Boolean != nil && o.Boolean.Id == "thoughts" {
				return o.Boolean
			}
		}
		return nil
	}
	o := option(s.ConfigOptions)
	if o == nil || o.CurrentValue || o.Category == nil || *o.Category != "model_config" {
		t.Fatalf("the thoughts option of session/new: %+v", o)
	}
	set := func(v bool) {
		t.Helper()
		res, err := a.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{Boolean: &sdk.SetSessionConfigOptionBoolean{
			SessionId: s.SessionId, ConfigId: "thoughts", Type: "boolean", Value: v}})
		if err != nil {
			t.Fatalf("set thoughts %v: %v", v, err)
		}
		if o := option(res.ConfigOptions); o == nil || o.CurrentValue != v {
			t.Errorf("the answer's thoughts option: %+v, want %v", o, v)
		}
	}
	// Before the first prompt, when the session is not stored yet, and after it.
	set(true)
	if _, err := a.prompt(ctx, s.SessionId, "one"); err != nil {
		t.Fatal(err)
	}
	set(false)
	if _, err := a.prompt(ctx, s.SessionId, "two"); err != nil {
		t.Fatal(err)
	}
	reqs, err := fake.GenerateRequests()
	if err != nil || len(reqs) != 2 {
		t.Fatalf("%d requests, %v", len(reqs), err)
	}
	if !strings.Contains(string(reqs[0].GenerationConfig), `"includeThoughts":true`) || strings.Contains(string(reqs[1].GenerationConfig), "includeThoughts") {
		t.Errorf("generationConfig with thoughts: %s; without: %s", reqs[0].GenerationConfig, reqs[1].GenerationConfig)
	}
	_, err = a.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{Boolean: &sdk.SetSessionConfigOptionBoolean{
		SessionId: s.SessionId, ConfigId: "mode", Type: "boolean", Value: true}})
	wantError(t, "a boolean for the mode", err, -32602, "not a boolean")
	_, err = a.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: s.SessionId, ConfigId: "thoughts", Value: "yes"}})
	wantError(t, "a value id for thoughts", err, -32602, "takes a boolean")
}

// TestLiveShellOutput: for a client of the _meta.terminal_output convention without
// terminals, a shell command is a terminal of its call: terminal_info, its output as
// terminal_output chunks, bounded to its head and tail with a line saying what was
// left out and where the whole output is, and terminal_exit with the exit code.
func TestLiveShellOutput(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	_, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("s1", "run_shell_command", map[string]any{"command": "seq 1 60000"})}},
		clients.Turn{Calls: []clients.ScriptCall{call("s2", "run_shell_command", map[string]any{"command": "echo short; exit 3"})}},
		clients.Turn{Text: "Ran them."},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
	a.initializeWith(ctx, sdk.ClientCapabilities{Meta: map[string]any{"terminal_output": true}})
	s := a.newSession(ctx, root)
	if res, err := a.prompt(ctx, s.SessionId, "run"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	type shown struct {
		info, exit map[string]any
		data       strings.Builder
		chunks     int
		terminal   bool
	}
	calls := map[string]*shown{}
	get := func(id sdk.ToolCallId) *shown {
		if calls[string(id)] == nil {
			calls[string(id)] = &shown{}
		}
		return calls[string(id)]
	}
	for _, u := range a.client.take() {
		var meta map[string]any
		var content []sdk.ToolCallContent
		var c *shown
		switch {
		case u.ToolCall != nil:
			c, meta, content = get(u.ToolCall.ToolCallId), u.ToolCall.Meta, u.ToolCall.Content
		case u.ToolCallUpdate != nil:
			c, meta, content = get(u.ToolCallUpdate.ToolCallId), u.ToolCallUpdate.Meta, u.ToolCallUpdate.Content
			for _, b := range content {
				if b.Content != nil && strings.Contains(textOf(b.Content.Content), "59999") {
					t.Errorf("the output came as text content too")
				}
			}
		default:
			continue
		}
		for _, b := range content {
			if b.Terminal != nil && b.Terminal.TerminalId == "" {
				t.Errorf("a terminal without an id")
			}
			c.terminal = c.terminal || b.Terminal != nil
		}
		if m, ok := meta["terminal_info"].(map[string]any); ok {
			c.info = m
		}
		if m, ok := meta["terminal_output"].(map[string]any); ok {
			c.data.WriteString(m["data"].(string))
			c.chunks++
		}
		if m, ok := meta["terminal_exit"].(map[string]any); ok {
			c.exit = m
		}
	}
	long, short := calls[string(s.SessionId)+"/s1"], calls[string(s.SessionId)+"/s2"]
	if long == nil || short == nil {
		t.Fatalf("tool calls shown: %v", slices.Collect(maps.Keys(calls)))
	}
	if !long.terminal || long.info["terminal_id"] != string(s.SessionId)+"/s1" || long.info["cwd"] != root {
		t.Errorf("the long command's terminal: content %v, terminal_info %v", long.terminal, long.info)
	}
	out := long.data.String()
	if !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "59999\n60000\n") {
		t.Errorf("the live output does not start with the head and end with the tail: %q … %q", out[:min(20, len(out))], out[max(0, len(out)-20):])
	}
	if len(out) > 140<<10 || !strings.Contains(out, "bytes of output are not shown here; the full output is saved in ") {
		t.Errorf("the live output is %d bytes (whole: %d), with the note: %v", len(out), len(seq(60000)), strings.Contains(out, "not shown here"))
	}
	if code, _ := long.exit["exit_code"].(float64); long.exit == nil || code != 0 || long.chunks < 2 {
		t.Errorf("the long command: terminal_exit %v after %d chunks", long.exit, long.chunks)
	}
	if code, _ := short.exit["exit_code"].(float64); short.exit == nil || code != 3 || short.data.String() != "short\n" {
		t.Errorf("the short command: terminal_exit %v, output %q", short.exit, short.data.String())
	}
}

// seq is the output of seq 1 n.
func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}
