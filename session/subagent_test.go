package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
)

func invokeCall(agent, prompt string) clients.ScriptCall {
	args, _ := json.Marshal(map[string]string{"agent_name": agent, "prompt": prompt})
	return clients.ScriptCall{ID: "ia1", Name: AgentToolName, Args: args}
}

func usage(n int) *clients.Usage {
	return &clients.Usage{PromptTokens: n, OutputTokens: 1, TotalTokens: n + 1}
}

// declared returns the names of the tools a request declared.
func declared(r clients.Request) []string {
	var out []string
	for _, d := range r.Tools {
		out = append(out, d.Name)
	}
	slices.Sort(out)
	return out
}

// TestInvokeAgentInvestigator: the parent's invoke_agent call runs the built-in
// investigator as a child session on the same model: the child's requests carry its
// own history (the prompt the parent wrote, not the parent's conversation), its own
// instructions and only the read-only tools; its tool calls stream as the parent
// call's live output; its answer is the call's result; its tokens count in the
// parent's usage, and its calls in the session's metrics.
func TestInvokeAgentInvestigator(t *testing.T) {
	t.Parallel()
	hh := newHostHarness(t, "default", clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{invokeCall(Investigator, "What does a.txt say? Report the text.")}, Usage: usage(100)},
		{Calls: []clients.ScriptCall{{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/a.txt"}`)}}, Usage: usage(20)},
		{Text: "a.txt says a.", Usage: usage(30)},
		{Text: "The investigator found that a.txt says a.", Usage: usage(200)},
	}}, nil)
	l, res := hh.prompt("", "Find out what a.txt says; use the investigator.")
	if res.StopReason != StopEndTurn || res.Text != "The investigator found that a.txt says a." {
		t.Fatalf("result %+v", res)
	}
	if want := 100 + 20 + 30 + 200 + 4; res.Usage.TotalTokens != want {
		t.Errorf("total tokens %d, want %d (the parent's and the child's)", res.Usage.TotalTokens, want)
	}
	reqs := hh.model.(geminiModel).requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	parentTools, childTools := declared(reqs[0]), declared(reqs[1])
	if !slices.Contains(parentTools, AgentToolName) || !slices.Contains(parentTools, "write_file") {
		t.Errorf("the parent's tools %v lack invoke_agent or write_file", parentTools)
	}
	if want := []string{"glob", "grep_search", "list_directory", "read_file", "read_many_files"}; !slices.Equal(childTools, want) {
		t.Errorf("the child's tools %v, want %v", childTools, want)
	}
	child := reqs[1]
	if len(child.History) != 1 || child.History[0].Parts[0].Text != "What does a.txt say? Report the text." {
		t.Errorf("the child's first request has history %+v, want only the parent's prompt for it", child.History)
	}
	if !strings.Contains(child.System, "codebase investigator") || strings.Contains(reqs[0].System, "codebase investigator, a sub-agent") {
		t.Errorf("the investigator's instructions are not (only) the child's")
	}
	// The parent's second request answers invoke_agent with the child's answer.
	last := reqs[3].History[len(reqs[3].History)-1]
	fr := last.Parts[0].FunctionResponse
	if fr == nil || fr.Name != AgentToolName || !strings.Contains(string(mustJSON(t, fr.Response)), "a.txt says a.") {
		t.Errorf("the parent got %+v", last)
	}
	var live strings.Builder
	for _, u := range hh.of(UpdateToolCall) {
		if u.Call.Name == AgentToolName {
			live.WriteString(u.Call.Output)
		}
	}
	if !strings.Contains(live.String(), "["+Investigator+"] ") || !strings.Contains(live.String(), "a.txt says a.") {
		t.Errorf("live output of the call %q, want the child's tool call and answer", live.String())
	}
	m := map[string]tools.ToolStats{}
	for _, s := range l.Metrics() {
		m[s.Name] = s
	}
	if m["read_file"].Calls != 1 || m[AgentToolName].Calls != 1 {
		t.Errorf("session metrics %+v", m)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// approver approves every question and records it.
type approver struct {
	mu    sync.Mutex
	asked []string
}

func (a *approver) Ask(_ context.Context, r confirm.Request) (confirm.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r.ToolName)
	return confirm.Answer{Outcome: confirm.ProceedOnce}, nil
}

// TestInvokeAgentConsent: an agent from the settings with a writing tool asks before
// its writes through the host's Asker, as the parent would; with nobody to ask the
// write is refused and the file is left alone.
func TestInvokeAgentConsent(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		asker   *approver
		written bool
	}{
		{"nobody to ask", nil, false},
		{"approved", &approver{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hh := newHostHarness(t, "default", clients.Script{Turns: []clients.Turn{
				{Calls: []clients.ScriptCall{invokeCall("writer", "Write b.txt.")}},
				{Calls: []clients.ScriptCall{{ID: "w1", Name: "write_file", Args: json.RawMessage(`{"file_path": "ROOT/b.txt", "content": "b\n"}`)}}},
				{Text: "Done."},
				{Text: "The writer is done."},
			}}, func(o *HostOptions) {
				o.Toolbox.Overrides = settings.Settings{Agents: map[string]settings.AgentSettings{
					"writer": {Description: "writes files", Tools: []string{"write_file", "read_file"}},
				}}
				if tt.asker != nil {
					o.Asker = tt.asker
				}
			})
			_, res := hh.prompt("", "Have the writer write b.txt.")
			if res.StopReason != StopEndTurn {
				t.Fatalf("result %+v", res)
			}
			_, err := os.Stat(filepath.Join(hh.root, "b.txt"))
			if written := err == nil; written != tt.written {
				t.Errorf("b.txt written: %v, want %v", written, tt.written)
			}
			if tt.asker != nil && !slices.Equal(tt.asker.asked, []string{"write_file"}) {
				t.Errorf("asked about %v, want write_file once", tt.asker.asked)
			}
			// The agent's write is the prompt's: undo takes it back, and stats count it.
			if tt.written {
				l := hh.host.get(hh.host.LiveIDs()[0])
				if _, err := hh.host.UndoTurn(context.Background(), l.ID(), 1, false); err != nil {
					t.Fatalf("undo: %v", err)
				}
				if _, err := os.Stat(filepath.Join(hh.root, "b.txt")); err == nil {
					t.Error("undo left the agent's b.txt")
				}
			}
			runs, _ := hh.host.o.Store.ToolRuns(hh.host.LiveIDs()[0])
			if n := len(runs); n != 2 {
				t.Errorf("stored runs %+v, want invoke_agent's and the agent's write_file", runs)
			}
		})
	}
}

