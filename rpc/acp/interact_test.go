package acp_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// TestPlanModeAndAskUser: over ACP, enter_plan_mode asks with
// session/request_permission (no "always" option), the agreed switch reaches the client
// as current_mode_update and think's text as an agent_thought_chunk; ask_user is
// refused with a message the model reads, without a request to the client.
func TestPlanModeAndAskUser(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	fake, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("p1", "enter_plan_mode", map[string]any{"reason": "big"})}},
		clients.Turn{Calls: []clients.ScriptCall{
			call("t1", "think", map[string]any{"thought": "look before leaping"}),
			call("a1", "ask_user", map[string]any{"questions": []any{map[string]any{"question": "Name?", "header": "N", "type": "text"}}}),
		}},
		clients.Turn{Text: "ok"},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	a.client.take()
	res, err := a.prompt(ctx, sess.SessionId, "plan")
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	perms := a.client.takePermissions()
	if len(perms) != 1 || !strings.HasSuffix(string(perms[0].ToolCall.ToolCallId), "/p1") {
		t.Fatalf("permission requests %+v, want one for the mode switch", perms)
	}
	for _, o := range perms[0].Options {
		if o.Kind == sdk.PermissionOptionKindAllowAlways {
			t.Errorf("the mode switch offers %q", o.Name)
		}
	}
	var modes []string
	var thought strings.Builder
	for _, u := range a.client.take() {
		if u.CurrentModeUpdate != nil {
			modes = append(modes, string(u.CurrentModeUpdate.CurrentModeId))
		}
		if u.AgentThoughtChunk != nil {
			thought.WriteString(textOf(u.AgentThoughtChunk.Content))
		}
	}
	if strings.Join(modes, ",") != "plan" || !strings.Contains(thought.String(), "look before leaping") {
		t.Errorf("mode updates %q, thoughts %q", modes, thought.String())
	}
	reqs, err := fake.GenerateRequests()
	if err != nil || len(reqs) != 3 {
		t.Fatalf("%d model requests, %v", len(reqs), err)
	}
	var askResp string
	for _, c := range reqs[2].Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil && fr.Name == "ask_user" {
				askResp = string(fr.Response)
			}
		}
	}
	var r map[string]any
	json.Unmarshal([]byte(askResp), &r)
	if msg, _ := r["error"].(string); !strings.Contains(msg, "cannot be asked questions") {
		t.Errorf("ask_user's response %s, want the refusal", askResp)
	}
}
