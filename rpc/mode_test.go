package rpc_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/rpc"
)

// TestPromptPlanModeSwitch: the model asks to enter plan mode and thinks; the editor
// is asked (and agrees), the session's new mode reaches it as current_mode_update (a
// window/showMessage for a client without agentls/update), the thought as a
// thought_chunk, and the edit the model tries next is refused by plan mode.
func TestPromptPlanModeSwitch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		caps map[string]any
	}{{"rich", capsRich}, {"plain", capsEditor}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, map[string]string{"a.txt": "a\n"})
			a := newAgent(t, root, "",
				clients.Turn{Calls: []clients.ScriptCall{
					call("enter_plan_mode", map[string]any{"reason": "a large change"}, "c1"),
					call("think", map[string]any{"thought": "read first, then plan", "wait_for_previous": true}, "c2"),
				}},
				clients.Turn{Calls: []clients.ScriptCall{call("write_file", map[string]any{"file_path": filepath.Join(root, "a.txt"), "content": "b\n"}, "c3")}},
				clients.Turn{Text: "planned"},
			)
			c := a.serve(tc.caps, nil, rpc.Options{})
			var asked *[]string
			if tc.name == "rich" {
				asked = answerConfirmations(c)
			} else {
				c.Handle("window/showMessageRequest", answer(map[string]any{"title": "Allow once"}))
			}
			var res promptResult
			if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "plan it"}, &res); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(root, "a.txt")); got != "a\n" {
				t.Errorf("a.txt %q: plan mode let the edit through", got)
			}
			if tc.name == "rich" {
				if len(*asked) != 1 || !strings.HasSuffix((*asked)[0], "/c1") {
					t.Errorf("asked about %v, want the mode switch only", *asked)
				}
				var modes, thoughts []string
				failed := false
				for _, u := range updates(t, c, res.Session) {
					switch u.Kind {
					case "current_mode_update":
						modes = append(modes, u.Mode)
					case "thought_chunk":
						thoughts = append(thoughts, u.Text)
					case "tool_call_update":
						failed = failed || u.ToolCallID == res.Session+"/c3" && u.Status == "failed"
					}
				}
				if strings.Join(modes, ",") != "plan" || strings.Join(thoughts, "") != "read first, then plan" || !failed {
					t.Errorf("mode updates %q, thoughts %q, edit failed %v", modes, thoughts, failed)
				}
				return
			}
			if reqs := c.Received("window/showMessageRequest"); len(reqs) != 1 {
				t.Errorf("%d showMessageRequest, want the mode switch asked once", len(reqs))
			} else if p := string(reqs[0].Params); strings.Contains(p, "lways") || !strings.Contains(p, `"Allow once"`) {
				// Asked every time: an "always" would mean once.
				t.Errorf("the mode switch offered %s, want Allow once and Reject only", p)
			}
			shown := false
			for _, m := range c.Received("window/showMessage") {
				shown = shown || strings.Contains(string(m.Params), "now runs in plan mode")
			}
			if !shown {
				t.Errorf("no window/showMessage of the mode switch: %v", c.Received("window/showMessage"))
			}
		})
	}
}
