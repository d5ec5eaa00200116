package rpc_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/rpc"
)

// TestPromptSubagent: through the editor protocol, the model's invoke_agent runs an
// agent the editor's settings define; the agent's write asks the editor for consent as
// the parent's would (under an id of the sub-agent's own), its progress is the call's
// live output, its answer reaches the parent, and the prompt's usage includes the
// agent's tokens.
func TestPromptSubagent(t *testing.T) {
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
	asked := answerConfirmations(c)
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
	if len(*asked) != 1 || !strings.HasPrefix((*asked)[0], res.Session+"/writer-") || !strings.HasSuffix((*asked)[0], "/w1") {
		t.Errorf("confirmations asked for %q, want the agent's write_file once, under an id of its own", *asked)
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
