package session

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
)

// TestReplay: a stored session, resumed by a second host, replays as the updates its
// prompts made: the prompt, the thought, the answer, and each call with its title,
// kind and outcome under the host's call id.
func TestReplay(t *testing.T) {
	t.Parallel()
	read := clients.ScriptCall{ID: "r1", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/a.txt"}`)}
	missing := clients.ScriptCall{ID: "r2", Name: "read_file", Args: json.RawMessage(`{"file_path": "ROOT/missing.txt"}`)}
	hh := newHostHarness(t, "default", clients.Script{Turns: []clients.Turn{
		{Thought: "look first", Calls: []clients.ScriptCall{read, missing}},
		{Text: "a.txt holds a"},
	}}, nil)
	l, _ := hh.prompt("", "what is in a.txt?")
	id := l.ID()
	if err := hh.host.CloseSession(id); err != nil {
		t.Fatal(err)
	}
	again, err := hh.host.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if again == l {
		t.Fatal("the session was not let go")
	}

	var got []string
	for _, u := range again.Replay() {
		if u.Session != id {
			t.Errorf("update %s of session %q, want %q", u.Kind, u.Session, id)
		}
		switch u.Kind {
		case UpdateToolCall:
			c := u.Call
			s := fmt.Sprintf("call %s %s %s %s", c.CallID, c.Status, c.Kind, c.Name)
			if c.Result != nil {
				s += " result " + string(c.Result.Status)
				if c.Result.Error != nil {
					s += " " + string(c.Result.Error.Type)
				}
				if c.Result.CallID != c.CallID {
					t.Errorf("result of %s has id %s", c.CallID, c.Result.CallID)
				}
			} else if c.Title == "" || c.Title == c.Name || len(c.Locations) != 1 {
				t.Errorf("call %s: title %q, locations %v: want the tool's description", c.CallID, c.Title, c.Locations)
			}
			got = append(got, s)
		default:
			got = append(got, string(u.Kind)+" "+u.Text)
		}
	}
	want := []string{
		"user_message_chunk what is in a.txt?",
		"thought_chunk look first",
		"call " + id + "/r1 scheduled read read_file",
		"call " + id + "/r2 scheduled read read_file",
		"call " + id + "/r1 success read read_file result success",
		"call " + id + "/r2 error read read_file result error file_not_found",
		"message_chunk a.txt holds a",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("replay:\n got %q\nwant %q", got, want)
	}
	roots, err := hh.host.o.Store.Roots(id)
	if err != nil || len(roots) != 1 || roots[0] != hh.root {
		t.Errorf("Roots(%s) = %v, %v; want [%s]", id, roots, err, hh.root)
	}
}

// TestReplayUnanswered: a call the record has no response for (the process ended while
// it ran) replays as cancelled, and calls without ids get ids of their own.
func TestReplayUnanswered(t *testing.T) {
	t.Parallel()
	record := []clients.Content{
		{Role: clients.RoleUser, Parts: []clients.Part{{Text: "go"}}},
		{Role: clients.RoleModel, Parts: []clients.Part{{FunctionCall: &clients.FunctionCall{Name: "x"}}}},
	}
	ups := replay(record, nil, func(fc clients.FunctionCall) (string, tools.Kind, []tools.Location) {
		return fc.Name, tools.KindOther, nil
	})
	if len(ups) != 3 || ups[2].Call == nil || ups[2].Call.Status != tools.StatusCancelled || ups[2].Call.CallID != "replayed-1" {
		t.Fatalf("replay = %+v", ups)
	}
}

// TestHostMode: a session runs in the workspace's mode until SetMode gives it its own.
func TestHostMode(t *testing.T) {
	t.Parallel()
	hh := newHostHarness(t, "auto_edit", clients.Script{}, nil)
	l, err := hh.host.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := hh.host.Mode(l.ID()); !ok || m != confirm.ModeAutoEdit {
		t.Errorf("Mode = %q, %v; want the workspace's auto_edit", m, ok)
	}
	hh.host.SetMode(l.ID(), confirm.ModePlan)
	if m, ok := hh.host.Mode(l.ID()); !ok || m != confirm.ModePlan {
		t.Errorf("Mode after SetMode(plan) = %q, %v", m, ok)
	}
	if _, ok := hh.host.Mode("no-such-session"); ok {
		t.Error("Mode of an unknown session reports it live")
	}
	if got := CallSession(l.ID() + "/c1"); got != l.ID() {
		t.Errorf("CallSession = %q, want %q", got, l.ID())
	}
}

// TestContextUsage: after a prompt the session reports the prompt tokens of its last
// request against its model's window.
func TestContextUsage(t *testing.T) {
	t.Parallel()
	hh := newHostHarness(t, "default", clients.Script{Turns: []clients.Turn{
		{Text: "hi", Usage: &clients.Usage{PromptTokens: 1234, OutputTokens: 2}},
	}}, nil)
	l, _ := hh.prompt("", "hello")
	if got := l.ContextUsed(); got != 1234 {
		t.Errorf("ContextUsed = %d, want the last request's 1234", got)
	}
	if got := l.ContextWindow(); got != clients.GeminiContextWindow(l.Model()) {
		t.Errorf("ContextWindow = %d, want %d", got, clients.GeminiContextWindow(l.Model()))
	}
}
