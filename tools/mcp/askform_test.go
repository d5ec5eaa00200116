package mcp

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
)

// formQuestions are ask_user's questions of every kind.
var formQuestions = []confirm.Question{
	{Question: "Which database?", Header: "DB", Type: confirm.QuestionChoice, Options: []confirm.Option{{Label: "Postgres", Description: "a server"}, {Label: "SQLite"}}},
	{Question: "Add tests?", Header: "Tests", Type: confirm.QuestionYesNo, Placeholder: "why"},
	{Question: "Project name?", Type: confirm.QuestionText, Placeholder: "my-app"},
	{Question: "Which features?", Header: "Features", Type: confirm.QuestionChoice, MultiSelect: true, Options: []confirm.Option{{Label: "Auth"}, {Label: "Logs"}}},
}

func TestNewAskForm(t *testing.T) {
	t.Parallel()
	f := NewAskForm("m", formQuestions)
	want := []Field{
		{Name: "0", Title: "DB", Description: "Which database?\n- Postgres: a server", Type: "string", Choices: []string{"Postgres", "SQLite"}},
		{Name: "0-other", Title: "DB: other", Description: "Your own answer, instead of or besides the choices above", Type: "string"},
		{Name: "1", Title: "Tests", Description: "Add tests?", Type: "boolean"},
		{Name: "1-other", Title: "Tests: other", Description: "Your own answer, instead of or besides the choices above (why)", Type: "string"},
		{Name: "2", Title: "Question 3", Description: "Project name?\n(my-app)", Type: "string"},
		{Name: "3", Title: "Features", Description: "Which features?", Type: "array", Choices: []string{"Auth", "Logs"}},
		{Name: "3-other", Title: "Features: other", Description: "Your own answer, instead of or besides the choices above", Type: "string"},
	}
	if f.Message != "m" || !reflect.DeepEqual(f.Fields, want) {
		t.Errorf("form %q:\n%+v\nwant\n%+v", f.Message, f.Fields, want)
	}
}

func TestAskFormAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   map[string]string
		err    string
	}{
		{"every kind", map[string]any{"0": "SQLite", "1": true, "2": "sky", "3": []any{"Logs", "Auth"}},
			map[string]string{"0": "SQLite", "1": "Yes", "2": "sky", "3": "Logs, Auth"}, ""},
		{"other words", map[string]any{"0-other": "DuckDB", "1": false, "1-other": "later", "3": []any{"Auth"}, "3-other": "Billing"},
			map[string]string{"0": "DuckDB", "1": "No, later", "3": "Auth, Billing"}, ""},
		{"blank is unanswered", map[string]any{"0-other": "  ", "2": "", "3": []any{}}, map[string]string{}, ""},
		{"nothing", nil, map[string]string{}, ""},
		{"text for yes/no", map[string]any{"1": "Yes"}, nil, `field "1": want true or false, not "Yes"`},
		{"not a choice", map[string]any{"0": "Oracle"}, nil, `field "0": "Oracle" is not one of the choices (Postgres, SQLite)`},
		{"one of several not a choice", map[string]any{"3": []any{"Auth", "Ads"}}, nil, `field "3": "Ads" is not one of the choices`},
		{"a number for text", map[string]any{"2": 3.0}, nil, `field "2": want text, not 3`},
		{"a string for several", map[string]any{"3": "Auth"}, nil, `field "3": want a list of choices, not "Auth"`},
		{"an unknown field", map[string]any{"2-other": "x"}, nil, `the form has no field "2-other"`},
		{"null", map[string]any{"2": nil}, nil, `want text, not null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewAskForm("m", formQuestions).Answers(tc.values)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("Answers = %v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Answers = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestQuestionCheck(t *testing.T) {
	t.Parallel()
	q := &Question{Fields: []Field{
		{Name: "age", Type: "integer", Required: true},
		{Name: "score", Type: "number", Default: 1.5, Required: true},
		{Name: "size", Type: "string", Choices: []string{"s", "l"}},
		{Name: "tags", Type: "array", Choices: []string{"a", "b"}},
		{Name: "ok", Type: "boolean"},
	}}
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   map[string]any
		err    string
	}{
		{"JSON numbers", map[string]any{"age": 36.0, "score": 2.0, "tags": []any{"b"}}, map[string]any{"age": int64(36), "score": 2.0, "tags": []string{"b"}}, ""},
		{"Go values", map[string]any{"age": int64(36), "score": int64(2), "tags": []string{"a"}, "ok": true, "size": "l"},
			map[string]any{"age": int64(36), "score": 2.0, "tags": []string{"a"}, "ok": true, "size": "l"}, ""},
		{"a required field with a default may be left out", map[string]any{"age": 1.0}, map[string]any{"age": int64(1)}, ""},
		{"a required field without", map[string]any{"score": 1.0}, nil, `field "age" is required and has no value`},
		{"a fraction for an integer", map[string]any{"age": 1.5}, nil, `field "age": want a whole number, not 1.5`},
		{"text for a number", map[string]any{"age": 1.0, "score": "high"}, nil, `field "score": want a number, not "high"`},
		{"not a choice", map[string]any{"age": 1.0, "size": "m"}, nil, `"m" is not one of the choices (s, l)`},
		{"text for a boolean", map[string]any{"age": 1.0, "ok": "yes"}, nil, `field "ok": want true or false, not "yes"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := q.Check(tc.values)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("Check = %v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Check = %#v, %v; want %#v", got, err, tc.want)
			}
		})
	}
}

// TestElicitationAnswerDoesNotFit: an answer whose values do not fit the form is an
// error to the server, which its tool reports, saying what does not fit.
func TestElicitationAnswerDoesNotFit(t *testing.T) {
	t.Parallel()
	url := newAskServer(t)
	e := &scriptedElicitor{answer: &Answer{Action: ActionAccept, Values: map[string]any{"age": "old"}}}
	m := startManager(t, Options{Servers: map[string]ServerConfig{"s": {URL: url, Trust: true}}, Elicit: e})
	r, err := call(t.Context(), t, m, "s__ask", `{}`)
	got := fmt.Sprint(err)
	if r != nil {
		got += " " + r.Output
	}
	if want := `does not fit its form: field "age": want a whole number, not "old"`; !strings.Contains(got, want) {
		t.Errorf("the call gave %q, want %q in it", got, want)
	}
}
