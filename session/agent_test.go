package session

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/tools"
)

// model is a scripted model as the tests drive it: a client, and the requests the model
// received.
type model interface {
	clients.Client
	requests() []clients.Request
}

// harness is a workspace with a real toolbox and scheduler (yolo mode, so that tools
// run without asking), a model and a session.
type harness struct {
	t      *testing.T
	root   string
	config string
	tb     *toolbox.Toolbox
	sched  *tools.Scheduler
	store  *Store
	model  model

	mu      sync.Mutex
	updates []Update
}

func newHarness(t *testing.T, files map[string]string, script clients.Script) *harness {
	t.Helper()
	return newHarnessWith(t, files, script, fakegemini.Options{})
}

// newHarnessWith is newHarness with the fake Gemini server started with opts.
func newHarnessWith(t *testing.T, files map[string]string, script clients.Script, opts fakegemini.Options) *harness {
	t.Helper()
	_, root := testutil.Workspace(t, files)
	config := t.TempDir()
	tb, err := toolbox.New(toolbox.Options{Roots: []string{root}, ConfigDir: config, Mode: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	h := &harness{t: t, root: root, config: config, tb: tb, store: NewStore(t.TempDir())}
	h.sched = tb.Scheduler(nil, nil, nil)
	// Arguments name files as ROOT/…: the workspace's path is known only now.
	for i := range script.Turns {
		for j := range script.Turns[i].Calls {
			c := &script.Turns[i].Calls[j]
			c.Args = json.RawMessage(strings.ReplaceAll(string(c.Args), "ROOT", root))
		}
	}
	h.model = newModelWith(t, script, opts)
	return h
}

func (h *harness) options() Options {
	return Options{
		Client:       h.model,
		Declarations: func() []tools.Declaration { return h.tb.Config().Registry.Declarations() },
		Runner:       h.sched,
		Store:        h.store,
		Env:          Environment{Roots: []string{h.root}, ConfigDir: h.config},
		Observe: func(u Update) {
			h.mu.Lock()
			h.updates = append(h.updates, u)
			h.mu.Unlock()
		},
		Logger: discard(),
	}
}

func (h *harness) session(mod func(*Options)) *Session {
	h.t.Helper()
	o := h.options()
	if mod != nil {
		mod(&o)
	}
	s, err := New(context.Background(), o)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) messages() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, u := range h.updates {
		if u.Kind == UpdateMessage {
			b.WriteString(u.Text)
		}
	}
	return b.String()
}

func (h *harness) updatesOf(kind UpdateKind) []Update {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Update
	for _, u := range h.updates {
		if u.Kind == kind {
			out = append(out, u)
		}
	}
	return out
}

func args(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

// checkValid fails unless every function call in hist is answered, by id and name, in
// the user turn right after its model turn, and no response is unasked for.
func checkValid(t *testing.T, hist []clients.Content) {
	t.Helper()
	for i, c := range hist {
		fcs := calls(c)
		if c.Role == clients.RoleUser {
			if hasResponses(c) && (i == 0 || len(calls(hist[i-1])) == 0) {
				t.Errorf("content %d: responses without calls before them", i)
			}
			continue
		}
		if len(fcs) == 0 {
			continue
		}
		if i+1 >= len(hist) {
			t.Errorf("content %d: calls without responses at the end of the history", i)
			continue
		}
		var resps []*clients.FunctionResponse
		for _, p := range hist[i+1].Parts {
			if p.FunctionResponse != nil {
				resps = append(resps, p.FunctionResponse)
			}
		}
		if len(resps) != len(fcs) {
			t.Errorf("content %d: %d calls, %d responses after them", i, len(fcs), len(resps))
			continue
		}
		for j, fc := range fcs {
			if resps[j].ID != fc.ID || resps[j].Name != fc.Name {
				t.Errorf("content %d: response %d is for %s %s, want %s %s", i, j, resps[j].Name, resps[j].ID, fc.Name, fc.ID)
			}
		}
	}
}

// responses returns the function responses of the last user turn of a request.
func responses(t *testing.T, req clients.Request) []*clients.FunctionResponse {
	t.Helper()
	last := req.History[len(req.History)-1]
	var out []*clients.FunctionResponse
	for _, p := range last.Parts {
		if p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse)
		}
	}
	return out
}