// TestInvokeAgentCancel: cancelling the parent's prompt while the child waits for the
// model ends the child, and the call and the prompt end cancelled.
func TestInvokeAgentCancel(t *testing.T) {
	t.Parallel()
	childStarted := make(chan struct{})
	var once sync.Once
	hh := newHostHarness(t, "default", clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{invokeCall(Investigator, "Look around.")}, Usage: usage(10)},
		{Text: "Looking", Chunks: 1, Hang: true},
	}}, func(o *HostOptions) {
		observe := o.Observe
		o.Observe = func(u Update) {
			observe(u)
			if u.Kind == UpdateToolCall && u.Call.Name == AgentToolName && strings.HasPrefix(u.Call.Output, "Lo") {
				once.Do(func() { close(childStarted) })
			}
		}
	})
	l, err := hh.host.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() {
		res, _ := l.Prompt(context.Background(), "investigate", nil)
		done <- res
	}()
	select {
	case <-childStarted:
	case res := <-done:
		t.Fatalf("the prompt ended before the child streamed: %+v", res)
	}
	if n, _ := hh.host.Cancel(l.ID()); n != 1 {
		t.Errorf("Cancel cancelled %d prompts, want 1", n)
	}
	if res := <-done; res.StopReason != StopCancelled {
		t.Errorf("stop reason %s, want cancelled", res.StopReason)
	}
	var status tools.Status
	for _, u := range hh.of(UpdateToolCall) {
		if u.Call.Name == AgentToolName && u.Call.Status.Terminal() {
			status = u.Call.Status
		}
	}
	if status != tools.StatusCancelled {
		t.Errorf("invoke_agent ended %q, want cancelled", status)
	}
}

