package rpc_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/rpc"
)

// TestPromptSubagent: through the editor protocol, the model's invoke_agent runs an
// agent the editor's settings define; the agent's write asks the editor for consent as
// the parent's would (under an id of the sub-agent's own), its progress is the call's
// live output, its answer reaches the parent, and the prompt's usage includes the
// agent's tokens.
func TestPromptSubagent(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.txt": "a\n"})
	u := func(in, out int) *clients.Usage { return &clients.Usage{PromptTokens: in, OutputTokens: out} }
	a := newAgent(t, root, "",
		clients.Turn{Calls: []clients.ScriptCall{call("invoke_agent", map[string]any{"agent_name": "writer", "prompt": "Create b.txt holding b."}, "p1")}, Usage: u(100, 10)},
		clients.Turn{Calls: []clients.ScriptCall{call("write_file", map[string]any{"file_path": filepath.Join(root, "b.txt"), "content": "b\n"}, "w1")}, Usage: u(20, 2)},
		clients.Turn{Text: "b.txt now holds b.", Usage: u(30, 3)},
		clients.Turn{Text: "The writer created b.txt.", Usage: u(200, 20)},
	)
	c := a.serve(capsRich, map[string]any{"agents": map[string]any{
		"writer": map[string]any{"description": "writes files", "tools": []string{"write_file"}},
	}}, rpc.Options{})
	// Each confirmation must refer to a call announced before it, as a sub-agent's
	// call of its own under the invoke_agent call.
	var (
		mu        sync.Mutex
		asked     []string
		announced []bool
	)
	c.Handle("agentls/confirm", func(_ context.Context, params json.RawMessage) (any, error) {
		var d struct {
			ToolCallID string `json:"toolCallId"`
		}
		json.Unmarshal(params, &d)
		session, _, _ := strings.Cut(d.ToolCallID, "/")
		seen := false
		for _, up := range updates(t, c, session) {
			seen = seen || (up.Kind == "tool_call" && up.ToolCallID == d.ToolCallID && up.ParentToolCallID == session+"/p1")
		}
		mu.Lock()
		asked, announced = append(asked, d.ToolCallID), append(announced, seen)
		mu.Unlock()
		return map[string]any{"outcome": "proceed_once"}, nil
	})
	var res promptResult
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "have the writer create b.txt"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "end_turn" || res.Text != "The writer created b.txt." {
		t.Fatalf("result %+v", res)
	}
	if res.Usage == nil || res.Usage.OutputTokens != 35 {
		t.Errorf("usage %+v, want the parent's and the agent's output tokens (35)", res.Usage)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !strings.HasPrefix(asked[0], res.Session+"/writer-") || !strings.HasSuffix(asked[0], "/w1") {
		t.Fatalf("confirmations asked for %q, want the agent's write_file once, under an id of its own", asked)
	}
	if !announced[0] {
		t.Errorf("the confirmation of %s came before a tool_call announced it under %s/p1", asked[0], res.Session)
	}
	// The agent's call ends like any call: completed, under its parent.
	var ended bool
	for _, up := range updates(t, c, res.Session) {
		ended = ended || (up.Kind == "tool_call_update" && up.ToolCallID == asked[0] && up.Status == "completed" && up.ParentToolCallID == res.Session+"/p1")
	}
	if !ended {
		t.Errorf("no completed tool_call_update of %s under its parent", asked[0])
	}
	// agentls.sessionHistory shows the agent's call as it was shown live.
	var hist struct{ Updates []update }
	if err := command(ctx, c, "agentls.sessionHistory", map[string]any{"session": res.Session}, &hist); err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, up := range hist.Updates {
		if strings.HasPrefix(up.Kind, "tool_call") {
			seq = append(seq, strings.Join([]string{up.Kind, up.ToolCallID, up.ParentToolCallID, up.Status}, " "))
		}
	}
	p1 := res.Session + "/p1"
	want := []string{"tool_call " + p1 + "  pending", "tool_call " + asked[0] + " " + p1 + " pending",
		"tool_call_update " + asked[0] + " " + p1 + " completed", "tool_call_update " + p1 + "  completed"}
	if !slices.Equal(seq, want) {
		t.Errorf("agentls.sessionHistory calls:\n%q\nwant\n%q", seq, want)
	}
	var live strings.Builder
	for _, up := range updates(t, c, res.Session) {
		if up.ToolCallID == res.Session+"/p1" {
			live.WriteString(up.Output)
		}
	}
	if !strings.Contains(live.String(), "[writer] ") || !strings.Contains(live.String(), "b.txt now holds b.") {
		t.Errorf("live output of invoke_agent %q, want the agent's call and answer", live.String())
	}
	// agentls.metrics counts the agent's call in the session and the process.
	var m struct {
		Process  []struct{ Name string }
		Sessions map[string][]struct {
			Name  string
			Calls int
		}
	}
	if err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "agentls.metrics"}, &m); err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, s := range m.Sessions[res.Session] {
		calls[s.Name] = s.Calls
	}
	if calls["invoke_agent"] != 1 || calls["write_file"] != 1 || len(m.Process) != 2 {
		t.Errorf("agentls.metrics: %+v", m)
	}
	reqs, err := a.fake.GenerateRequests()
	if err != nil || len(reqs) != 4 {
		t.Fatalf("%d model requests (%v)", len(reqs), err)
	}
	last := reqs[3].Contents[len(reqs[3].Contents)-1]
	if fr := last.Parts[0].FunctionResponse; fr == nil || fr.Name != "invoke_agent" || !strings.Contains(string(fr.Response), "b.txt now holds b.") {
		t.Errorf("the parent was answered %+v", last)
	}
}

