package interact

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// TestAskUserBuild checks ask_user's own rules beyond its schema, as Gemini CLI's: a
// choice needs 2 to 4 options with labels, the type defaults to choice, and escaped
// line breaks are undone.
func TestAskUserBuild(t *testing.T) {
	cases := []struct {
		name    string
		args    string
		wantErr string
		check   func(t *testing.T, qs []confirm.Question)
	}{
		{name: "no questions", args: `{"questions":[]}`, wantErr: "at least one question"},
		{name: "choice with one option", args: `{"questions":[{"question":"Q?","header":"H","type":"choice","options":[{"label":"a","description":""}]}]}`,
			wantErr: "2-4 items"},
		{name: "choice with five options", args: `{"questions":[{"question":"Q?","header":"H","type":"choice","options":[` +
			strings.Repeat(`{"label":"a","description":""},`, 4) + `{"label":"e","description":""}]}]}`, wantErr: "2-4 items"},
		{name: "empty label", args: `{"questions":[{"question":"Q?","header":"H","type":"yesno","options":[{"label":" ","description":""}]}]}`,
			wantErr: "'label' must not be empty"},
		{name: "empty question", args: `{"questions":[{"question":" ","header":"H","type":"text"}]}`, wantErr: "'question' must not be empty"},
		{name: "type defaults to choice", args: `{"questions":[{"question":"Q?","header":"H","type":"","options":[{"label":"a","description":"x"},{"label":"b","description":"y"}]}]}`,
			check: func(t *testing.T, qs []confirm.Question) {
				if qs[0].Type != confirm.QuestionChoice {
					t.Errorf("type %q", qs[0].Type)
				}
			}},
		{name: "escaped line breaks", args: `{"questions":[{"question":"line one\\nline two?","header":"H","type":"text"}]}`,
			check: func(t *testing.T, qs []confirm.Question) {
				if qs[0].Question != "line one\nline two?" {
					t.Errorf("question %q", qs[0].Question)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := askTool{}.Build(json.RawMessage(tc.args))
			if tc.wantErr != "" {
				if testutil.ErrorType(err) != tools.ErrInvalidParams || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want invalid_tool_params with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d, err := inv.Confirmation(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d.Type != confirm.TypeAsk || !d.NoAlways {
				t.Errorf("details %+v, want ask_user asked every time", d)
			}
			tc.check(t, d.Questions)
		})
	}
}

// TestAskUserAnswers checks what the model gets from the answers: only the questions
// asked, in Gemini CLI's form; and that nothing comes back when nobody answered.
func TestAskUserAnswers(t *testing.T) {
	args := `{"questions":[{"question":"A?","header":"First","type":"text"},{"question":"B?","header":"","type":"yesno"}]}`
	cases := []struct {
		name     string
		answer   *confirm.Answer // nil: never answered (a rule allowed the call)
		want     string
		display  string
		wantFail bool
	}{
		{name: "both", answer: &confirm.Answer{Outcome: confirm.ProceedOnce, Answers: map[string]string{"0": "x\ny", "1": "Yes"}},
			want: `{"answers":{"0":"x\ny","1":"Yes"}}`, display: "**User answered:**\n  First → x\n          y\n  Q1 → Yes"},
		{name: "none", answer: &confirm.Answer{Outcome: confirm.ProceedOnce}, want: `{"answers":{}}`, display: "User submitted without answering questions."},
		{name: "unknown indexes dropped", answer: &confirm.Answer{Outcome: confirm.ProceedOnce, Answers: map[string]string{"2": "z", "01": "w", "-1": "v"}},
			want: `{"answers":{}}`},
		{name: "never asked", wantFail: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := askTool{}.Build(json.RawMessage(args))
			if err != nil {
				t.Fatal(err)
			}
			if tc.answer != nil {
				inv.Capabilities().Answered(*tc.answer)
			}
			res, err := inv.Execute(context.Background(), nil)
			if tc.wantFail {
				if err == nil || !strings.Contains(err.Error(), "nobody answered") {
					t.Fatalf("result %+v, error %v; want a failure saying nobody answered", res, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			json.Unmarshal([]byte(res.Output), &got)
			json.Unmarshal([]byte(tc.want), &want)
			if gj, _ := json.Marshal(got); string(gj) != mustJSON(want) {
				t.Errorf("output %s, want %s", res.Output, tc.want)
			}
			if tc.display != "" && res.Display != tc.display {
				t.Errorf("display %q, want %q", res.Display, tc.display)
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestModeSwitchOutsideSession checks that a plan mode switch of no session (a call a
// person runs directly) is refused before anyone is asked, and that think still works.
func TestModeSwitchOutsideSession(t *testing.T) {
	for _, tool := range []tools.Tool{enterPlanTool{}, exitPlanTool{}} {
		inv, err := tool.Build(json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if d, err := inv.Confirmation(context.Background()); err == nil || !strings.Contains(err.Error(), "belongs to none") {
			t.Errorf("%s: details %+v, error %v", tool.Info().Name, d, err)
		}
	}
	inv, err := thinkTool{}.Build(json.RawMessage(`{"thought":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := inv.Execute(context.Background(), nil); err != nil || res.Display != "t" {
		t.Errorf("think: %+v, %v", res, err)
	}
	if _, err := (thinkTool{}).Build(json.RawMessage(`{"thought":"  "}`)); testutil.ErrorType(err) != tools.ErrInvalidParams {
		t.Errorf("empty thought: %v", err)
	}
}

// TestOffered: the tools that only a person's answer lets run are declared only where
// a person can be asked, and each plan mode switch only in the mode it leaves, as
// Gemini CLI declares them.
func TestOffered(t *testing.T) {
	tests := []struct {
		s                     tools.Situation
		ask, enter, exit, thk bool
	}{
		{tools.Situation{Mode: confirm.ModeDefault, CanAsk: true}, true, true, false, true},
		{tools.Situation{Mode: confirm.ModeYolo, CanAsk: true}, true, true, false, true},
		{tools.Situation{Mode: confirm.ModePlan, CanAsk: true}, true, false, true, true},
		{tools.Situation{Mode: confirm.ModeDefault}, false, false, false, true},
		{tools.Situation{Mode: confirm.ModePlan}, false, false, false, true},
	}
	for _, tt := range tests {
		got := map[string]bool{}
		for _, tl := range Tools(nil) {
			s, ok := tl.(tools.Situational)
			got[tl.Info().Name] = !ok || s.Offered(tt.s)
		}
		want := map[string]bool{AskName: tt.ask, EnterPlanName: tt.enter, ExitPlanName: tt.exit, ThinkName: tt.thk}
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%+v: %s offered %v, want %v", tt.s, name, got[name], w)
			}
		}
	}
}