// TestInvokeAgentBadCalls: an unknown agent and an empty prompt are refused with what
// to do, and a call outside a model session (a person's own) says why it cannot run.
func TestInvokeAgentBadCalls(t *testing.T) {
	t.Parallel()
	hh := newHostHarness(t, "default", clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{invokeCall("typo", "Do it.")}},
		{Text: "It could not start."},
	}}, func(o *HostOptions) {
		o.Toolbox.Overrides = settings.Settings{Agents: map[string]settings.AgentSettings{
			"typo": {Description: "names a tool that does not exist", Tools: []string{"read_file", "raed_file"}},
		}}
	})
	for _, tt := range []struct {
		args, want string
		typ        tools.ErrorType
	}{
		{`{"agent_name": "nobody", "prompt": "x"}`, `Subagent "nobody" not found. The agents are: codebase_investigator, typo.`, tools.ErrInvalidParams},
		{`{"agent_name": "codebase_investigator", "prompt": "  "}`, "is empty", tools.ErrInvalidParams},
		{`{"agent_name": "codebase_investigator"}`, "prompt", tools.ErrInvalidParams},
		{`{"agent_name": "codebase_investigator", "prompt": "look"}`, "runs only within a model session", tools.ErrExecutionFailed},
	} {
		r := hh.host.RunTool(context.Background(), "editor", tools.Request{CallID: "x", Name: AgentToolName, Args: json.RawMessage(tt.args)})
		if r.Status != tools.StatusError || r.Error == nil || r.Error.Type != tt.typ || !strings.Contains(r.Output, tt.want) {
			t.Errorf("%s: %+v, want %s with %q", tt.args, r, tt.typ, tt.want)
		}
	}
	// An agent whose settings name a tool that is not there does not start, and says
	// which; the model is told and goes on.
	_, res := hh.prompt("", "use typo")
	reqs := hh.model.(geminiModel).requests()
	if res.StopReason != StopEndTurn || len(reqs) != 2 {
		t.Fatalf("result %+v after %d requests; want the parent told, and no child request", res, len(reqs))
	}
	fr := reqs[1].History[len(reqs[1].History)-1].Parts[0].FunctionResponse
	if fr == nil || !strings.Contains(string(mustJSON(t, fr.Response)), "not available here: raed_file") {
		t.Errorf("the parent got %+v", fr)
	}
}

// TestInvokeAgentSchema: the parameters are Gemini CLI's (packages/core/src/agents/
// agent-tool.ts): agent_name and prompt, both required, so that a model prompted for
// Gemini CLI calls it unchanged; the description lists the agents.
func TestInvokeAgentSchema(t *testing.T) {
	t.Parallel()
	hh := newHostHarness(t, "default", clients.Script{}, func(o *HostOptions) {
		o.Toolbox.Overrides = settings.Settings{Agents: map[string]settings.AgentSettings{"docs": {Description: "writes the docs"}}}
	})
	var info tools.Info
	for _, d := range hh.host.Toolbox().Config().Registry.List() {
		if d.Name == AgentToolName {
			info = d
		}
	}
	var schema struct {
		Properties map[string]struct{ Type string }
		Required   []string
	}
	if err := json.Unmarshal(info.Parameters, &schema); err != nil {
		t.Fatalf("%s: %v", info.Parameters, err)
	}
	slices.Sort(schema.Required)
	if len(schema.Properties) != 2 || schema.Properties["agent_name"].Type != "string" || schema.Properties["prompt"].Type != "string" ||
		!slices.Equal(schema.Required, []string{"agent_name", "prompt"}) {
		t.Errorf("schema %s", info.Parameters)
	}
	if !strings.Contains(info.Description, "- codebase_investigator: ") || !strings.Contains(info.Description, "- docs: writes the docs") {
		t.Errorf("description %q does not list the agents", info.Description)
	}
	// A change of the agents in the settings makes a registry with the new ones.
	r, err := hh.host.Reconfigure(settings.Settings{Agents: map[string]settings.AgentSettings{"late": {Description: "came later"}}})
	if err != nil || !r.Registry {
		t.Fatalf("Reconfigure: %+v, %v; want a new registry", r, err)
	}
	tool, ok := hh.host.Toolbox().Config().Registry.Get(AgentToolName)
	if d := tool.Info().Description; !ok || !strings.Contains(d, "- late: came later") || strings.Contains(d, "- docs:") {
		t.Errorf("after Reconfigure the description is %q", d)
	}
}

