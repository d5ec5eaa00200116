package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// hostHarness is a Host over a real workspace, a real store in a temporary directory
// and the fake Gemini server through the real genai client, with the updates it
// streamed.
type hostHarness struct {
	t     *testing.T
	root  string
	host  *Host
	model model

	mu      sync.Mutex
	updates []Update
	// stuck says that the host deadlocked (a test's failure): the cleanup leaves it
	// unclosed rather than wait for ever.
	stuck atomic.Bool
}

func newHostHarness(t *testing.T, mode string, script clients.Script, mod func(*HostOptions)) *hostHarness {
	t.Helper()
	_, root := testutil.Workspace(t, map[string]string{"a.txt": "a\n"})
	for i := range script.Turns {
		for j := range script.Turns[i].Calls {
			c := &script.Turns[i].Calls[j]
			c.Args = json.RawMessage(strings.ReplaceAll(string(c.Args), "ROOT", root))
		}
	}
	hh := &hostHarness{t: t, root: root, model: newModelWith(t, script, fakegemini.Options{})}
	o := HostOptions{
		Toolbox:   toolbox.Options{Roots: []string{root}, ConfigDir: t.TempDir(), GeminiDir: t.TempDir(), Mode: mode},
		Store:     NewStore(t.TempDir()),
		NewClient: func(context.Context, settings.Settings) (clients.Client, error) { return hh.model, nil },
		Observe: func(u Update) {
			hh.mu.Lock()
			hh.updates = append(hh.updates, u)
			hh.mu.Unlock()
		},
		Logger: discard(),
	}
	if mod != nil {
		mod(&o)
	}
	h, err := NewHost(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !hh.stuck.Load() {
			h.Close()
		}
	})
	hh.host = h
	return hh
}

// of returns the updates of kind k.
func (hh *hostHarness) of(k UpdateKind) []Update {
	hh.mu.Lock()
	defer hh.mu.Unlock()
	var out []Update
	for _, u := range hh.updates {
		if u.Kind == k {
			out = append(out, u)
		}
	}
	return out
}

// prompt opens the session id (a new one when empty) and runs text in it.
func (hh *hostHarness) prompt(id, text string) (*Live, Result) {
	hh.t.Helper()
	l, err := hh.host.Open(context.Background(), id)
	if err != nil {
		hh.t.Fatal(err)
	}
	res, err := l.Prompt(context.Background(), text, nil)
	if err != nil {
		hh.t.Fatalf("prompt %q: %v", text, err)
	}
	return l, res
}

func todosCall(desc string) clients.ScriptCall {
	return clients.ScriptCall{ID: "t1", Name: "write_todos",
		Args: json.RawMessage(`{"todos": [{"description": "` + desc + `", "status": "in_progress"}]}`)}
}

// TestHostPlanPerSession: each session keeps its own plan, and the plan and tool call
// updates carry the session they belong to, with call ids prefixed by it.
func TestHostPlanPerSession(t *testing.T) {
	hh := newHostHarness(t, "yolo", clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{todosCall("first")}}, {Text: "one"},
		{Calls: []clients.ScriptCall{todosCall("second")}}, {Text: "two"},
	}}, nil)
	a, _ := hh.prompt("", "plan one")
	b, _ := hh.prompt("", "plan two")
	if a.ID() == b.ID() {
		t.Fatalf("two sessions share the id %s", a.ID())
	}
	for _, tt := range []struct {
		l    *Live
		want string
	}{{a, "first"}, {b, "second"}} {
		if got := tt.l.Plan(); len(got) != 1 || got[0].Content != tt.want {
			t.Errorf("session %s plan = %+v, want %q", tt.l.ID(), got, tt.want)
		}
		var plans, calls int
		for _, u := range hh.of(UpdatePlan) {
			if u.Session == tt.l.ID() {
				plans++
				if u.Plan[0].Content != tt.want {
					t.Errorf("plan update of %s = %+v, want %q", u.Session, u.Plan, tt.want)
				}
			}
		}
		for _, u := range hh.of(UpdateToolCall) {
			if u.Session == tt.l.ID() {
				calls++
				if u.Call.CallID != tt.l.ID()+"/t1" {
					t.Errorf("call id %q, want %q", u.Call.CallID, tt.l.ID()+"/t1")
				}
			}
		}
		if plans != 1 || calls == 0 {
			t.Errorf("session %s: %d plan updates, %d tool call updates; want 1 and some", tt.l.ID(), plans, calls)
		}
	}
	if ends := hh.of(UpdateTurnEnd); len(ends) != 2 || ends[0].Session != a.ID() || ends[1].Session != b.ID() {
		t.Errorf("turn_end updates %+v, want one per session", ends)
	}
}

