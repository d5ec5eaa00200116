package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/settings"
)

// The prompt tests run the server in this process (lsptest.Serve) with a real Gemini
// client (clients.NewGemini) talking to a fake Gemini API on loopback
// (internal/fakegemini) that replays a script: everything between the editor's
// request and the model's HTTP server is the real thing.

// agentServer is an in-process server with a model.
type agentServer struct {
	t        *testing.T
	root     string
	stateDir string
	fake     *fakegemini.Server
	log      *testutil.Buffer
}

// newAgent starts a fake Gemini API serving turns, for servers in root keeping their
// sessions in stateDir (a new temporary directory when empty).
func newAgent(t *testing.T, root, stateDir string, turns ...clients.Turn) *agentServer {
	t.Helper()
	if stateDir == "" {
		stateDir = t.TempDir()
	}
	fake := fakegemini.Start(clients.Script{Turns: turns})
	t.Cleanup(fake.Close)
	return &agentServer{t: t, root: root, stateDir: stateDir, fake: fake, log: &testutil.Buffer{}}
}

// newClient is the Options.NewClient of the servers: Gemini at the fake server.
func (a *agentServer) newClient(ctx context.Context, _ settings.Settings) (clients.Client, error) {
	return clients.NewGemini(ctx, clients.GeminiOptions{APIKey: "test-key", BaseURL: a.fake.URL,
		Retry: clients.RetryPolicy{Attempts: 1}})
}