// TestToolRunsStored: each tool call of a session's prompt is kept in its file with its
// status, so that agentls stats counts it after the process is gone.
func TestToolRunsStored(t *testing.T) {
	t.Parallel()
	hh := newHostHarness(t, "default", clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{
			{ID: "r1", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/a.txt"}`)},
			{ID: "r2", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/missing.txt"}`)},
		}},
		{Text: "done"},
	}}, nil)
	l, _ := hh.prompt("", "read")
	runs, err := hh.host.o.Store.ToolRuns(l.ID())
	if err != nil {
		t.Fatal(err)
	}
	stats := MetricsOf(runs)
	if len(runs) != 2 || len(stats) != 1 || stats[0].Name != "read_file" || stats[0].Calls != 2 || stats[0].Errors != 1 {
		t.Errorf("runs %+v, stats %+v", runs, stats)
	}
}

// TestInvokeAgentWithWriterInBatch: a batch that writes a file and starts an agent
// writing the same file ends, both writes done in request order: the agent runs after
// the batch's other calls, whose locks would otherwise hold it up for ever.
func TestInvokeAgentWithWriterInBatch(t *testing.T) {
	t.Parallel()
	hh := newHostHarness(t, "yolo", clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{
			{ID: "w0", Name: "write_file", Args: json.RawMessage(`{"file_path": "ROOT/b.txt", "content": "parent\n"}`)},
			invokeCall("writer", "Append a line to b.txt."),
		}},
		// The sub-agent reads the file first: its edits are held to what it read itself.
		{Calls: []clients.ScriptCall{{ID: "r1", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/b.txt"}`)}}},
		{Calls: []clients.ScriptCall{{ID: "w1", Name: "replace", Args: json.RawMessage(`{"file_path": "ROOT/b.txt", "old_string": "parent\n", "new_string": "parent\nchild\n"}`)}}},
		{Text: "Appended."},
		{Text: "Both wrote."},
	}}, func(o *HostOptions) {
		o.Toolbox.Overrides = settings.Settings{Agents: map[string]settings.AgentSettings{
			"writer": {Description: "writes files", Tools: []string{"read_file", "replace"}},
		}}
	})
	l, err := hh.host.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := l.Prompt(ctx, "write b.txt, then have the writer add to it", nil)
	if err != nil || res.StopReason != StopEndTurn {
		t.Fatalf("result %+v, %v (a deadlock ends cancelled)", res, err)
	}
	if got, _ := os.ReadFile(filepath.Join(hh.root, "b.txt")); string(got) != "parent\nchild\n" {
		t.Errorf("b.txt = %q", got)
	}
}

// askFunc is a confirm.Asker made of a function.
type askFunc func(context.Context, confirm.Request) (confirm.Answer, error)

func (f askFunc) Ask(ctx context.Context, r confirm.Request) (confirm.Answer, error) {
	return f(ctx, r)
}

