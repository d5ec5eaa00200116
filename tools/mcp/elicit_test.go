package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/confirm"
)

// askSchema has a default of each type (SEP-1034) and the enum forms of SEP-1330.
const askSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name","default":"Ada"},
	"age":{"type":"integer","default":36},
	"score":{"type":"number","default":9.5},
	"ok":{"type":"boolean","default":true},
	"color":{"type":"string","enum":["red","green"],"enumNames":["Red","Green"],"default":"green"},
	"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
	"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}
},"required":["name"]}`

// newAskServer serves a tool "ask" that puts askSchema to the client and returns the
// answer as JSON.
func newAskServer(t *testing.T) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: objectSchema},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Who are you?", RequestedSchema: json.RawMessage(askSchema)})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res)
			return text("%s", b), nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// scriptedElicitor answers with answer (or err) and records the questions.
type scriptedElicitor struct {
	answer *Answer
	err    error
	mu     sync.Mutex
	asked  []*Question
}

func (e *scriptedElicitor) Elicit(_ context.Context, q *Question) (*Answer, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, q)
	return e.answer, e.err
}

func TestElicitation(t *testing.T) {
	t.Parallel()
	url := newAskServer(t)
	defaults := map[string]any{"name": "Ada", "age": 36.0, "score": 9.5, "ok": true, "color": "green"}
	for _, tc := range []struct {
		name    string
		asker   Elicitor
		want    string
		content map[string]any
	}{
		{"nobody to ask", nil, "decline", nil},
		{"defaults applied", &scriptedElicitor{answer: &Answer{Action: ActionAccept}}, "accept", defaults},
		{"answers win over defaults", &scriptedElicitor{answer: &Answer{Action: ActionAccept, Values: map[string]any{"name": "Bob", "size": "l"}}},
			"accept", map[string]any{"name": "Bob", "age": 36.0, "score": 9.5, "ok": true, "color": "green", "size": "l"}},
		{"declined", &scriptedElicitor{answer: &Answer{Action: ActionDecline}}, "decline", nil},
		{"cancelled", &scriptedElicitor{answer: &Answer{Action: ActionCancel}}, "cancel", nil},
		{"could not ask", &scriptedElicitor{err: errors.New("no terminal")}, "decline", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := startManager(t, Options{Servers: map[string]ServerConfig{"s": {URL: url, Trust: true}}, Elicit: tc.asker})
			r := mustCall(t, m, "s__ask", `{}`)
			var got struct {
				Action  string
				Content map[string]any
			}
			if err := json.Unmarshal([]byte(r.Output), &got); err != nil {
				t.Fatalf("%v: %q", err, r.Output)
			}
			if got.Action != tc.want || !reflect.DeepEqual(got.Content, tc.content) {
				t.Errorf("result = %+v, want %s %v", got, tc.want, tc.content)
			}
		})
	}
}

func TestQuestionOf(t *testing.T) {
	t.Parallel()
	q, err := questionOf("s", &sdk.ElicitParams{Message: "m", RequestedSchema: json.RawMessage(askSchema)})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Field{}
	var names []string
	for _, f := range q.Fields {
		byName[f.Name] = f
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "age,color,name,ok,score,size,tags" {
		t.Errorf("fields %s", got)
	}
	for _, tc := range []struct {
		name string
		want Field
	}{
		{"name", Field{Name: "name", Title: "Name", Type: "string", Required: true, Default: "Ada"}},
		{"color", Field{Name: "color", Type: "string", Choices: []string{"red", "green"}, Labels: []string{"Red", "Green"}, Default: "green"}},
		{"size", Field{Name: "size", Type: "string", Choices: []string{"s", "l"}, Labels: []string{"Small", "Large"}}},
		{"tags", Field{Name: "tags", Type: "array", Choices: []string{"a", "b"}}},
		{"ok", Field{Name: "ok", Type: "boolean", Default: true}},
	} {
		if got := byName[tc.name]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if q, err := questionOf("s", &sdk.ElicitParams{Message: "just confirm"}); err != nil || len(q.Fields) != 0 {
		t.Errorf("no schema: %+v %v", q, err)
	}
}

// TestElicitationEverything: server-everything's trigger-elicitation-request form (every
// field type, the enum forms of SEP-1330, defaults) reaches the Elicitor as a Question,
// and the answer, with the defaults applied, reaches the server.
func TestElicitationEverything(t *testing.T) {
	t.Parallel()
	e := &scriptedElicitor{answer: &Answer{Action: ActionAccept, Values: map[string]any{"name": "Ada Lovelace", "check": true}}}
	m := startManager(t, Options{Servers: map[string]ServerConfig{"everything": everythingStdio(t)}, Elicit: e})
	requireState(t, m, "everything", StateConnected)
	r := mustCall(t, m, "everything__trigger-elicitation-request", `{}`)
	for _, want := range []string{"User provided the requested information", "- Name: Ada Lovelace", "- Agreed to terms: true",
		"- Favorite Integer: 42", "- Favorite Number: 3.14", `"untitledSingleSelectEnum": "Monica"`, `"legacyTitledEnum": "pet-1"`} {
		if !strings.Contains(r.Output, want) {
			t.Errorf("result lacks %q:\n%s", want, r.Output)
		}
	}
	if len(e.asked) != 1 {
		t.Fatalf("asked %d questions", len(e.asked))
	}
	fields := map[string]Field{}
	for _, f := range e.asked[0].Fields {
		fields[f.Name] = f
	}
	if f := fields["titledSingleSelectEnum"]; !reflect.DeepEqual(f.Choices, []string{"hero-1", "hero-2", "hero-3"}) ||
		!reflect.DeepEqual(f.Labels, []string{"Superman", "Green Lantern", "Wonder Woman"}) || f.Default != "hero-1" {
		t.Errorf("titled enum %+v", f)
	}
	if f := fields["titledMultipleSelectEnum"]; f.Type != "array" || len(f.Choices) != 3 || f.Labels[1] != "Salmon" {
		t.Errorf("titled multiple select %+v", f)
	}
	if f := fields["legacyTitledEnum"]; len(f.Labels) != 5 || f.Labels[0] != "Cats" {
		t.Errorf("legacy enumNames %+v", f)
	}
	if f := fields["name"]; !f.Required || f.Title != "String" {
		t.Errorf("name %+v", f)
	}

	// With nobody to ask, the question is declined.
	m2 := startManager(t, Options{Servers: map[string]ServerConfig{"everything": everythingStdio(t)}})
	if r := mustCall(t, m2, "everything__trigger-elicitation-request", `{}`); !strings.Contains(r.Output, "User declined") {
		t.Errorf("nobody to ask: %s", r.Output)
	}
}

// askAnswerer answers ask_user confirmations with answers, recording the request.
type askAnswerer struct {
	answers map[string]string
	outcome confirm.Outcome
	got     confirm.Request
}

func (a *askAnswerer) Ask(_ context.Context, req confirm.Request) (confirm.Answer, error) {
	a.got = req
	return confirm.Answer{Outcome: a.outcome, Answers: a.answers}, nil
}

// TestAskElicitor: a form put as ask_user questions (fields in name order: age, color,
// name, ok, score, size, tags), the labels chosen mapped back to their values, empty
// answers taking the defaults.
func TestAskElicitor(t *testing.T) {
	t.Parallel()
	url := newAskServer(t)
	a := &askAnswerer{outcome: confirm.ProceedOnce, answers: map[string]string{
		"0": "7", "1": "Red", "2": "Bob", "3": "No", "5": "Large", "6": "a, b"}}
	m := startManager(t, Options{Servers: map[string]ServerConfig{"s": {URL: url, Trust: true}}, Elicit: AskElicitor(a)})
	r := mustCall(t, m, "s__ask", `{}`)
	var got struct {
		Action  string
		Content map[string]any
	}
	if err := json.Unmarshal([]byte(r.Output), &got); err != nil {
		t.Fatalf("%v: %q", err, r.Output)
	}
	want := map[string]any{"age": 7.0, "color": "red", "name": "Bob", "ok": false, "score": 9.5, "size": "l", "tags": []any{"a", "b"}}
	if got.Action != "accept" || !reflect.DeepEqual(got.Content, want) {
		t.Errorf("result %+v, want %v", got, want)
	}
	d := a.got.Details
	if d.Type != confirm.TypeAsk || len(d.Questions) != 7 || d.Questions[1].Type != confirm.QuestionChoice ||
		d.Questions[1].Options[1].Label != "Green" || d.Questions[3].Type != confirm.QuestionYesNo ||
		!d.Questions[6].MultiSelect || d.Questions[0].Placeholder != "default: 36" {
		t.Errorf("questions %+v", d)
	}

	// A choice that is not offered is no answer: the question is declined.
	a.answers = map[string]string{"1": "Purple"}
	if r := mustCall(t, m, "s__ask", `{}`); !strings.Contains(r.Output, `"action":"decline"`) {
		t.Errorf("bad choice: %s", r.Output)
	}
	// Dismissed: cancelled.
	a.outcome = confirm.Cancel
	if r := mustCall(t, m, "s__ask", `{}`); !strings.Contains(r.Output, `"action":"cancel"`) {
		t.Errorf("dismissed: %s", r.Output)
	}
}