func respText(fr *clients.FunctionResponse) string {
	if s, ok := fr.Response["output"].(string); ok {
		return "output: " + s
	}
	s, _ := fr.Response["error"].(string)
	return "error: " + s
}

func TestPromptToolBatch(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"}
	h := newHarness(t, files, clients.Script{Turns: []clients.Turn{
		{Thought: "I should read both files.", Text: "Reading both files.", Calls: []clients.ScriptCall{
			{ID: "r1", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/a.txt"}`)},
			{ID: "r2", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/b.txt"}`)},
			{ID: "r3", Name: "no_such_tool", Args: json.RawMessage(`{}`)},
			{ID: "r4", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/missing.txt"}`)},
			{ID: "r5", Name: "replace", Args: json.RawMessage(`{"file_path": "ROOT/a.txt", "old_string": "alpha", "new_string": "gamma"}`)},
		}, Usage: &clients.Usage{PromptTokens: 100, OutputTokens: 10, TotalTokens: 110}},
		{Text: "a.txt said alpha, now gamma; b.txt says beta.", Usage: &clients.Usage{PromptTokens: 200, OutputTokens: 20, TotalTokens: 220}},
	}})
	s := h.session(nil)
	res, err := s.Prompt(context.Background(), "Read a.txt and b.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopEndTurn || res.Text != "a.txt said alpha, now gamma; b.txt says beta." {
		t.Errorf("result %+v", res)
	}
	if res.Usage != (clients.Usage{PromptTokens: 300, OutputTokens: 30, TotalTokens: 330}) {
		t.Errorf("usage %+v, want the sum of both calls", res.Usage)
	}
	reqs := h.model.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if !strings.Contains(reqs[0].System, "You are agentls") || len(reqs[0].Tools) == 0 {
		t.Errorf("first request lacks the system instruction or the tools")
	}
	got := responses(t, reqs[1])
	want := []struct{ id, name, text string }{
		{"r1", "read_file", "output: alpha"},
		{"r2", "read_file", "output: beta"},
		{"r3", "no_such_tool", "error: tool_not_registered: "},
		{"r4", "read_file", "error: file_not_found: "},
		{"r5", "replace", "output: "},
	}
	if len(got) != len(want) {
		t.Fatalf("%d responses, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].ID != w.id || got[i].Name != w.name || !strings.HasPrefix(respText(got[i]), w.text) {
			t.Errorf("response %d: %s %s %q, want %s %s %q…", i, got[i].ID, got[i].Name, respText(got[i]), w.id, w.name, w.text)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(h.root, "a.txt")); string(data) != "gamma\n" {
		t.Errorf("a.txt is %q after replace", data)
	}
	checkValid(t, s.History())
	if m := h.messages(); m != "Reading both files.a.txt said alpha, now gamma; b.txt says beta." {
		t.Errorf("message chunks %q", m)
	}
	if th := h.updatesOf(UpdateThought); len(th) != 1 || th[0].Text != "I should read both files." {
		t.Errorf("thought updates %+v", th)
	}
	if te := h.updatesOf(UpdateTurnEnd); len(te) != 1 || te[0].StopReason != StopEndTurn || te[0].Usage == nil || te[0].Usage.TotalTokens != 330 {
		t.Errorf("turn_end updates %+v", te)
	}
}

// geminiModel is the real Gemini client talking to the fake Gemini server.
type geminiModel struct {
	*clients.Gemini
	srv *fakegemini.Server
	t   *testing.T
}

// newModelWith returns the model the loop tests run against: the Gemini client and a
// fake Gemini server on loopback serving script, started with opts.
func newModelWith(t *testing.T, script clients.Script, opts fakegemini.Options) model {
	t.Helper()
	srv, err := fakegemini.New(script, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	g, err := clients.NewGemini(context.Background(), clients.GeminiOptions{
		APIKey:        "test-key",
		Model:         "gemini-2.5-flash",
		BaseURL:       srv.URL,
		ContextWindow: script.ContextWindow,
		Retry:         clients.RetryPolicy{Attempts: 1},
		Logger:        discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return geminiModel{Gemini: g, srv: srv, t: t}
}

// requests returns the generate calls the server received, read back into the
// client's types.
func (m geminiModel) requests() []clients.Request {
	m.t.Helper()
	wire, err := m.srv.GenerateRequests()
	if err != nil {
		m.t.Fatal(err)
	}
	var out []clients.Request
	for _, w := range wire {
		var req clients.Request
		if w.SystemInstruction != nil {
			for _, p := range w.SystemInstruction.Parts {
				req.System += p.Text
			}
		}
		for _, tool := range w.Tools {
			for _, d := range tool.FunctionDeclarations {
				req.Tools = append(req.Tools, clients.Declaration{Name: d.Name, Description: d.Description, Parameters: d.ParametersJSONSchema})
			}
		}
		for _, c := range w.Contents {
			cc := clients.Content{Role: c.Role}
			for _, p := range c.Parts {
				cp := clients.Part{Text: p.Text, Thought: p.Thought}
				if p.ThoughtSignature != "" {
					cp.ThoughtSignature = []byte(p.ThoughtSignature) // kept as sent: the tests compare it whole
				}
				if fc := p.FunctionCall; fc != nil {
					cp.FunctionCall = &clients.FunctionCall{ID: fc.ID, Name: fc.Name, Args: fc.Args}
				}
				if fr := p.FunctionResponse; fr != nil {
					cr := &clients.FunctionResponse{ID: fr.ID, Name: fr.Name}
					if err := json.Unmarshal(fr.Response, &cr.Response); err != nil {
						m.t.Fatalf("function response %s: %v", fr.Response, err)
					}
					for _, ip := range fr.Parts {
						if ip.InlineData != nil {
							cr.Parts = append(cr.Parts, clients.Blob{MIMEType: ip.InlineData.MIMEType, Data: []byte(ip.InlineData.Data)})
						}
					}
					cp.FunctionResponse = cr
				}
				if p.InlineData != nil {
					cp.InlineData = &clients.Blob{MIMEType: p.InlineData.MIMEType, Data: []byte(p.InlineData.Data)}
				}
				cc.Parts = append(cc.Parts, cp)
			}
			req.History = append(req.History, cc)
		}
		out = append(out, req)
	}
	return out
}

// shellCall is a run_shell_command call.
func shellCall(id, command string) clients.ScriptCall {
	return clients.ScriptCall{ID: id, Name: "run_shell_command", Args: args("command", command)}
}

// TestPromptParallelCalls: two shell commands of one batch wait for each other; each
// sees the other only if they run at the same time.
func TestPromptParallelCalls(t *testing.T) {
	t.Parallel()
	meet := func(mine, other string) string {
		return "touch " + mine + "; for i in $(seq 400); do if [ -e " + other + " ]; then echo met; exit 0; fi; sleep 0.05; done; echo alone"
	}
	h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{shellCall("s1", meet("one", "two")), shellCall("s2", meet("two", "one"))}},
		{Text: "Both ran."},
	}})
	s := h.session(nil)
	if _, err := s.Prompt(context.Background(), "run both", nil); err != nil {
		t.Fatal(err)
	}
	got := responses(t, h.model.requests()[1])
	for _, r := range got {
		if !strings.Contains(respText(r), "met") {
			t.Errorf("%s did not meet the other call: %q", r.ID, respText(r))
		}
	}
}

func TestPromptMaxTurns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]string{"a.txt": "a"}, clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{shellCall("c1", "echo 1")}},
		{Calls: []clients.ScriptCall{shellCall("c2", "echo 2")}},
		{Calls: []clients.ScriptCall{shellCall("c3", "echo 3")}},
		{Text: "Fine."},
	}})
	s := h.session(func(o *Options) { o.MaxTurns = 2 })
	res, err := s.Prompt(context.Background(), "loop", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopMaxTurns {
		t.Errorf("stop %s, want %s", res.StopReason, StopMaxTurns)
	}
	if n := len(h.model.requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
	checkValid(t, s.History())
	// The next prompt goes on from a valid history; the turns count again from zero.
	res, err = s.Prompt(context.Background(), "go on", nil)
	if err != nil || res.StopReason != StopEndTurn || res.Text != "Fine." {
		t.Fatalf("second prompt: %+v, %v", res, err)
	}
	reqs := h.model.requests()
	last := reqs[2].History[len(reqs[2].History)-1]
	if len(last.Parts) != 2 || last.Parts[0].FunctionResponse == nil || last.Parts[1].Text != "go on" {
		t.Errorf("the next prompt's request ends with %s, want c2's response merged with the prompt", js(t, last))
	}
}

func TestPromptCancelMidStream(t *testing.T) {
	t.Parallel()
	for _, withCall := range []bool{false, true} {
		t.Run("call="+strconv.FormatBool(withCall), func(t *testing.T) {
			turn := clients.Turn{Text: "I am thinking about", Hang: true}
			if withCall {
				turn.Calls = []clients.ScriptCall{shellCall("c1", "echo never > ran.txt")}
			}
			h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{turn, {Text: "Hello again."}}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := h.session(func(o *Options) {
				inner := o.Observe
				o.Observe = func(u Update) {
					inner(u)
					if u.Kind == UpdateMessage {
						cancel()
					}
				}
			})
			res, err := s.Prompt(ctx, "hello", nil)
			if err != nil || res.StopReason != StopCancelled {
				t.Fatalf("Prompt = %+v, %v; want cancelled, no error", res, err)
			}
			if _, err := os.Stat(filepath.Join(h.root, "ran.txt")); err == nil {
				t.Error("the call of a cancelled response ran")
			}
			hist := s.History()
			checkValid(t, hist)
			if len(hist) < 2 || hist[1].Role != clients.RoleModel || !strings.HasPrefix(answer(hist[1]), "I am") {
				t.Errorf("the partial answer is not recorded: %s", js(t, hist))
			}
			res, err = s.Prompt(context.Background(), "are you there?", nil)
			if err != nil || res.Text != "Hello again." {
				t.Fatalf("prompt after the cancel: %+v, %v", res, err)
			}
			checkValid(t, s.History())
		})
	}
}

func TestPromptCancelMidTool(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{shellCall("c1", "echo $$ > pid; exec sleep 60"), shellCall("c2", "echo quick")}},
		{Text: "Next prompt."},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the quick call has ended and the sleep is running.
	quickDone := make(chan struct{})
	h.sched = h.tb.Scheduler(nil, nil, func(ev tools.Event) {
		if ev.CallID == "c2" && ev.Status.Terminal() {
			close(quickDone)
		}
	})
	pidFile := filepath.Join(h.root, "pid")
	go func() {
		<-quickDone
		for ctx.Err() == nil {
			if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	s := h.session(nil)
	res, err := s.Prompt(ctx, "sleep", nil)
	if err != nil || res.StopReason != StopCancelled {
		t.Fatalf("Prompt = %+v, %v; want cancelled, no error", res, err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("sleep (pid %d) still exists after the cancel: %v", pid, err)
	}
	hist := s.History()
	checkValid(t, hist)
	last := hist[len(hist)-1]
	if len(last.Parts) != 2 || !strings.HasPrefix(respText(last.Parts[0].FunctionResponse), "error: cancelled") ||
		!strings.Contains(respText(last.Parts[1].FunctionResponse), "Output: quick") {
		t.Errorf("responses after the cancel: %s", js(t, last))
	}
	if res, err := s.Prompt(context.Background(), "next", nil); err != nil || res.Text != "Next prompt." {
		t.Fatalf("prompt after the cancel: %+v, %v", res, err)
	}
}

func TestPromptModelError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{
		{Text: "Half an", Calls: []clients.ScriptCall{shellCall("c1", "echo x")}, Error: "the stream broke"},
		{Text: "Recovered."},
	}})
	s := h.session(nil)
	res, err := s.Prompt(context.Background(), "go", nil)
	if err == nil || !strings.Contains(err.Error(), "the stream broke") || res.StopReason != StopError {
		t.Fatalf("Prompt = %+v, %v; want an error naming the failure", res, err)
	}
	checkValid(t, s.History())
	if res, err := s.Prompt(context.Background(), "again", nil); err != nil || res.Text != "Recovered." {
		t.Fatalf("prompt after the failure: %+v, %v", res, err)
	}
}