// serve starts a server with options (NewClient defaulting to the fake Gemini) and
// initializes it for a client with caps.
func (a *agentServer) serve(caps map[string]any, initOptions any, o rpc.Options) *lsptest.Client {
	t := a.t
	t.Helper()
	if o.NewClient == nil {
		o.NewClient = a.newClient
	}
	if o.ConfigDir == "" {
		o.ConfigDir = t.TempDir()
	}
	if o.StateDir == "" {
		o.StateDir = a.stateDir
	}
	o.Logger = slog.New(slog.NewTextHandler(a.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", a.log.String())
		}
	})
	c := lsptest.Serve(t, func(in io.Reader, out io.Writer) int {
		return rpc.New(o).Serve(context.Background(), in, out)
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := c.Initialize(ctx, initParams(a.root, caps, initOptions)); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// promptResult is PromptResult.
type promptResult struct {
	Session    string `json:"session"`
	StopReason string `json:"stopReason"`
	Text       string `json:"text"`
	Usage      *struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Transcript string `json:"transcript"`
}

// update is an agentls/update, its kind-specific fields decoded as far as the tests
// read them.
type update struct {
	Session string
	Kind    string `json:"kind"`
	Text    string `json:"text"`
	// tool_call, tool_call_update
	ToolCallID string `json:"toolCallId"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	Output     string `json:"output"`
	Summary    string `json:"summary"`
	// ParentToolCallID is a sub-agent's call's invoke_agent call.
	ParentToolCallID string `json:"parentToolCallId"`
	// turn_end
	StopReason string `json:"stopReason"`
	Usage      *struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
	} `json:"usage"`
	// current_mode_update
	Mode string `json:"mode"`
	// plan
	Entries []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"entries"`
}

// updates returns the agentls/update notifications received for session.
func updates(t *testing.T, c *lsptest.Client, session string) []update {
	t.Helper()
	var out []update
	for _, m := range c.Received("agentls/update") {
		var p struct {
			Session string          `json:"session"`
			Update  json.RawMessage `json:"update"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatalf("agentls/update %s: %v", m.Params, err)
		}
		if p.Session != session {
			continue
		}
		var u update
		if err := json.Unmarshal(p.Update, &u); err != nil {
			t.Fatalf("agentls/update %s: %v", m.Params, err)
		}
		u.Session = p.Session
		out = append(out, u)
	}
	return out
}

// answerConfirmations makes the rich client allow every call once, recording what it
// was asked.
func answerConfirmations(c *lsptest.Client) *[]string {
	var asked []string
	var mu sync.Mutex
	c.Handle("agentls/confirm", func(_ context.Context, params json.RawMessage) (any, error) {
		var d struct {
			ToolCallID string `json:"toolCallId"`
		}
		json.Unmarshal(params, &d)
		mu.Lock()
		asked = append(asked, d.ToolCallID)
		mu.Unlock()
		return map[string]any{"outcome": "proceed_once"}, nil
	})
	return &asked
}

func call(name string, args map[string]any, id string) clients.ScriptCall {
	raw, _ := json.Marshal(args)
	return clients.ScriptCall{Name: name, Args: raw, ID: id}
}

// TestPromptTurn: a prompt whose model reads a file, writes a plan, edits the file
// (applied by the editor after a confirmation) and runs a shell command; the rich
// client sees it all as agentls/update in order, the model gets every result under
// its own call ids, and the prompt's result is the model's final answer.
func TestPromptTurn(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"notes.txt": "hello\nworld\n"})
	file := filepath.Join(root, "notes.txt")
	a := newAgent(t, root, "",
		clients.Turn{Text: "Let me read the file first.", Calls: []clients.ScriptCall{
			call("read_file", map[string]any{"file_path": file}, "c1"),
			call("write_todos", map[string]any{"todos": []map[string]any{
				{"description": "Read notes", "status": "completed"}, {"description": "Fix the greeting", "status": "in_progress"}}}, "c2"),
		}},
		clients.Turn{Text: "Now the edit.", Calls: []clients.ScriptCall{
			call("replace", map[string]any{"file_path": file, "old_string": "hello", "new_string": "hello there"}, "c3"),
		}},
		clients.Turn{Calls: []clients.ScriptCall{call("run_shell_command", map[string]any{"command": "echo shell-ran"}, "c4")}},
		clients.Turn{Text: "All done: the greeting is fixed.", Chunks: 4,
			Usage: &clients.Usage{PromptTokens: 1200, OutputTokens: 40}},
	)
	c := a.serve(capsRich, nil, rpc.Options{})
	asked := answerConfirmations(c)
	uri := lsptest.FileURI(file)
	if err := c.Editor().Open(uri, "hello\nworld\n"); err != nil {
		t.Fatal(err)
	}
	var res promptResult
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "fix the greeting in notes.txt"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Session == "" || res.StopReason != "end_turn" || res.Text != "All done: the greeting is fixed." || res.Error != nil {
		t.Errorf("result %+v, want end_turn with the final answer", res)
	}
	if res.Usage == nil || res.Usage.OutputTokens < 40 {
		t.Errorf("usage %+v, want the summed usage", res.Usage)
	}
	if doc, _ := c.Editor().Doc(uri); doc.Text != "hello there\nworld\n" {
		t.Errorf("editor text %q, want the edit applied", doc.Text)
	}
	if got := readFile(t, file); got != "hello\nworld\n" {
		t.Errorf("disk %q: the edit went to the editor's buffer, not the disk", got)
	}

	ups := updates(t, c, res.Session)
	var text strings.Builder
	var seq []string // the order of what happened
	for _, u := range ups {
		switch u.Kind {
		case "message_chunk":
			text.WriteString(u.Text)
			seq = append(seq, "text:"+u.Text)
		case "tool_call":
			seq = append(seq, "call:"+u.Name+":"+u.Status)
		case "tool_call_update":
			if u.Status == "completed" || u.Status == "failed" || u.Status == "cancelled" {
				seq = append(seq, "end:"+u.ToolCallID+":"+u.Status)
			}
		case "plan":
			seq = append(seq, "plan")
		case "turn_end":
			seq = append(seq, "turn_end:"+u.StopReason)
		}
	}
	if want := "Let me read the file first.Now the edit.All done: the greeting is fixed."; text.String() != want {
		t.Errorf("message chunks make %q, want %q", text.String(), want)
	}
	joined := strings.Join(seq, "\n")
	sid := res.Session
	// read_file and write_todos run together: each in order, both before the edit.
	first, edit := strings.Index(joined, "text:Let me read the file first."), strings.Index(joined, "text:Now the edit.")
	for _, pair := range [][2]string{{"call:read_file:pending", "end:" + sid + "/c1:completed"}, {"call:write_todos:pending", "plan"},
		{"plan", "end:" + sid + "/c2:completed"}} {
		i, j := strings.Index(joined, pair[0]), strings.Index(joined, pair[1])
		if first < 0 || i < first || j < i || edit < j {
			t.Errorf("updates: want %q, then %q, between the first text and the second:\n%s", pair[0], pair[1], joined)
		}
	}
	order := []string{
		"text:Let me read the file first.",
		"text:Now the edit.",
		"call:replace:pending", "end:" + sid + "/c3:completed",
		"call:run_shell_command:pending", "end:" + sid + "/c4:completed",
		"text:All done",
		"turn_end:end_turn",
	}
	at := 0
	for _, w := range order {
		i := strings.Index(joined[at:], w)
		if i < 0 {
			t.Fatalf("updates out of order or missing %q after position %d:\n%s", w, at, joined)
		}
		at += i + len(w)
	}
	if last := ups[len(ups)-1]; last.Kind != "turn_end" || last.Usage == nil || last.Usage.OutputTokens < 40 {
		t.Errorf("last update %+v, want turn_end with the usage", last)
	}
	for _, u := range ups {
		if u.Kind == "plan" && (len(u.Entries) != 2 || u.Entries[1].Content != "Fix the greeting" || u.Entries[1].Status != "in_progress") {
			t.Errorf("plan %+v, want the todo list", u.Entries)
		}
		if u.Kind == "tool_call_update" && u.ToolCallID == sid+"/c4" && u.Output != "" && !strings.Contains(u.Output, "shell-ran") {
			t.Errorf("shell output chunk %q", u.Output)
		}
	}
	if !slices.Equal(*asked, []string{sid + "/c3", sid + "/c4"}) {
		t.Errorf("confirmations asked for %v, want the edit and the command", *asked)
	}

	// The model got each result under its own id.
	reqs, err := a.fake.GenerateRequests()
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want 4", len(reqs))
	}
	responses := map[string]string{}
	for _, content := range reqs[3].Contents {
		for _, p := range content.Parts {
			if fr := p.FunctionResponse; fr != nil {
				responses[fr.ID] = string(fr.Response)
			}
		}
	}
	for id, want := range map[string]string{"c1": "world", "c3": "notes.txt", "c4": "shell-ran"} {
		if !strings.Contains(responses[id], want) {
			t.Errorf("function response %s = %s, want it to mention %q", id, responses[id], want)
		}
	}
}

// promptUntilStreaming sends a prompt and waits for its first message chunk; it
// returns the request and the session's id.
func promptUntilStreaming(ctx context.Context, t *testing.T, c *lsptest.Client, params map[string]any) (*lsptest.Pending, string) {
	t.Helper()
	p := c.Go("agentls/prompt", params)
	m, err := c.WaitFor(ctx, "agentls/update", func(m lsptest.Message) bool {
		return strings.Contains(string(m.Params), `"message_chunk"`)
	})
	if err != nil {
		t.Fatal(err)
	}
	var u struct {
		Session string `json:"session"`
	}
	json.Unmarshal(m.Params, &u)
	return p, u.Session
}

// TestPromptCancel: agentls/cancel, agentls.cancel and $/cancelRequest stop a prompt
// whose model is still streaming; it is answered with stopReason cancelled, and the
// session takes the next prompt.
func TestPromptCancel(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"agentls/cancel", "agentls.cancel", "$/cancelRequest"} {
		t.Run(how, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, nil)
			a := newAgent(t, root, "",
				clients.Turn{Text: "Thinking about it", Hang: true},
				clients.Turn{Text: "Second answer."})
			c := a.serve(capsRich, nil, rpc.Options{})
			p, sid := promptUntilStreaming(ctx, t, c, map[string]any{"prompt": "take your time"})
			switch how {
			case "agentls/cancel":
				if err := c.Notify("agentls/cancel", map[string]any{"session": sid}); err != nil {
					t.Fatal(err)
				}
			case "agentls.cancel":
				if err := command(ctx, c, "agentls.cancel", map[string]any{"session": sid}, nil); err != nil {
					t.Fatal(err)
				}
			case "$/cancelRequest":
				if err := c.Cancel(p.ID()); err != nil {
					t.Fatal(err)
				}
			}
			var res promptResult
			if err := p.Wait(ctx, &res); err != nil {
				t.Fatal(err)
			}
			if res.StopReason != "cancelled" || res.Session != sid {
				t.Errorf("result %+v, want cancelled in session %s", res, sid)
			}
			ups := updates(t, c, sid)
			if last := ups[len(ups)-1]; last.Kind != "turn_end" || last.StopReason != "cancelled" {
				t.Errorf("last update %+v, want turn_end cancelled", last)
			}
			var next promptResult
			if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "again", "session": sid}, &next); err != nil {
				t.Fatal(err)
			}
			if next.StopReason != "end_turn" || next.Text != "Second answer." {
				t.Errorf("next prompt %+v", next)
			}
		})
	}
}

// TestPromptOneAtATime: a second prompt to a session that is answering one is refused,
// saying so; prompts of other sessions run meanwhile.
func TestPromptOneAtATime(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	a := newAgent(t, root, "",
		clients.Turn{Text: "Working", Hang: true},
		clients.Turn{Text: "Another session answers."})
	c := a.serve(capsRich, nil, rpc.Options{})
	p, sid := promptUntilStreaming(ctx, t, c, map[string]any{"prompt": "long task"})
	err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "and this too", "session": sid}, nil)
	if codeOf(err) != -32803 || !strings.Contains(err.Error(), "already answering a prompt") {
		t.Errorf("second prompt: %v, want a refusal saying the session is busy", err)
	}
	var other promptResult
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "a new session"}, &other); err != nil {
		t.Fatal(err)
	}
	if other.Session == sid || other.Text != "Another session answers." {
		t.Errorf("another session's prompt: %+v", other)
	}
	if err := c.Notify("agentls/cancel", map[string]any{"session": sid}); err != nil {
		t.Fatal(err)
	}
	var res promptResult
	if err := p.Wait(ctx, &res); err != nil || res.StopReason != "cancelled" {
		t.Errorf("the first prompt: %+v, %v", res, err)
	}
}

// TestPromptResume: a session of a server that has gone is resumed by id by the next
// server with the same state directory, and its model gets the earlier history;
// agentls.listSessions lists it. An unknown id is refused by name.
func TestPromptResume(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	stateDir := t.TempDir()
	a1 := newAgent(t, root, stateDir, clients.Turn{Text: "Noted: pineapple."})
	c1 := a1.serve(capsRich, nil, rpc.Options{})
	var first promptResult
	if err := c1.Call(ctx, "agentls/prompt", map[string]any{"prompt": "remember the word pineapple"}, &first); err != nil {
		t.Fatal(err)
	}
	if code, err := c1.Shutdown(ctx); code != 0 || err != nil {
		t.Fatalf("shutdown: %d %v", code, err)
	}

	a2 := newAgent(t, root, stateDir, clients.Turn{Text: "The word was pineapple."})
	c2 := a2.serve(capsRich, nil, rpc.Options{})
	var second promptResult
	if err := c2.Call(ctx, "agentls/prompt", map[string]any{"prompt": "which word?", "session": first.Session}, &second); err != nil {
		t.Fatal(err)
	}
	if second.Session != first.Session || second.StopReason != "end_turn" {
		t.Errorf("resumed prompt %+v, want session %s", second, first.Session)
	}
	reqs, err := a2.fake.GenerateRequests()
	if err != nil || len(reqs) != 1 {
		t.Fatalf("model calls %d, %v", len(reqs), err)
	}
	var history []string
	for _, content := range reqs[0].Contents {
		for _, p := range content.Parts {
			history = append(history, content.Role+": "+p.Text)
		}
	}
	want := []string{"user: remember the word pineapple", "model: Noted: pineapple.", "user: which word?"}
	if !slices.Equal(history, want) {
		t.Errorf("the resumed model got\n%s\nwant\n%s", strings.Join(history, "\n"), strings.Join(want, "\n"))
	}

	var list []struct {
		ID      string    `json:"id"`
		Title   string    `json:"title"`
		Created time.Time `json:"created"`
		Updated time.Time `json:"updated"`
		Prompts int       `json:"prompts"`
	}
	if err := command(ctx, c2, "agentls.listSessions", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != first.Session || list[0].Prompts != 2 || !strings.Contains(list[0].Title, "pineapple") ||
		list[0].Created.IsZero() || list[0].Updated.Before(list[0].Created) {
		t.Errorf("agentls.listSessions = %+v", list)
	}
	var viaMethod []map[string]any
	if err := c2.Call(ctx, "agentls/sessions", nil, &viaMethod); err != nil || len(viaMethod) != 1 {
		t.Errorf("agentls/sessions = %v, %v", viaMethod, err)
	}

	err = c2.Call(ctx, "agentls/prompt", map[string]any{"prompt": "hi", "session": "no-such-session"}, nil)
	if codeOf(err) != lsptest.CodeInvalidParams || !strings.Contains(err.Error(), `"no-such-session"`) {
		t.Errorf("an unknown session: %v, want InvalidParams naming it", err)
	}
}

// TestPromptTranscript: a client without agentls/update gets the answer in the
// session's transcript, opened with window/showDocument after the session's first
// prompt where the client supports it, and a window/showMessage at the end of each
// prompt.
func TestPromptTranscript(t *testing.T) {
	t.Parallel()
	for _, showDocument := range []bool{true, false} {
		t.Run(map[bool]string{true: "showDocument", false: "no showDocument"}[showDocument], func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, map[string]string{"a.txt": "alpha\n"})
			file := filepath.Join(root, "a.txt")
			a := newAgent(t, root, "",
				clients.Turn{Text: "I will read it.", Calls: []clients.ScriptCall{call("read_file", map[string]any{"file_path": file}, "r1")}},
				clients.Turn{Text: "It says **alpha**."},
				clients.Turn{Text: "Still alpha."})
			caps := capsEditor
			if showDocument {
				caps = withCaps(capsEditor, "window", map[string]any{"showDocument": map[string]any{"support": true}})
			}
			var shown []string
			done := make(chan struct{}, 4)
			c := a.serve(caps, nil, rpc.Options{})
			c.Handle("window/showDocument", func(_ context.Context, params json.RawMessage) (any, error) {
				var p struct {
					URI string `json:"uri"`
				}
				json.Unmarshal(params, &p)
				shown = append(shown, p.URI)
				done <- struct{}{}
				return map[string]any{"success": true}, nil
			})
			uri := lsptest.FileURI(file)
			var res promptResult
			err := command(ctx, c, "agentls.prompt", map[string]any{"prompt": "what does a.txt say?", "uri": uri,
				"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 5}}}, &res)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != "end_turn" || res.Text != "It says **alpha**." {
				t.Errorf("result %+v", res)
			}
			want := filepath.Join(a.stateDir, "transcripts", res.Session+".md")
			if res.Transcript != want {
				t.Errorf("transcript %q, want %q", res.Transcript, want)
			}
			got := readFile(t, want)
			for _, w := range []string{
				"# agentls session " + res.Session,
				"> what does a.txt say?",
				"Context: [a.txt:1](" + uri + "#L1)",
				"I will read it.",
				"- Tool call **completed** `read_file`",
				"](" + uri + ")",
				"It says **alpha**.",
				"the answer is complete (end_turn)",
			} {
				if !strings.Contains(got, w) {
					t.Errorf("transcript lacks %q:\n%s", w, got)
				}
			}
			if strings.Index(got, "I will read it.") > strings.Index(got, "`read_file`") ||
				strings.Index(got, "`read_file`") > strings.Index(got, "It says") {
				t.Errorf("transcript out of order:\n%s", got)
			}
			msg, err := c.WaitFor(ctx, "window/showMessage", func(m lsptest.Message) bool { return strings.Contains(string(m.Params), "end_turn") })
			if err != nil || !strings.Contains(string(msg.Params), res.Session+".md") {
				t.Errorf("showMessage %s, %v: want the outcome and the transcript", msg.Params, err)
			}
			if len(c.Received("agentls/update")) != 0 {
				t.Errorf("a client without agentls.updates got agentls/update")
			}

			// The session's second prompt appends; it is not shown again.
			if err := command(ctx, c, "agentls.prompt", map[string]any{"prompt": "and now?", "session": res.Session}, &res); err != nil {
				t.Fatal(err)
			}
			got = readFile(t, want)
			if !strings.Contains(got, "> and now?") || !strings.Contains(got, "Still alpha.") || strings.Count(got, "# agentls session") != 1 {
				t.Errorf("transcript after the second prompt:\n%s", got)
			}
			if _, err := c.WaitFor(ctx, "window/showMessage", func(m lsptest.Message) bool {
				return strings.Count(string(m.Params), "end_turn") > 0 && m.Params != nil
			}); err != nil {
				t.Fatal(err)
			}
			if n := len(c.Received("window/showMessage")); n != 2 {
				t.Errorf("%d showMessage, want one per prompt", n)
			}
			// A showDocument is sent asynchronously: a shutdown waits for it to be answered.
			if _, err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			wantShown := 0
			if showDocument {
				wantShown = 1
			}
			if n := len(c.Received("window/showDocument")); n != wantShown {
				t.Errorf("%d showDocument, want %d", n, wantShown)
			}
			if showDocument && (len(shown) != 1 || shown[0] != lsptest.FileURI(want)) {
				t.Errorf("showDocument %v, want the transcript", shown)
			}
		})
	}
}

// TestPromptCodeActions: "Ask agentls to fix this" on any diagnostic and "Run agentls
// instruction" on an agentls: line prompt with their context; without a model they are
// not offered.
func TestPromptCodeActions(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	text := "package main\n\nfunc main() {\n\tx := 1 // agentls: rename x to count\n}\n"
	root := workspaceDir(t, map[string]string{"main.go": text})
	file := filepath.Join(root, "main.go")
	uri := lsptest.FileURI(file)
	a := newAgent(t, root, "", clients.Turn{Text: "Fixed."}, clients.Turn{Text: "Renamed."})
	caps := withCaps(capsEditor, "textDocument", map[string]any{
		"publishDiagnostics": map[string]any{},
		"codeAction":         map[string]any{"codeActionLiteralSupport": map[string]any{"codeActionKind": map[string]any{"valueSet": []string{"quickfix", "refactor"}}}},
	})
	c := a.serve(caps, nil, rpc.Options{})
	if err := c.Editor().Open(uri, text); err != nil {
		t.Fatal(err)
	}
	foreign := map[string]any{
		"range":    map[string]any{"start": map[string]any{"line": 3, "character": 1}, "end": map[string]any{"line": 3, "character": 2}},
		"severity": 1, "source": "compiler", "code": 7, "message": "declared and not used: x",
		"data": []any{"not", "an", "object"},
	}
	type action struct {
		Title       string            `json:"title"`
		Kind        string            `json:"kind"`
		Diagnostics []json.RawMessage `json:"diagnostics"`
		Command     struct {
			Command   string           `json:"command"`
			Arguments []map[string]any `json:"arguments"`
		} `json:"command"`
	}
	var actions []action
	err := c.Call(ctx, "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        map[string]any{"start": map[string]any{"line": 3, "character": 1}, "end": map[string]any{"line": 3, "character": 1}},
		"context":      map[string]any{"diagnostics": []any{foreign}},
	}, &actions)
	if err != nil {
		t.Fatal(err)
	}
	byTitle := map[string]action{}
	for _, ac := range actions {
		byTitle[ac.Title] = ac
	}
	fix, ok := byTitle["Ask agentls to fix this"]
	if !ok || fix.Kind != "quickfix" || fix.Command.Command != "agentls.prompt" || len(fix.Diagnostics) != 1 ||
		!strings.Contains(string(fix.Diagnostics[0]), "declared and not used") {
		t.Fatalf("actions %+v, want Ask agentls to fix this with the diagnostic", actions)
	}
	instr, ok := byTitle["Run agentls instruction"]
	if !ok || instr.Kind != "refactor.rewrite" || instr.Command.Command != "agentls.prompt" {
		t.Fatalf("actions %+v, want Run agentls instruction", actions)
	}
	if got := instr.Command.Arguments[0]["prompt"]; got != "rename x to count" {
		t.Errorf("instruction prompt %q", got)
	}

	// Executing them prompts with their context: the model is told the file, the
	// lines and the diagnostic.
	for i, ac := range []action{fix, instr} {
		var res promptResult
		if err := command(ctx, c, ac.Command.Command, ac.Command.Arguments[0], &res); err != nil {
			t.Fatal(err)
		}
		if res.StopReason != "end_turn" {
			t.Errorf("%s: %+v", ac.Title, res)
		}
		reqs, err := a.fake.GenerateRequests()
		if err != nil || len(reqs) != i+1 {
			t.Fatalf("model calls %d, %v", len(reqs), err)
		}
		req := reqs[i]
		var system, user strings.Builder
		if req.SystemInstruction != nil {
			for _, p := range req.SystemInstruction.Parts {
				system.WriteString(p.Text)
			}
		}
		for _, p := range req.Contents[len(req.Contents)-1].Parts {
			user.WriteString(p.Text)
		}
		all := system.String() + "\n" + user.String()
		wants := []string{file, "x := 1 // agentls: rename x to count"}
		if ac.Title == fix.Title {
			wants = append(wants, "declared and not used: x", "compiler")
		} else if !strings.Contains(user.String(), "rename x to count") {
			t.Errorf("the instruction's prompt is %q", user.String())
		}
		for _, w := range wants {
			if !strings.Contains(all, w) {
				t.Errorf("%s: the model was not told %q:\nsystem: %s\nuser: %s", ac.Title, w, system.String(), user.String())
			}
		}
		if !strings.Contains(all, "4") {
			t.Errorf("%s: the model was not told the line", ac.Title)
		}
	}

	// Restricted to quickfix: no instruction. (Without a model: see
	// TestPromptWithoutModel.)
	if err := c.Call(ctx, "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        map[string]any{"start": map[string]any{"line": 3, "character": 0}, "end": map[string]any{"line": 3, "character": 0}},
		"context":      map[string]any{"diagnostics": []any{foreign}, "only": []string{"quickfix"}},
	}, &actions); err != nil || len(actions) != 1 || actions[0].Kind != "quickfix" {
		t.Errorf("only quickfix: %+v, %v", actions, err)
	}
}

// TestPromptWithoutModel: a server without a model does not offer agentls.prompt and
// answers it with a clear error; one whose model cannot be made says why.
func TestPromptWithoutModel(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.go": "package a // agentls: do it\n"})
	var log testutil.Buffer
	serve := func(o rpc.Options) *lsptest.Client {
		o.ConfigDir, o.StateDir = t.TempDir(), t.TempDir()
		o.Logger = slog.New(slog.NewTextHandler(&log, nil))
		c := lsptest.Serve(t, func(in io.Reader, out io.Writer) int { return rpc.New(o).Serve(context.Background(), in, out) })
		res, err := c.Initialize(ctx, initParams(root, capsEditor, nil))
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(res), `"agentls.prompt"`); has != (o.NewClient != nil) {
			t.Errorf("agentls.prompt advertised: %v, with a model: %v", has, o.NewClient != nil)
		}
		return c
	}
	c := serve(rpc.Options{})
	for _, method := range []string{"agentls/prompt", "agentls.prompt"} {
		var err error
		if method == "agentls.prompt" {
			err = command(ctx, c, method, map[string]any{"prompt": "hi"}, nil)
		} else {
			err = c.Call(ctx, method, map[string]any{"prompt": "hi"}, nil)
		}
		if codeOf(err) != -32803 || !strings.Contains(err.Error(), "no model configured") {
			t.Errorf("%s without a model: %v", method, err)
		}
	}
	var actions []any
	uri := lsptest.FileURI(filepath.Join(root, "a.go"))
	if err := c.Call(ctx, "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}},
		"context": map[string]any{"diagnostics": []any{map[string]any{"message": "bad", "range": map[string]any{
			"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 1}}}}},
	}, &actions); err != nil || len(actions) != 0 {
		t.Errorf("code actions without a model: %v, %v; want none", actions, err)
	}

	c = serve(rpc.Options{NewClient: func(context.Context, settings.Settings) (clients.Client, error) {
		return nil, errors.New("no API key: set GEMINI_API_KEY")
	}})
	err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "hi"}, nil)
	if codeOf(err) != -32803 || !strings.Contains(err.Error(), "set GEMINI_API_KEY") {
		t.Errorf("a model that cannot be made: %v", err)
	}
	for _, tt := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"prompt": "  "}, `"prompt"`},
		{map[string]any{"prompt": "x", "range": map[string]any{}}, `"range" needs "uri"`},
		{map[string]any{"prompt": 3}, "prompt"},
	} {
		err := c.Call(ctx, "agentls/prompt", tt.params, nil)
		if codeOf(err) != lsptest.CodeInvalidParams || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want InvalidParams mentioning %s", tt.params, err, tt.want)
		}
	}
}

// TestPromptModelError: a model that answers with an HTTP error ends the prompt with
// stopReason error and the model's message, in the result and the transcript.
func TestPromptModelError(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	a := newAgent(t, root, "", clients.Turn{HTTPError: &clients.ScriptHTTPError{Status: 400, Message: "API key not valid. Please pass a valid API key."}})
	c := a.serve(capsRich, nil, rpc.Options{})
	var res promptResult
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "hi"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "error" || res.Error == nil || !strings.Contains(res.Error.Message, "API key not valid") {
		t.Errorf("result %+v, want stopReason error with the model's message", res)
	}
	ups := updates(t, c, res.Session)
	if len(ups) == 0 || ups[len(ups)-1].Kind != "turn_end" || ups[len(ups)-1].StopReason != "error" {
		t.Errorf("updates %+v, want a turn_end error", ups)
	}
	if _, err := os.Stat(filepath.Join(a.stateDir, "transcripts")); err == nil {
		t.Errorf("a rich client got a transcript")
	}
}

// TestPromptBinary: the agentls binary answers a prompt with the Gemini model the
// environment names (GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL), here the fake API.
func TestPromptBinary(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.txt": "alpha\n"})
	file := filepath.Join(root, "a.txt")
	fake := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Text: "Reading.", Calls: []clients.ScriptCall{call("read_file", map[string]any{"file_path": file}, "r1")}},
		{Calls: []clients.ScriptCall{call("run_shell_command", map[string]any{"command": "echo from-the-shell"}, "s1")}},
		{Text: "The file says alpha.", Usage: &clients.Usage{PromptTokens: 10, OutputTokens: 5}},
	}})
	t.Cleanup(fake.Close)
	c := startEnv(t, root, []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + fake.URL})
	if _, err := c.Initialize(ctx, initParams(root, capsRich, map[string]any{"approvalMode": "yolo"})); err != nil {
		t.Fatal(err)
	}
	var res promptResult
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "what does a.txt say?"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "end_turn" || res.Text != "The file says alpha." {
		t.Errorf("result %+v", res)
	}
	var kinds []string
	for _, u := range updates(t, c, res.Session) {
		if u.Kind == "tool_call_update" && u.Status != "completed" {
			continue
		}
		kinds = append(kinds, u.Kind+":"+u.Name+u.Status)
	}
	want := []string{"session_info:", "message_chunk:", "tool_call:read_filepending", "tool_call_update:completed",
		"tool_call:run_shell_commandpending", "tool_call_update:completed", "message_chunk:", "turn_end:"}
	if !slices.Equal(kinds, want) {
		t.Errorf("updates %v, want %v", kinds, want)
	}
	reqs, err := fake.GenerateRequests()
	if err != nil || len(reqs) != 3 {
		t.Fatalf("model calls %d, %v", len(reqs), err)
	}
	if !strings.Contains(string(mustJSON(t, reqs[2].Contents)), "from-the-shell") {
		t.Errorf("the model did not get the command's output")
	}
}

// TestIdleSessionsBounded: every prompt without a session (each "Ask agentls to fix
// this") starts a session; the server keeps a bounded number of idle ones in memory,
// and one it let go is resumed from the store with its history.
func TestIdleSessionsBounded(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	n := rpc.MaxIdleSessions + 5
	turns := make([]clients.Turn, 0, n+1)
	for i := range n {
		turns = append(turns, clients.Turn{Text: "answer " + strconv.Itoa(i)})
	}
	turns = append(turns, clients.Turn{Text: "resumed"})
	a := newAgent(t, root, "", turns...)
	var srv *rpc.Server
	o := rpc.Options{NewClient: a.newClient, ConfigDir: t.TempDir(), StateDir: a.stateDir}
	c := lsptest.Serve(t, func(in io.Reader, out io.Writer) int {
		srv = rpc.New(o)
		return srv.Serve(context.Background(), in, out)
	})
	if _, err := c.Initialize(ctx, initParams(root, capsRich, nil)); err != nil {
		t.Fatal(err)
	}
	var first string
	for i := range n {
		var res promptResult
		if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "question " + strconv.Itoa(i)}, &res); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = res.Session
		}
	}
	if live := rpc.LiveSessions(srv); live > rpc.MaxIdleSessions {
		t.Errorf("%d sessions kept in memory after %d prompts, want at most %d", live, n, rpc.MaxIdleSessions)
	}
	var res promptResult
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "and again", "session": first}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Session != first || res.Text != "resumed" {
		t.Errorf("resumed %+v", res)
	}
	reqs, err := a.fake.GenerateRequests()
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, reqs[len(reqs)-1].Contents); !strings.Contains(got, "question 0") || !strings.Contains(got, "answer 0") {
		t.Errorf("the resumed session's model got %s, want the first exchange", got)
	}
}

// TestPromptCancelTakesDownConfirmation: cancelling a session whose tool call waits for
// the user's answer ends the prompt cancelled, withdraws the question the editor shows
// ($/cancelRequest for its agentls/confirm) and never runs the call.
func TestPromptCancelTakesDownConfirmation(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	a := newAgent(t, root, "",
		clients.Turn{Text: "Running it.", Calls: []clients.ScriptCall{call("run_shell_command", map[string]any{"command": "touch ran"}, "s1")}},
		clients.Turn{Text: "unused"})
	c := a.serve(capsRich, nil, rpc.Options{})
	c.Handle("agentls/confirm", func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-ctx.Done() // the user does not answer
		return nil, ctx.Err()
	})
	p := c.Go("agentls/prompt", map[string]any{"prompt": "touch a file"})
	asked, err := c.WaitFor(ctx, "agentls/confirm", nil)
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ ToolCallID string }
	json.Unmarshal(asked.Params, &d)
	sid, _, _ := strings.Cut(d.ToolCallID, "/")
	if err := c.Notify("agentls/cancel", map[string]any{"session": sid}); err != nil {
		t.Fatal(err)
	}
	var res promptResult
	if err := p.Wait(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "cancelled" || res.Session != sid {
		t.Errorf("result %+v, want cancelled in session %s", res, sid)
	}
	withdrawn, err := c.WaitFor(ctx, "$/cancelRequest", nil)
	if err != nil {
		t.Fatal(err)
	}
	var cp struct{ ID json.RawMessage }
	json.Unmarshal(withdrawn.Params, &cp)
	if string(cp.ID) != string(asked.ID) {
		t.Errorf("$/cancelRequest for %s, want the agentls/confirm %s", cp.ID, asked.ID)
	}
	if fileExists(filepath.Join(root, "ran")) {
		t.Error("the cancelled call ran")
	}
}

// TestSessionHistory: a stored session's conversation comes back from a new server,
// without a model, as the updates a rich client renders: the prompt, the tool call and
// its end, the answer.
func TestSessionHistory(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"notes.txt": "hello\n"})
	stateDir := t.TempDir()
	a1 := newAgent(t, root, stateDir,
		clients.Turn{Calls: []clients.ScriptCall{call("read_file", map[string]any{"file_path": filepath.Join(root, "notes.txt")}, "r1")}},
		clients.Turn{Text: "It says hello."})
	c1 := a1.serve(capsRich, nil, rpc.Options{})
	var res promptResult
	if err := c1.Call(ctx, "agentls/prompt", map[string]any{"prompt": "what do the notes say?"}, &res); err != nil {
		t.Fatal(err)
	}
	if code, err := c1.Shutdown(ctx); code != 0 || err != nil {
		t.Fatalf("shutdown: %d %v", code, err)
	}

	c2 := newAgent(t, root, stateDir).serve(capsRich, nil, rpc.Options{NewClient: func(context.Context, settings.Settings) (clients.Client, error) {
		return nil, errors.New("no model for this server")
	}})
	var hist struct {
		Session string
		Updates []update
	}
	if err := command(ctx, c2, "agentls.sessionHistory", map[string]any{"session": res.Session}, &hist); err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, u := range hist.Updates {
		switch u.Kind {
		case "user_message", "message_chunk":
			seq = append(seq, u.Kind+":"+u.Text)
		case "tool_call":
			seq = append(seq, "call:"+u.Name+":"+u.Status)
		case "tool_call_update":
			seq = append(seq, "end:"+u.Status)
		}
	}
	want := []string{"user_message:what do the notes say?", "call:read_file:pending", "end:completed", "message_chunk:It says hello."}
	if hist.Session != res.Session || !slices.Equal(seq, want) {
		t.Errorf("history of %s: %q, want %q", hist.Session, seq, want)
	}
	if err := command(ctx, c2, "agentls.sessionHistory", map[string]any{"session": "no-such-session"}, &hist); err == nil {
		t.Error("the history of an unknown session")
	}
}
