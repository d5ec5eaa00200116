package session

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
)

// recordingAsker answers every question with answer, and keeps the questions.
type recordingAsker struct {
	answer *confirm.Answer // nil: asking fails, as where a front end cannot ask
	mu     sync.Mutex
	asked  []confirm.Request
}

func (a *recordingAsker) Ask(_ context.Context, r confirm.Request) (confirm.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r)
	if a.answer == nil {
		return confirm.Answer{}, errAskFailed
	}
	return *a.answer, nil
}

var errAskFailed = &askError{}

type askError struct{}

func (*askError) Error() string { return "the front end cannot ask" }

// TestInteractTools drives think, ask_user and the plan mode switches through a
// session of the host, from the model's call to the function response it gets: a
// switch or a question is put to the person in every approval mode, nothing changes
// when they refuse (or nobody can be asked), and an agreed switch changes the session's
// mode and reaches the front ends as a mode update.
func TestInteractTools(t *testing.T) {
	t.Parallel()
	proceed := &confirm.Answer{Outcome: confirm.ProceedOnce}
	cancel := &confirm.Answer{Outcome: confirm.Cancel}
	cases := []struct {
		name      string
		mode      string // the workspace's approval mode
		call      string // tool name
		args      string
		noAsker   bool
		answer    *confirm.Answer
		asks      confirm.Type // the type of the one question put, or "" for none
		wantMode  confirm.Mode // the session's mode after the call
		modeEvent bool         // whether a mode update was streamed
		thought   string       // the thought streamed, if any
		resp      string       // a part of the function response
	}{
		{name: "enter agreed", mode: "default", call: "enter_plan_mode", args: `{"reason":"big refactor"}`, answer: proceed,
			asks: confirm.TypeInfo, wantMode: confirm.ModePlan, modeEvent: true, resp: "output: Switched to plan mode"},
		{name: "enter refused in yolo", mode: "yolo", call: "enter_plan_mode", args: `{}`, answer: cancel,
			asks: confirm.TypeInfo, wantMode: confirm.ModeYolo, resp: "error: cancelled: The user declined"},
		{name: "enter asking failed", mode: "default", call: "enter_plan_mode", args: `{}`,
			asks: confirm.TypeInfo, wantMode: confirm.ModeDefault, resp: "error: cancelled: The user did not approve"},
		{name: "enter without asker", mode: "default", call: "enter_plan_mode", args: `{}`, noAsker: true,
			wantMode: confirm.ModeDefault, resp: "nobody can be asked"},
		{name: "enter when in plan", mode: "plan", call: "enter_plan_mode", args: `{}`, answer: proceed,
			wantMode: confirm.ModePlan, resp: "already in plan mode"},
		{name: "exit agreed", mode: "plan", call: "exit_plan_mode", args: `{"plan_filename":"a.txt"}`, answer: proceed,
			asks: confirm.TypeInfo, wantMode: confirm.ModeDefault, modeEvent: true, resp: "output: The user approved the plan"},
		{name: "exit refused", mode: "plan", call: "exit_plan_mode", args: `{}`, answer: cancel,
			asks: confirm.TypeInfo, wantMode: confirm.ModePlan, resp: "error: cancelled: The user declined"},
		{name: "exit when not in plan", mode: "auto_edit", call: "exit_plan_mode", args: `{}`, answer: proceed,
			wantMode: confirm.ModeAutoEdit, resp: "not in plan mode"},
		{name: "exit plan outside workspace", mode: "plan", call: "exit_plan_mode", args: `{"plan_filename":"/etc/passwd"}`, answer: proceed,
			wantMode: confirm.ModePlan, resp: "error: "},
		{name: "ask answered in yolo", mode: "yolo", call: "ask_user",
			args:   `{"questions":[{"question":"Which language?","header":"Lang","type":"choice","options":[{"label":"Go","description":"fast"},{"label":"Rust","description":"safe"}]}]}`,
			answer: &confirm.Answer{Outcome: confirm.ProceedOnce, Answers: map[string]string{"0": "Go", "7": "not asked"}},
			asks:   confirm.TypeAsk, wantMode: confirm.ModeYolo, resp: `output: {"answers":{"0":"Go"}}`},
		{name: "ask in plan mode", mode: "plan", call: "ask_user",
			args:   `{"questions":[{"question":"Name?","header":"Name","type":"text"}]}`,
			answer: &confirm.Answer{Outcome: confirm.ProceedOnce, Answers: map[string]string{"0": "agentls"}},
			asks:   confirm.TypeAsk, wantMode: confirm.ModePlan, resp: `output: {"answers":{"0":"agentls"}}`},
		{name: "ask dismissed", mode: "default", call: "ask_user",
			args:   `{"questions":[{"question":"Name?","header":"Name","type":"text"}]}`,
			answer: cancel, asks: confirm.TypeAsk, wantMode: confirm.ModeDefault, resp: "error: cancelled: The user dismissed the questions"},
		{name: "ask where the front end cannot", mode: "default", call: "ask_user",
			args: `{"questions":[{"question":"Name?","header":"Name","type":"text"}]}`,
			asks: confirm.TypeAsk, wantMode: confirm.ModeDefault, resp: "could not be put to the user (the front end cannot ask)"},
		{name: "ask without asker", mode: "yolo", call: "ask_user",
			args:    `{"questions":[{"question":"Name?","header":"Name","type":"text"}]}`,
			noAsker: true, wantMode: confirm.ModeYolo, resp: "nobody can be asked"},
		{name: "ask choice without options", mode: "yolo", call: "ask_user",
			args:   `{"questions":[{"question":"Which?","header":"X","type":"choice","options":[{"label":"only","description":""}]}]}`,
			answer: proceed, wantMode: confirm.ModeYolo, resp: "requires an 'options' array with 2-4 items"},
		{name: "think", mode: "plan", call: "think", args: `{"thought":"first the parser, then the tests"}`,
			wantMode: confirm.ModePlan, thought: "first the parser, then the tests", resp: "output: Your thought has been noted."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asker := &recordingAsker{answer: tc.answer}
			hh := newHostHarness(t, tc.mode, clients.Script{Turns: []clients.Turn{
				{Calls: []clients.ScriptCall{{ID: "c1", Name: tc.call, Args: json.RawMessage(tc.args)}}},
				{Text: "done"},
			}}, func(o *HostOptions) {
				if !tc.noAsker {
					o.Asker = asker
				}
			})
			l, _ := hh.prompt("", "go")
			if m, _ := hh.host.Mode(l.ID()); m != tc.wantMode {
				t.Errorf("mode %q, want %q", m, tc.wantMode)
			}
			asker.mu.Lock()
			asked := asker.asked
			asker.mu.Unlock()
			switch {
			case tc.asks == "" && len(asked) > 0:
				t.Errorf("asked %+v, want no question", asked)
			case tc.asks != "" && (len(asked) != 1 || asked[0].Details.Type != tc.asks || !asked[0].Details.NoAlways):
				t.Errorf("asked %+v, want one %s question asked every time", asked, tc.asks)
			}
			modes := hh.of(UpdateMode)
			if tc.modeEvent != (len(modes) == 1) || len(modes) > 1 {
				t.Errorf("mode updates %+v, want one: %v", modes, tc.modeEvent)
			} else if tc.modeEvent && (modes[0].Mode != tc.wantMode || modes[0].Session != l.ID()) {
				t.Errorf("mode update %+v, want %s of session %s", modes[0], tc.wantMode, l.ID())
			}
			var thoughts []string
			for _, u := range hh.of(UpdateThought) {
				thoughts = append(thoughts, u.Text)
			}
			if got := strings.Join(thoughts, ""); got != tc.thought {
				t.Errorf("thoughts %q, want %q", got, tc.thought)
			}
			reqs := hh.model.requests()
			if len(reqs) < 2 {
				t.Fatalf("%d requests to the model", len(reqs))
			}
			rs := responses(t, reqs[1])
			if len(rs) != 1 || !strings.Contains(respText(rs[0]), tc.resp) {
				var got []string
				for _, r := range rs {
					got = append(got, respText(r))
				}
				t.Errorf("responses %q, want one containing %q", got, tc.resp)
			}
		})
	}
}