// TestPromptCutStream: a Gemini stream that ends without a finish reason broke off; the
// prompt fails saying so instead of passing the half answer off as the whole one.
func TestPromptCutStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{
		{Text: "The first half of the answer", Cut: true},
		{Text: "Recovered."},
	}})
	s := h.session(nil)
	res, err := s.Prompt(context.Background(), "go", nil)
	if err == nil || !strings.Contains(err.Error(), "finish reason") || res.StopReason != StopError {
		t.Fatalf("Prompt = %+v, %v; want an error saying the response broke off", res, err)
	}
	checkValid(t, s.History())
	if res, err := s.Prompt(context.Background(), "again", nil); err != nil || res.Text != "Recovered." {
		t.Fatalf("prompt after the cut: %+v, %v", res, err)
	}
}

// TestPromptRefusal: a prompt the model refused without answering (a safety stop, or
// the prompt itself blocked) stays in the record but leaves the history the model is
// sent, so that the prompts after it are not refused for it; the user is told.
func TestPromptRefusal(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{"SAFETY", "BLOCKED:PROHIBITED_CONTENT"} {
		t.Run(reason, func(t *testing.T) {
			h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{
				{Text: "Hello."},
				{FinishReason: reason},
				{Text: "ok"},
				{Text: "still ok"},
			}})
			s := h.session(nil)
			if _, err := s.Prompt(context.Background(), "hi", nil); err != nil {
				t.Fatal(err)
			}
			res, err := s.Prompt(context.Background(), "something bad", nil)
			if err != nil || res.StopReason != StopRefusal {
				t.Fatalf("Prompt = %+v, %v; want refusal", res, err)
			}
			if m := h.messages(); !strings.Contains(m, "refused") || !strings.Contains(m, "not kept") {
				t.Errorf("the user is not told: %q", m)
			}
			if res, err := s.Prompt(context.Background(), "something else", nil); err != nil || res.Text != "ok" {
				t.Fatalf("the next prompt: %+v, %v", res, err)
			}
			checkTexts(t, h.model.requests()[2].History, []string{"hi", "Hello.", "something else"})
			// The full record keeps the refused prompt, in memory and in the file.
			want := []string{"hi", "Hello.", "something bad", "something else", "ok"}
			checkTexts(t, s.History(), want)
			checkTexts(t, loadRecord(t, h, s.ID()), want)
			// A resumed session leaves it out too.
			resumed := h.session(func(o *Options) { o.ID = s.ID() })
			checkTexts(t, resumed.History(), want)
			if _, err := resumed.Prompt(context.Background(), "more", nil); err != nil {
				t.Fatal(err)
			}
			checkTexts(t, h.model.requests()[3].History, []string{"hi", "Hello.", "something else", "ok", "more"})
		})
	}
}