// TestHostIdleCache: at most MaxIdle idle sessions stay in memory; one let go is
// resumed from the store, with its history, when named again.
func TestHostIdleCache(t *testing.T) {
	const n = 4
	var turns []clients.Turn
	for range n + 1 {
		turns = append(turns, clients.Turn{Text: "ok"})
	}
	hh := newHostHarness(t, "yolo", clients.Script{Turns: turns}, func(o *HostOptions) { o.MaxIdle = 2 })
	var ids []string
	for i := range n {
		l, _ := hh.prompt("", "prompt "+string(rune('a'+i)))
		ids = append(ids, l.ID())
	}
	if live := hh.host.LiveIDs(); len(live) > 2 {
		t.Errorf("%d sessions in memory, want at most 2", len(live))
	}
	if slices.Contains(hh.host.LiveIDs(), ids[0]) {
		t.Fatalf("the least recently used session %s is still in memory", ids[0])
	}
	var closed []string
	for _, u := range hh.of(UpdateClosed) {
		closed = append(closed, u.Session)
	}
	if !slices.Contains(closed, ids[0]) {
		t.Errorf("closed updates for %v, want one for %s", closed, ids[0])
	}
	l, res := hh.prompt(ids[0], "again")
	if l.ID() != ids[0] || res.StopReason != StopEndTurn {
		t.Fatalf("resumed %s: %s, %s", ids[0], l.ID(), res.StopReason)
	}
	reqs := hh.model.requests()
	last := reqs[len(reqs)-1]
	if len(last.History) < 3 || last.History[0].Parts[0].Text != "prompt a" {
		t.Errorf("the resumed session's request did not carry its history: %+v", last.History)
	}
}