// TestSubagentCallDiagnostics: a sub-agent's call that waits for approval shows its file
// as a diagnostic naming it, as any call's does, cleared when it ends.
func TestSubagentCallDiagnostics(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"doc.txt": "first line\nsecond\n"})
	a := newAgent(t, root, "",
		clients.Turn{Calls: []clients.ScriptCall{call("invoke_agent", map[string]any{"agent_name": "editor", "prompt": "Change second to 2nd in doc.txt."}, "p1")}},
		// The sub-agent reads doc.txt first: its edits are held to what it read itself.
		clients.Turn{Calls: []clients.ScriptCall{call("read_file", map[string]any{"file_path": "doc.txt"}, "r1")}},
		clients.Turn{Calls: []clients.ScriptCall{call("replace", replaceArgs("doc.txt", "second", "2nd"), "e1")}},
		clients.Turn{Text: "Changed."},
		clients.Turn{Text: "The editor changed it."},
	)
	c := a.serve(withDiagnostics(capsRich), map[string]any{"agents": map[string]any{
		"editor": map[string]any{"description": "edits files", "tools": []string{"read_file", "replace"}},
	}}, rpc.Options{})
	uri := lsptest.FileURI(filepath.Join(root, "doc.txt"))
	if err := c.Editor().Open(uri, "first line\nsecond\n"); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		shown  []lsptest.Diagnostic
		waited error
	)
	c.Handle("agentls/confirm", func(ctx context.Context, _ json.RawMessage) (any, error) {
		diags, _, err := c.WaitDiagnostics(ctx, uri, 0, func(d []lsptest.Diagnostic) bool {
			return len(ofSource(d, "agentls", lsptest.SeverityInformation)) > 0
		})
		mu.Lock()
		shown, waited = ofSource(diags, "agentls", lsptest.SeverityInformation), err
		mu.Unlock()
		return map[string]any{"outcome": "proceed_once"}, nil
	})
	var res promptResult
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "have the editor change doc.txt"}, &res); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if waited != nil || len(shown) == 0 {
		t.Fatalf("no diagnostic of the agent's waiting call: %v", waited)
	}
	if !contains(shown[0].Message, res.Session+"/editor-", "/e1", "replace") {
		t.Errorf("diagnostic %q does not name the agent's call", shown[0].Message)
	}
	if _, _, err := c.WaitDiagnostics(ctx, uri, 0, func(d []lsptest.Diagnostic) bool { return len(d) == 0 }); err != nil {
		t.Errorf("the call ended, its diagnostic stayed: %v", err)
	}
}