// TestInvokeAgentCallsAnnounced: a sub-agent's calls reach the session's update stream
// as calls of their own, with the invoke_agent call as their parent: the call a
// confirmation refers to was announced before it was asked about, and its end carries
// what it touched and its diff.
func TestInvokeAgentCallsAnnounced(t *testing.T) {
	t.Parallel()
	var hh *hostHarness
	var asked []confirm.Request
	var announcedFirst []bool
	hh = newHostHarness(t, "default", clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{invokeCall("writer", "Write b.txt.")}},
		{Calls: []clients.ScriptCall{{ID: "w1", Name: "write_file", Args: json.RawMessage(`{"file_path": "ROOT/b.txt", "content": "b\n"}`)}}},
		{Text: "Done."},
		{Text: "The writer is done."},
	}}, func(o *HostOptions) {
		o.Toolbox.Overrides = settings.Settings{Agents: map[string]settings.AgentSettings{
			"writer": {Description: "writes files", Tools: []string{"write_file"}},
		}}
		o.Asker = askFunc(func(_ context.Context, r confirm.Request) (confirm.Answer, error) {
			seen := false
			for _, u := range hh.of(UpdateToolCall) {
				seen = seen || (u.Call.CallID == r.ToolCallID && u.Call.Status == tools.StatusScheduled)
			}
			asked, announcedFirst = append(asked, r), append(announcedFirst, seen)
			return confirm.Answer{Outcome: confirm.ProceedOnce}, nil
		})
	})
	l, res := hh.prompt("", "Have the writer write b.txt.")
	if res.StopReason != StopEndTurn {
		t.Fatalf("result %+v", res)
	}
	parent := l.ID() + "/ia1"
	if len(asked) != 1 || !announcedFirst[0] {
		t.Fatalf("asked %+v (announced before: %v), want the write asked about once, after its tool_call", asked, announcedFirst)
	}
	var child []tools.Event
	for _, u := range hh.of(UpdateToolCall) {
		if u.Session != l.ID() {
			t.Errorf("update of session %q, want %q", u.Session, l.ID())
		}
		if u.Call.Name == "write_file" {
			child = append(child, *u.Call)
		}
	}
	if len(child) == 0 {
		t.Fatal("the sub-agent's write_file was not on the session's update stream")
	}
	for _, ev := range child {
		if ev.Parent != parent || ev.CallID != asked[0].ToolCallID {
			t.Errorf("child event %s %s parent %q, want id %s parent %q", ev.CallID, ev.Status, ev.Parent, asked[0].ToolCallID, parent)
		}
	}
	i := slices.IndexFunc(child, func(ev tools.Event) bool { return ev.Status == tools.StatusScheduled })
	if i < 0 {
		t.Fatalf("no scheduled event of the child call in %+v", child)
	}
	first, last := child[i], child[len(child)-1]
	if len(first.Locations) != 1 || first.Locations[0].Path != filepath.Join(hh.root, "b.txt") {
		t.Errorf("first child event %+v, want scheduled at b.txt", first)
	}
	if last.Status != tools.StatusSuccess || last.Result == nil || last.Result.Diff == nil {
		t.Errorf("last child event %+v, want success with a diff", last)
	}
	for _, u := range hh.of(UpdateToolCall) {
		if u.Call.Name == AgentToolName && u.Call.Parent != "" {
			t.Errorf("the parent's call has a parent: %+v", u.Call)
		}
	}
	// Replay, of the live session and of the stored one, shows the calls as they were
	// shown live: the same ids, parents, titles and outcomes, the agent's within its
	// parent's.
	live := callStarts(hh.of(UpdateToolCall))
	if got := callStarts(l.Replay()); !slices.Equal(got, live) {
		t.Errorf("replay of the live session:\n%q\nlive:\n%q", got, live)
	}
	if err := hh.host.CloseSession(l.ID()); err != nil {
		t.Fatal(err)
	}
	ups, err := hh.host.Replay(l.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := callStarts(ups); !slices.Equal(got, live) {
		t.Errorf("replay of the stored session:\n%q\nlive:\n%q", got, live)
	}
}

// callStarts describes the starts and ends of the calls in ups, one line each.
func callStarts(ups []Update) []string {
	var out []string
	for _, u := range ups {
		if c := u.Call; c != nil && (c.Status == tools.StatusScheduled || c.Status.Terminal()) {
			out = append(out, strings.Join([]string{c.CallID, c.Parent, c.Name, c.Title, string(c.Status)}, " | "))
		}
	}
	return out
}