// TestModeSwitchTakesThePersonsAnswer: no policy rule (the user's, a trusted
// workspace's, a wildcard), no remembered answer and no front end without a person lets
// a model switch the session's approval mode or answer ask_user: only a person's answer
// does. A refused exit_plan_mode leaves the session in plan mode, where the write the
// model tries next is refused and its marker file never appears.
func TestModeSwitchTakesThePersonsAnswer(t *testing.T) {
	t.Parallel()
	cancel := &confirm.Answer{Outcome: confirm.Cancel}
	exit := clients.ScriptCall{ID: "c1", Name: "exit_plan_mode", Args: json.RawMessage(`{}`)}
	enter := clients.ScriptCall{ID: "c1", Name: "enter_plan_mode", Args: json.RawMessage(`{}`)}
	ask := clients.ScriptCall{ID: "c1", Name: "ask_user",
		Args: json.RawMessage(`{"questions":[{"question":"Name?","header":"Name","type":"text"}]}`)}
	user := func(tool string) []confirm.Rule {
		return []confirm.Rule{{ToolName: tool, Decision: confirm.Allow, Priority: 100, Source: confirm.SourceUser}}
	}
	workspace := func(tool string) []confirm.Rule {
		return []confirm.Rule{{ToolName: tool, Decision: confirm.Allow, Priority: 100, Source: confirm.SourceWorkspace}}
	}
	cases := []struct {
		name     string
		mode     string
		rules    []confirm.Rule
		call     clients.ScriptCall
		noAsker  bool
		answer   *confirm.Answer
		wantMode confirm.Mode
		asked    int
		resp     string
	}{
		{name: "exit, the user's allow rule", mode: "plan", rules: user("exit_plan_mode"), call: exit, answer: cancel,
			wantMode: confirm.ModePlan, asked: 1, resp: "The user declined"},
		{name: "exit, a workspace's allow rule", mode: "plan", rules: workspace("exit_plan_mode"), call: exit, answer: cancel,
			wantMode: confirm.ModePlan, asked: 1, resp: "The user declined"},
		{name: "exit, a wildcard allow rule", mode: "plan", rules: user("*"), call: exit, answer: cancel,
			wantMode: confirm.ModePlan, asked: 1, resp: "The user declined"},
		{name: "exit, an allow rule, nobody to ask", mode: "plan", rules: user("*_plan_mode"), call: exit, noAsker: true,
			wantMode: confirm.ModePlan, resp: "only the user's answer"},
		{name: "exit, modify_with_editor is no answer", mode: "plan", call: exit,
			answer:   &confirm.Answer{Outcome: confirm.ModifyWithEditor, Content: "yolo"},
			wantMode: confirm.ModePlan, asked: 1, resp: "not an answer to this question"},
		{name: "enter, an allow rule in yolo", mode: "yolo", rules: user("enter_plan_mode"), call: enter, answer: cancel,
			wantMode: confirm.ModeYolo, asked: 1, resp: "The user declined"},
		{name: "ask_user, an allow rule", mode: "default", rules: workspace("ask_user"), call: ask, answer: cancel,
			wantMode: confirm.ModeDefault, asked: 1, resp: "dismissed the questions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asker := &recordingAsker{answer: tc.answer}
			hh := newHostHarness(t, tc.mode, clients.Script{Turns: []clients.Turn{
				{Calls: []clients.ScriptCall{tc.call}},
				{Calls: []clients.ScriptCall{{ID: "c2", Name: "write_file",
					Args: json.RawMessage(`{"file_path":"ROOT/marker.txt","content":"ran"}`)}}},
				{Text: "done"},
			}}, func(o *HostOptions) {
				o.Toolbox.Overrides.Policy.Rules = tc.rules
				if !tc.noAsker {
					o.Asker = asker
				}
			})
			l, _ := hh.prompt("", "go")
			if m, _ := hh.host.Mode(l.ID()); m != tc.wantMode {
				t.Errorf("mode %q, want %q", m, tc.wantMode)
			}
			if n := len(hh.of(UpdateMode)); n != 0 {
				t.Errorf("%d mode updates, want none", n)
			}
			asker.mu.Lock()
			asked := 0
			for _, r := range asker.asked {
				if r.ToolName == tc.call.Name {
					asked++
				}
			}
			asker.mu.Unlock()
			if asked != tc.asked {
				t.Errorf("asked %d times, want %d", asked, tc.asked)
			}
			reqs := hh.model.requests()
			if len(reqs) < 2 {
				t.Fatalf("%d requests to the model", len(reqs))
			}
			if rs := responses(t, reqs[1]); len(rs) != 1 || !strings.Contains(respText(rs[0]), tc.resp) {
				t.Errorf("response %q, want one containing %q", respText(rs[0]), tc.resp)
			}
			if tc.wantMode == confirm.ModePlan {
				if _, err := os.Stat(filepath.Join(hh.root, "marker.txt")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the write the model tried after the refused switch ran (stat: %v)", err)
				}
			}
		})
	}
}