// TestPromptRefusalAfterAnswer: a refusal that comes after the model answered part of
// the prompt keeps the prompt in the history: the model did answer it.
func TestPromptRefusalAfterAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{
		{Text: "Here is the start", FinishReason: "SAFETY"},
		{Text: "ok"},
	}})
	s := h.session(nil)
	if res, err := s.Prompt(context.Background(), "tell me", nil); err != nil || res.StopReason != StopRefusal {
		t.Fatalf("Prompt = %+v, %v; want refusal", res, err)
	}
	if _, err := s.Prompt(context.Background(), "go on", nil); err != nil {
		t.Fatal(err)
	}
	checkTexts(t, h.model.requests()[1].History, []string{"tell me", "Here is the start", "go on"})
}

func TestPromptLoopDetection(t *testing.T) {
	t.Parallel()
	t.Run("calls", func(t *testing.T) {
		var turns []clients.Turn
		for range 6 {
			turns = append(turns, clients.Turn{Calls: []clients.ScriptCall{{Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/a.txt"}`)}}})
		}
		h := newHarness(t, map[string]string{"a.txt": "a"}, clients.Script{Turns: turns})
		s := h.session(nil)
		res, err := s.Prompt(context.Background(), "read it", nil)
		if err != nil || res.StopReason != StopRefusal {
			t.Fatalf("Prompt = %+v, %v; want refusal", res, err)
		}
		if n := len(h.model.requests()); n != 5 {
			t.Errorf("%d model requests, want 5", n)
		}
		if !strings.Contains(h.messages(), "read_file with the same arguments 5 times") {
			t.Errorf("no message tells the user: %q", h.messages())
		}
		hist := s.History()
		checkValid(t, hist)
		if r := respText(hist[len(hist)-1].Parts[0].FunctionResponse); !strings.Contains(r, "not run") {
			t.Errorf("the fifth call's response: %q", r)
		}
	})
	t.Run("text", func(t *testing.T) {
		sentence := "Let me check the configuration file once more to be sure.\n"
		h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{
			{Text: strings.Repeat(sentence, 30) + "THE END", Chunks: 60, Calls: []clients.ScriptCall{shellCall("c1", "echo never > ran.txt")}},
		}})
		s := h.session(nil)
		res, err := s.Prompt(context.Background(), "check", nil)
		if err != nil || res.StopReason != StopRefusal {
			t.Fatalf("Prompt = %+v, %v; want refusal", res, err)
		}
		m := h.messages()
		if strings.Contains(m, "THE END") || !strings.Contains(m, "kept repeating") {
			t.Errorf("the stream was not stopped, or the user not told: %q", m[max(0, len(m)-300):])
		}
		if _, err := os.Stat(filepath.Join(h.root, "ran.txt")); err == nil {
			t.Error("a call ran")
		}
		checkValid(t, s.History())
	})
}

func TestPromptCompression(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Here is a lot of context about the task. ", 50)
	h := newHarness(t, nil, clients.Script{ContextWindow: 60000, Turns: []clients.Turn{
		{Text: "answer one", Usage: &clients.Usage{PromptTokens: 10000}},
		{Text: "answer two", Usage: &clients.Usage{PromptTokens: 11000}},
		{Text: "answer three", Usage: &clients.Usage{PromptTokens: 50000}},
		{Text: "<state_snapshot>\n<overall_goal>test compression</overall_goal>\n</state_snapshot>", Usage: &clients.Usage{PromptTokens: 900, OutputTokens: 30}},
		{Text: "answer four", Usage: &clients.Usage{PromptTokens: 1200}},
		{Text: "answer five", Usage: &clients.Usage{PromptTokens: 1300}},
	}})
	s := h.session(nil)
	for _, p := range []string{"one: " + long, "two", "three"} {
		if _, err := s.Prompt(context.Background(), p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.updatesOf(UpdateCompression); len(got) != 0 {
		t.Fatalf("compressed below the threshold: %+v", got)
	}
	res, err := s.Prompt(context.Background(), "four", nil)
	if err != nil || res.Text != "answer four" {
		t.Fatalf("Prompt = %+v, %v", res, err)
	}
	if res.Usage.PromptTokens != 900+1200 {
		t.Errorf("usage %+v does not count the summary call", res.Usage)
	}
	comp := h.updatesOf(UpdateCompression)
	// Before is the last count and an estimate of what came since: the last answer and
	// the new prompt, a few tokens.
	if len(comp) != 1 || comp[0].Compression == nil || comp[0].Compression.TokensBefore < 50000 || comp[0].Compression.TokensBefore > 50050 ||
		comp[0].Compression.TokensAfter <= 0 || comp[0].Compression.TokensAfter >= 50000 || comp[0].Text == "" {
		t.Fatalf("compression updates %+v", comp)
	}

	reqs := h.model.requests()
	summary := reqs[3]
	if summary.System != compressionPrompt || len(summary.Tools) != 0 {
		t.Errorf("the summary request has the wrong system instruction or tools")
	}
	sh := summary.History
	if len(sh) != 3 || !strings.HasPrefix(sh[0].Parts[0].Text, "one: ") || sh[2].Parts[0].Text != compressionRequest {
		t.Errorf("summary request history %s", js(t, sh))
	}
	// The first prompt is most of the history: the cut falls after the first answer,
	// and the later exchanges and the new prompt are kept verbatim.
	want := []string{summaryIntro + "<state_snapshot>\n<overall_goal>test compression</overall_goal>\n</state_snapshot>", summaryAck,
		"two", "answer two", "three", "answer three", "four"}
	checkTexts(t, reqs[4].History, want)

	// The compression is stored: a resumed session sends the compressed history.
	resumed := h.session(func(o *Options) { o.ID = s.ID() })
	if got := len(resumed.History()); got != 8 {
		t.Errorf("the resumed record has %d contents, want all 8", got)
	}
	if _, err := resumed.Prompt(context.Background(), "five", nil); err != nil {
		t.Fatal(err)
	}
	checkTexts(t, h.model.requests()[5].History, append(want, "answer four", "five"))
}

func checkTexts(t *testing.T, hist []clients.Content, want []string) {
	t.Helper()
	var got []string
	for _, c := range hist {
		got = append(got, answer(c))
	}
	if strings.Join(got, "\n|") != strings.Join(want, "\n|") {
		t.Errorf("history texts\n got %q\nwant %q", got, want)
	}
}

func TestPromptCompressionFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, clients.Script{ContextWindow: 1000, Turns: []clients.Turn{
		{Text: "answer one", Usage: &clients.Usage{PromptTokens: 900}},
		{Error: "summary broke"},
		{Text: "answer two", Usage: &clients.Usage{PromptTokens: 950}},
		{Text: "answer three"},
	}})
	s := h.session(nil)
	for _, p := range []string{"one", "two"} {
		if _, err := s.Prompt(context.Background(), p, nil); err != nil {
			t.Fatalf("prompt %s: %v", p, err)
		}
	}
	if got := h.updatesOf(UpdateCompression); len(got) != 0 {
		t.Errorf("compression reported after a failed summary: %+v", got)
	}
	checkTexts(t, h.model.requests()[2].History, []string{"one", "answer one", "two"})
}

func TestPromptResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]string{"a.txt": "alpha\n"}, clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{{ID: "r1", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/a.txt"}`)}}, ThoughtSignature: "c2lnbmF0dXJl"},
		{Text: "It says alpha."},
		{Text: "You asked about a.txt."},
		{Text: "Still here."},
	}})
	s := h.session(nil)
	if _, err := s.Prompt(context.Background(), "What does a.txt say?", nil); err != nil {
		t.Fatal(err)
	}
	reqs := h.model.requests()
	if sig := reqs[1].History[1].Parts[0].ThoughtSignature; string(sig) != "c2lnbmF0dXJl" {
		t.Errorf("the thought signature went back as %q", sig)
	}
	first := reqs[1].History

	resumed := h.session(func(o *Options) { o.ID = s.ID() })
	if js(t, resumed.History()) != js(t, s.History()) {
		t.Errorf("resumed record\n%s\nwant\n%s", js(t, resumed.History()), js(t, s.History()))
	}
	if _, err := resumed.Prompt(context.Background(), "What did I ask?", nil); err != nil {
		t.Fatal(err)
	}
	second := h.model.requests()[2].History
	if len(second) != len(first)+2 || js(t, second[:len(first)]) != js(t, first) || answer(second[len(second)-1]) != "What did I ask?" {
		t.Errorf("the resumed session's request does not go on from the first:\n%s", js(t, second))
	}

	// A crash in the middle of a write leaves a truncated last line.
	f, err := os.OpenFile(h.store.path(s.ID()), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"content","content":{"role":"model","parts":[{"te`)
	f.Close()
	again := h.session(func(o *Options) { o.ID = s.ID() })
	if _, err := again.Prompt(context.Background(), "Still there?", nil); err != nil {
		t.Fatal(err)
	}
	// The broken line is now in the middle of the file; the file still loads.
	last := h.session(func(o *Options) { o.ID = s.ID() })
	hist := last.History()
	checkValid(t, hist)
	if got := answer(hist[len(hist)-1]); got != "Still here." {
		t.Errorf("the history ends with %q", got)
	}

	infos, err := h.store.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].ID != s.ID() || infos[0].Prompts != 3 || infos[0].Title != "What does a.txt say?" {
		t.Errorf("List = %+v", infos)
	}

	if _, err := New(context.Background(), Options{Client: h.model, Store: h.store, ID: "20990101-000000.000-00000000"}); err == nil ||
		!strings.Contains(err.Error(), "20990101-000000.000-00000000") {
		t.Errorf("resuming an unknown id: %v", err)
	}
}

// TestResumeAnswersDanglingCalls: a session that ended while its calls ran (the
// process died) resumes with cancelled responses for them, so its history is valid.
func TestResumeAnswersDanglingCalls(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{{Text: "Back."}}})
	q := user("run it")
	m := modelTurn(text("Running."), callPart("c1", "run_shell_command", `{"command":"sleep 100"}`))
	if err := h.store.append("crashed",
		record{Type: recSession, ID: "crashed"},
		record{Type: recPrompt, Text: "run it"},
		record{Type: recContent, Content: &q},
		record{Type: recContent, Content: &m}); err != nil {
		t.Fatal(err)
	}
	s := h.session(func(o *Options) { o.ID = "crashed" })
	checkValid(t, s.History())
	if _, err := s.Prompt(context.Background(), "and?", nil); err != nil {
		t.Fatal(err)
	}
	req := h.model.requests()[0]
	checkValid(t, req.History)
	if r := responses(t, clients.Request{History: req.History[2:3]}); len(r) != 1 || !strings.HasPrefix(respText(r[0]), "error: cancelled") {
		t.Errorf("dangling call answered with %s", js(t, req.History))
	}
}