// TestHostObserverCallsBack: Observe runs outside the host's locks, so a front end
// may call back into the host from it — on a session's closed update (from CloseSession
// and from letting idle sessions go) as on any other — without a deadlock.
func TestHostObserverCallsBack(t *testing.T) {
	tests := []struct {
		name    string
		maxIdle int
		// close lets the prompted session go.
		close func(t *testing.T, h *Host, id string)
	}{
		{"CloseSession", 0, func(t *testing.T, h *Host, id string) {
			if err := h.CloseSession(id); err != nil {
				t.Errorf("CloseSession: %v", err)
			}
		}},
		{"idle sessions let go", 1, func(t *testing.T, h *Host, id string) {
			if _, err := h.Open(context.Background(), ""); err != nil {
				t.Errorf("Open: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h atomic.Pointer[Host]
			var calledBack atomic.Bool
			hh := newHostHarness(t, "yolo", clients.Script{Turns: []clients.Turn{{Text: "ok"}}}, func(o *HostOptions) {
				o.MaxIdle = tt.maxIdle
				observe := o.Observe
				o.Observe = func(u Update) {
					observe(u)
					h := h.Load()
					h.LiveIDs()
					h.SessionMetrics()
					if u.Kind == UpdateClosed && calledBack.CompareAndSwap(false, true) {
						h.CloseSession(u.Session)
						if _, err := h.Open(context.Background(), ""); err != nil {
							t.Errorf("Open from the observer: %v", err)
						}
					}
				}
			})
			h.Store(hh.host)
			done := make(chan struct{})
			go func() {
				defer close(done)
				l, err := hh.host.Open(context.Background(), "")
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := l.Prompt(context.Background(), "hello", nil); err != nil {
					t.Error(err)
				}
				tt.close(t, hh.host, l.ID())
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				hh.stuck.Store(true)
				t.Fatal("deadlock: the observer's call back into the host never returned")
			}
			if !calledBack.Load() {
				t.Error("no closed update reached the observer")
			}
		})
	}
}

// TestHostCloseWaitsForLoads: Close cancels a load of the external tools running in
// the background and returns only once it ended; after Close no load starts and no
// session opens.
func TestHostCloseWaitsForLoads(t *testing.T) {
	_, root := testutil.Workspace(t, map[string]string{
		"discover.sh": "#!/bin/sh\ntouch \"$0.started\"\nexec sleep 60\n",
	})
	config := t.TempDir()
	testutil.WriteFiles(t, config, map[string]string{"settings.json": `{"tools": {"discoveryCommand": "sh discover.sh", "callCommand": "sh call.sh"}}`})
	h, err := NewHost(HostOptions{Toolbox: toolbox.Options{Roots: []string{root}, ConfigDir: config, GeminiDir: t.TempDir()}, Logger: discard(),
		NewClient: func(context.Context, settings.Settings) (clients.Client, error) {
			return clients.NewScripted(clients.Script{}), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	var ended atomic.Bool
	h.StartExternalInBackground(func(error) { ended.Store(true) })
	started := filepath.Join(root, "discover.sh.started")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the discovery command never started")
		}
	}
	h.Close()
	if !ended.Load() {
		t.Error("Close returned before the load it cancelled ended")
	}
	os.Remove(started)
	var after error
	h.StartExternalInBackground(func(err error) { after = err })
	if !errors.Is(after, toolbox.ErrClosed) {
		t.Errorf("a load after Close: %v, want ErrClosed", after)
	}
	if err := h.StartExternal(context.Background()); !errors.Is(err, toolbox.ErrClosed) {
		t.Errorf("StartExternal after Close: %v, want ErrClosed", err)
	}
	if _, err := h.Open(context.Background(), ""); !errors.Is(err, ErrClosed) {
		t.Errorf("Open after Close: %v, want ErrClosed", err)
	}
	if _, err := os.Stat(started); err == nil {
		t.Error("the discovery command ran after Close")
	}
}

// TestHostBusyAndCancel: a session answers one prompt at a time, and Cancel ends the
// running one as cancelled.
func TestHostBusyAndCancel(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	hh := newHostHarness(t, "yolo", clients.Script{Turns: []clients.Turn{{Text: "thinking", Hang: true}}}, func(o *HostOptions) {
		observe := o.Observe
		o.Observe = func(u Update) {
			observe(u)
			if u.Kind == UpdateMessage {
				once.Do(func() { close(started) })
			}
		}
	})
	l, err := hh.host.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result)
	go func() {
		res, _ := l.Prompt(context.Background(), "hang", nil)
		done <- res
	}()
	// The first prompt has begun once its text streamed.
	select {
	case <-started:
	case res := <-done:
		t.Fatalf("the prompt ended early: %s", res.StopReason)
	}
	if _, err := l.Prompt(context.Background(), "second", nil); !errors.Is(err, ErrBusy) {
		t.Errorf("a second prompt: %v, want ErrBusy", err)
	}
	if err := hh.host.CloseSession(l.ID()); !errors.Is(err, ErrBusy) {
		t.Errorf("closing a busy session: %v, want ErrBusy", err)
	}
	if n, _ := hh.host.Cancel(l.ID()); n != 1 {
		t.Errorf("Cancel cancelled %d prompts, want 1", n)
	}
	if res := <-done; res.StopReason != StopCancelled {
		t.Errorf("stop reason %s, want cancelled", res.StopReason)
	}
}

// TestHostFreeWhenTurnEndIsTold: a front end that hears turn_end may undo the prompt
// or send the next one at once: the session no longer counts as answering when its
// end is told, though Prompt has not returned yet. (The Neovim test of :AgentlsUndoTurn
// failed with "the session is already answering a prompt" when the editor was quicker.)
func TestHostFreeWhenTurnEndIsTold(t *testing.T) {
	ended := make(chan struct{})
	tried := make(chan struct{})
	var first atomic.Bool
	hh := newHostHarness(t, "yolo", clients.Script{Turns: []clients.Turn{{Text: "first"}, {Text: "second"}, {Text: "third"}}}, func(o *HostOptions) {
		observe := o.Observe
		o.Observe = func(u Update) {
			observe(u)
			// The first end: the front end acts on it before the prompt goes on.
			if u.Kind == UpdateTurnEnd && first.CompareAndSwap(false, true) {
				close(ended)
				<-tried
			}
		}
	})
	l, err := hh.host.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Prompt(context.Background(), "one", nil)
		done <- err
	}()
	<-ended
	_, undoErr := hh.host.UndoTurn(context.Background(), l.ID(), 0, false)
	res, promptErr := l.Prompt(context.Background(), "two", nil)
	close(tried)
	if errors.Is(undoErr, ErrBusy) {
		t.Errorf("undo on hearing turn_end: %v", undoErr)
	}
	if promptErr != nil || res.Text != "second" {
		t.Errorf("the next prompt on hearing turn_end: %q, %v; want \"second\"", res.Text, promptErr)
	}
	if err := <-done; err != nil {
		t.Errorf("the first prompt: %v", err)
	}
	// Both prompts' ends leave the session free.
	if _, err := l.Prompt(context.Background(), "three", nil); errors.Is(err, ErrBusy) {
		t.Errorf("a prompt after both: %v", err)
	}
}

// TestHostOpenErrors: what Open says when it cannot open a session.
func TestHostOpenErrors(t *testing.T) {
	tests := []struct {
		name      string
		newClient func(context.Context, settings.Settings) (clients.Client, error)
		id        string
		check     func(error) bool
	}{
		{"no model", nil, "", func(err error) bool { return errors.Is(err, ErrNoModel) }},
		{"nil client", func(context.Context, settings.Settings) (clients.Client, error) { return nil, nil }, "",
			func(err error) bool { return errors.Is(err, ErrNoModel) }},
		{"client error", func(context.Context, settings.Settings) (clients.Client, error) { return nil, errors.New("no key") }, "",
			func(err error) bool { return errors.Is(err, ErrModel) && strings.Contains(err.Error(), "no key") }},
		{"unknown session", nil, "nope", func(err error) bool {
			var re *ResumeError
			return errors.As(err, &re) && re.ID == "nope"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hh := newHostHarness(t, "", clients.Script{}, func(o *HostOptions) {
				if tt.id == "" {
					o.NewClient = tt.newClient
				}
			})
			if _, err := hh.host.Open(context.Background(), tt.id); err == nil || !tt.check(err) {
				t.Errorf("Open(%q) = %v", tt.id, err)
			}
		})
	}
}

// TestHostSessionMode: a session's approval mode applies to its calls only.
func TestHostSessionMode(t *testing.T) {
	write := clients.ScriptCall{ID: "w", Name: "write_file", Args: json.RawMessage(`{"file_path": "ROOT/new.txt", "content": "x"}`)}
	tests := []struct {
		mode string
		want tools.Status
	}{
		{"", tools.StatusError}, // the workspace's default mode asks, and nobody can answer
		{"yolo", tools.StatusSuccess},
	}
	for _, tt := range tests {
		t.Run("mode "+tt.mode, func(t *testing.T) {
			hh := newHostHarness(t, "default", clients.Script{Turns: []clients.Turn{
				{Calls: []clients.ScriptCall{write}}, {Text: "done"},
			}}, nil)
			l, err := hh.host.Open(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			if tt.mode != "" && !hh.host.SetMode(l.ID(), "yolo") {
				t.Fatal("SetMode: the session is not live")
			}
			if _, err := l.Prompt(context.Background(), "write", nil); err != nil {
				t.Fatal(err)
			}
			var got tools.Status
			for _, u := range hh.of(UpdateToolCall) {
				if u.Call.Status.Terminal() {
					got = u.Call.Status
				}
			}
			if got != tt.want {
				t.Errorf("write_file ended %s, want %s", got, tt.want)
			}
		})
	}
}

// heldWriter is like the editor's writer: it compares the file with the text the tool
// read, then holds the first write until release is closed (the editor's round trip)
// and writes without a lock.
type heldWriter struct {
	arrived chan string
	release chan struct{}
	first   sync.Once
}

func (w *heldWriter) Write(ctx context.Context, c workspace.Change) error {
	data, err := os.ReadFile(c.Path)
	if err != nil {
		return err
	}
	if string(data) != c.Old.Text {
		return fmt.Errorf("%s changed since it was read: %w", c.Path, workspace.ErrStale)
	}
	w.arrived <- c.New
	hold := false
	w.first.Do(func() { hold = true })
	if hold {
		select {
		case <-w.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return os.WriteFile(c.Path, []byte(c.New), 0o644)
}

// TestHostSchedulersShareLocks: a call of the editor (RunTool) and a call of a session
// replacing different lines of one file both take effect. Each scheduler of the host
// shares the workspace's path locks, so the session's call proposes its edit against the
// text the editor's call wrote instead of writing over it.
func TestHostSchedulersShareLocks(t *testing.T) {
	// The session edits text the editor's call changes under it, which the rule that a
	// model edits only what it read would refuse; this test is about the locks.
	off := false
	hh := newHostHarness(t, "yolo", clients.Script{}, func(o *HostOptions) {
		o.Toolbox.Overrides.Tools.ReadBeforeEdit = &off
	})
	path := filepath.Join(hh.root, "f.txt")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &heldWriter{arrived: make(chan string, 2), release: make(chan struct{})}
	hh.host.Toolbox().Workspace.SetWriter(w)
	replace := func(id, old, new string) tools.Request {
		args, _ := json.Marshal(map[string]string{"file_path": path, "old_string": old, "new_string": new})
		return tools.Request{CallID: id, Name: "replace", Args: args}
	}
	l, err := hh.host.Open(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}

	editor := make(chan tools.CallResult, 1)
	go func() { editor <- hh.host.RunTool(t.Context(), "editor", replace("e1", "a", "A")) }()
	<-w.arrived
	sess := make(chan []tools.CallResult, 1)
	go func() { sess <- l.Run(t.Context(), []tools.Request{replace("s1", "b", "B")}) }()
	// Without shared locks the session's write arrives while the editor's is held; with
	// them it waits for the lock. Either way the outcome below tells.
	select {
	case <-w.arrived:
	case <-time.After(300 * time.Millisecond):
	}
	close(w.release)
	if r := <-editor; r.Status != tools.StatusSuccess {
		t.Fatalf("editor's call: %s %+v", r.Status, r.Error)
	}
	if r := (<-sess)[0]; r.Status != tools.StatusSuccess {
		t.Fatalf("session's call: %s %+v", r.Status, r.Error)
	}
	if data, _ := os.ReadFile(path); string(data) != "A\nB\n" {
		t.Errorf("both calls succeeded but the file holds %q, want %q", data, "A\nB\n")
	}
}

// TestHostRunTool: a call outside any session runs with the workspace's policy, its
// updates carry its scope, and Cancel of the scope stops it.
func TestHostRunTool(t *testing.T) {
	hh := newHostHarness(t, "yolo", clients.Script{}, nil)
	res := hh.host.RunTool(t.Context(), "editor", tools.Request{CallID: "e1", Name: "read_file",
		Args: json.RawMessage(`{"file_path": "a.txt"}`)})
	if res.Status != tools.StatusSuccess || res.Output != "a\n" {
		t.Fatalf("read_file: %s %q %+v", res.Status, res.Output, res.Error)
	}
	for _, u := range hh.of(UpdateToolCall) {
		if u.Session != "editor" || u.Call.CallID != "e1" {
			t.Errorf("update of session %q, call %q; want editor, e1", u.Session, u.Call.CallID)
		}
	}

	done := make(chan tools.CallResult, 1)
	go func() {
		done <- hh.host.RunTool(t.Context(), "editor", tools.Request{CallID: "e2", Name: "run_shell_command",
			Args: json.RawMessage(`{"command": "sleep 30"}`)})
	}()
	for {
		if _, calls := hh.host.Cancel("other"); calls != 0 {
			t.Fatalf("Cancel of another scope cancelled %d calls", calls)
		}
		if _, calls := hh.host.Cancel("editor"); calls == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if r := <-done; r.Status != tools.StatusCancelled {
		t.Errorf("the cancelled call ended %s, want cancelled", r.Status)
	}
}

// TestStopMaxTokens: an answer cut at the model's output limit ends the prompt with
// max_tokens, and images given with the prompt reach the model with its text.
func TestStopMaxTokens(t *testing.T) {
	hh := newHostHarness(t, "yolo", clients.Script{Turns: []clients.Turn{{Text: "a long answer, cut", FinishReason: "MAX_TOKENS"}}}, nil)
	l, err := hh.host.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	image := clients.Part{InlineData: &clients.Blob{MIMEType: "image/png", Data: []byte("png")}}
	res, err := l.Prompt(context.Background(), "describe it", nil, image)
	if err != nil || res.StopReason != StopMaxTokens {
		t.Fatalf("prompt: %+v, %v; want max_tokens", res, err)
	}
	h := l.Session().History()
	if len(h) == 0 || len(h[0].Parts) != 2 || h[0].Parts[1].InlineData == nil {
		t.Errorf("the prompt's content %+v, want its text and the image", h[0])
	}
}

// TestHostReadBeforeEdit: a session's model may edit only a file it has read (unless
// tools.readBeforeEdit is false), while a person's direct call (RunTool) is not held
// to that.
func TestHostReadBeforeEdit(t *testing.T) {
	off, on := false, true
	cases := []struct {
		name    string
		setting *bool
		direct  bool
		read    bool
		want    tools.Status
	}{
		{name: "session, unread", want: tools.StatusError},
		{name: "session, unread, setting true", setting: &on, want: tools.StatusError},
		{name: "session, read first", read: true, want: tools.StatusSuccess},
		{name: "session, unread, setting false", setting: &off, want: tools.StatusSuccess},
		{name: "direct call, unread", direct: true, want: tools.StatusSuccess},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hh := newHostHarness(t, "yolo", clients.Script{}, func(o *HostOptions) {
				o.Toolbox.Overrides.Tools.ReadBeforeEdit = tc.setting
			})
			path := filepath.Join(hh.root, "a.txt")
			args, _ := json.Marshal(map[string]string{"file_path": path, "old_string": "a", "new_string": "A"})
			edit := tools.Request{CallID: "e", Name: "replace", Args: args}
			var res tools.CallResult
			if tc.direct {
				res = hh.host.RunTool(t.Context(), "editor", edit)
			} else {
				l, err := hh.host.Open(t.Context(), "")
				if err != nil {
					t.Fatal(err)
				}
				if tc.read {
					rargs, _ := json.Marshal(map[string]string{"file_path": path})
					if r := l.Run(t.Context(), []tools.Request{{CallID: "r", Name: "read_file", Args: rargs}})[0]; r.Status != tools.StatusSuccess {
						t.Fatalf("read_file: %s %+v", r.Status, r.Error)
					}
				}
				res = l.Run(t.Context(), []tools.Request{edit})[0]
			}
			if res.Status != tc.want {
				t.Fatalf("edit: %s %q %+v, want %s", res.Status, res.Output, res.Error, tc.want)
			}
			want := "A\n"
			if tc.want != tools.StatusSuccess {
				want = "a\n"
				if !strings.Contains(res.Error.Message, "Read it first") {
					t.Errorf("refusal %q does not say to read the file first", res.Error.Message)
				}
			}
			if data, _ := os.ReadFile(path); string(data) != want {
				t.Errorf("a.txt holds %q, want %q", data, want)
			}
		})
	}
}

// TestHostPersistentShell: with tools.shell.persistent a session's commands share the
// working directory; without it, or in another session, or for a person's direct
// calls, each command starts in the root.
func TestHostPersistentShell(t *testing.T) {
	on := true
	cases := []struct {
		name       string
		persistent *bool
		want       string // where pwd runs after "cd sub" in the same session
	}{
		{"off by default", nil, "ROOT"},
		{"on", &on, "ROOT/sub"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hh := newHostHarness(t, "yolo", clients.Script{}, func(o *HostOptions) {
				o.Toolbox.Overrides.Tools.Shell.Persistent = tc.persistent
			})
			if err := os.Mkdir(filepath.Join(hh.root, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			shell := func(id, command string) tools.Request {
				args, _ := json.Marshal(map[string]string{"command": command})
				return tools.Request{CallID: id, Name: "run_shell_command", Args: args}
			}
			output := func(r tools.CallResult) string {
				t.Helper()
				if r.Status != tools.StatusSuccess {
					t.Fatalf("%s: %s %+v", r.CallID, r.Status, r.Error)
				}
				return r.Display
			}
			l, err := hh.host.Open(t.Context(), "")
			if err != nil {
				t.Fatal(err)
			}
			other, err := hh.host.Open(t.Context(), "")
			if err != nil {
				t.Fatal(err)
			}
			output(l.Run(t.Context(), []tools.Request{shell("c", "cd sub")})[0])
			if got, want := output(l.Run(t.Context(), []tools.Request{shell("p", "pwd")})[0]), strings.ReplaceAll(tc.want, "ROOT", hh.root); got != want {
				t.Errorf("pwd in the same session: %q, want %q", got, want)
			}
			if got := output(other.Run(t.Context(), []tools.Request{shell("p", "pwd")})[0]); got != hh.root {
				t.Errorf("pwd in another session: %q, want the root", got)
			}
			if got := output(hh.host.RunTool(t.Context(), "editor", shell("e", "pwd"))); got != hh.root {
				t.Errorf("pwd of a direct call: %q, want the root", got)
			}
		})
	}
}