// TestInvokeAgentInheritsRestrictions: a sub-agent is held to every restriction of the
// session that starts it (red team R4): the command restrictions of coreTools and
// excludeTools, deny rules, and the session's own approval mode. The person approves
// every question, so only a restriction can stop the child's touch; the control, with
// none, shows that the same touch runs.
func TestInvokeAgentInheritsRestrictions(t *testing.T) {
	runner := map[string]settings.AgentSettings{
		"runner": {Description: "runs commands", Tools: []string{"run_shell_command"}},
	}
	for _, tt := range []struct {
		name        string
		hostMode    string
		sessionMode confirm.Mode
		settings    settings.Settings
		want        string // the refusal, "" when the touch runs
	}{
		{name: "control", hostMode: "yolo"},
		{name: "control default mode approved", hostMode: "default"},
		{
			name: "excludeTools command", hostMode: "yolo",
			settings: settings.Settings{ExcludeTools: []string{"run_shell_command(touch)"}},
			want:     "restricted by the coreTools/excludeTools settings",
		},
		{
			name: "coreTools allowlist", hostMode: "yolo",
			settings: settings.Settings{CoreTools: []string{"run_shell_command(git status)", AgentToolName}},
			want:     "restricted by the coreTools/excludeTools settings",
		},
		{
			name: "deny rule", hostMode: "yolo",
			settings: settings.Settings{Policy: settings.PolicySettings{Rules: []confirm.Rule{
				{ToolName: "run_shell_command", Decision: confirm.Deny, CommandPrefix: []string{"touch"}},
			}}},
			want: "denied by",
		},
		{name: "session in plan mode", hostMode: "yolo", sessionMode: confirm.ModePlan, want: "plan mode"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			asker := &approver{}
			hh := newHostHarness(t, tt.hostMode, clients.Script{Turns: []clients.Turn{
				{Calls: []clients.ScriptCall{invokeCall("runner", "Touch the marker.")}},
				{Calls: []clients.ScriptCall{shellCall("s1", "touch ROOT/rt-pwned-subagent")}},
				{Text: "Tried."},
				{Text: "The runner tried."},
			}}, func(o *HostOptions) {
				s := tt.settings
				s.Agents = runner
				o.Toolbox.Overrides = s
				o.Asker = asker
			})
			l, err := hh.host.Open(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			if tt.sessionMode != "" && !hh.host.SetMode(l.ID(), tt.sessionMode) {
				t.Fatal("SetMode failed")
			}
			if res, err := l.Prompt(context.Background(), "Have the runner touch the marker.", nil); err != nil || res.StopReason != StopEndTurn {
				t.Fatalf("result %+v, %v", res, err)
			}
			_, err = os.Stat(filepath.Join(hh.root, "rt-pwned-subagent"))
			if ran := err == nil; ran != (tt.want == "") {
				t.Fatalf("the child's touch ran: %v, want %v", ran, tt.want == "")
			}
			var end *tools.Event
			for _, u := range hh.of(UpdateToolCall) {
				if u.Call.Name == "run_shell_command" && u.Call.Parent != "" && u.Call.Status.Terminal() {
					end = u.Call
				}
			}
			if end == nil {
				t.Fatal("no end of the child's call on the update stream")
			}
			if tt.want == "" {
				if end.Status != tools.StatusSuccess {
					t.Errorf("control: the child's call ended %s: %+v", end.Status, end.Result)
				}
				return
			}
			if end.Result == nil || end.Result.Error == nil || end.Result.Error.Type != tools.ErrPolicyViolation ||
				!strings.Contains(end.Result.Error.Message, tt.want) {
				t.Errorf("the child's call ended %s with %+v, want a policy_violation saying %q", end.Status, end.Result, tt.want)
			}
			if len(asker.asked) != 0 {
				t.Errorf("asked about %v; a refused call is not asked about", asker.asked)
			}
		})
	}
}

// TestInvokeAgentSharesSessionAnswers: a sub-agent's calls are decided with its
// session's policy, "always" answers included: after the person answered "always" to
// the session's touch, the child's touch runs without a question, and the child's own
// question about another command goes to the same person.
func TestInvokeAgentSharesSessionAnswers(t *testing.T) {
	var asked []string
	hh := newHostHarness(t, "default", clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{shellCall("p1", "touch ROOT/one")}},
		{Calls: []clients.ScriptCall{invokeCall("runner", "Touch two, then make a folder.")}},
		{Calls: []clients.ScriptCall{shellCall("s1", "touch ROOT/two")}},
		{Calls: []clients.ScriptCall{shellCall("s2", "mkdir ROOT/three")}},
		{Text: "Done."},
		{Text: "The runner is done."},
	}}, func(o *HostOptions) {
		o.Toolbox.Overrides = settings.Settings{Agents: map[string]settings.AgentSettings{
			"runner": {Description: "runs commands", Tools: []string{"run_shell_command"}},
		}}
		o.Asker = askFunc(func(_ context.Context, r confirm.Request) (confirm.Answer, error) {
			asked = append(asked, r.Details.Command)
			return confirm.Answer{Outcome: confirm.ProceedAlways}, nil
		})
	})
	if _, res := hh.prompt("", "touch one, then have the runner touch two"); res.StopReason != StopEndTurn {
		t.Fatalf("result %+v", res)
	}
	for _, f := range []string{"one", "two", "three"} {
		if _, err := os.Stat(filepath.Join(hh.root, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	want := []string{"touch " + filepath.Join(hh.root, "one"), "mkdir " + filepath.Join(hh.root, "three")}
	if !slices.Equal(asked, want) {
		t.Errorf("asked about %q, want %q (the child's touch covered by the session's answer)", asked, want)
	}
}