func TestStoreRecords(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{{Text: "Hi.", Usage: &clients.Usage{PromptTokens: 10, OutputTokens: 2}}}})
	s := h.session(nil)
	if _, err := s.Prompt(context.Background(), "hello", nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(h.store.path(s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for line := range strings.Lines(string(data)) {
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		types = append(types, r.Type)
		switch r.Type {
		case recSession:
			if r.ID != s.ID() || r.Model != "gemini-2.5-flash" || len(r.Roots) != 1 || r.Created.IsZero() {
				t.Errorf("header %s", line)
			}
		case recEnd:
			if r.StopReason != StopEndTurn || r.Usage == nil || r.Usage.PromptTokens != 10 {
				t.Errorf("end %s", line)
			}
		}
	}
	if got := strings.Join(types, ","); got != "session,prompt,content,content,end" {
		t.Errorf("records %s", got)
	}
}

// TestPersistAfterAFailedWrite: records that could not be written (the file was
// unavailable for a while) are written with the next records, so that the file never
// has holes and resumes to the conversation as it went.
func TestPersistAfterAFailedWrite(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{shellCall("c1", "echo one")}},
		{Text: "First done."},
		{Calls: []clients.ScriptCall{shellCall("c2", "echo two")}},
		{Text: "Second done."},
		{Text: "Third done."},
	}})
	s := h.session(nil)
	if _, err := s.Prompt(context.Background(), "first", nil); err != nil {
		t.Fatal(err)
	}
	// Make the session's file unwritable, even for root: a directory takes its name.
	path := h.store.path(s.ID())
	if err := os.Rename(path, path+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), "second", nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".away", path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), "third", nil); err != nil {
		t.Fatal(err)
	}
	resumed := h.session(func(o *Options) { o.ID = s.ID() })
	checkValid(t, resumed.History())
	if got, want := js(t, resumed.History()), js(t, s.History()); got != want {
		t.Errorf("resumed history\n%s\nwant\n%s", got, want)
	}
	infos, err := h.store.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Prompts != 3 {
		t.Errorf("List = %+v, want one session of 3 prompts", infos)
	}
}
