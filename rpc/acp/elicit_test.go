package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/testutil"
)

// formCaps are the capabilities of a client that answers elicitation/create forms.
var formCaps = sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}}}

// askQuestions are ask_user's arguments: one question of each kind.
var askQuestions = map[string]any{"questions": []any{
	map[string]any{"question": "Which database?", "header": "DB", "type": "choice", "options": []any{
		map[string]any{"label": "Postgres", "description": "a server"}, map[string]any{"label": "SQLite", "description": "a file"}}},
	map[string]any{"question": "Add tests?", "header": "Tests", "type": "yesno"},
	map[string]any{"question": "Project name?", "header": "Name", "type": "text", "placeholder": "my-app"},
	map[string]any{"question": "Which features?", "header": "Features", "type": "choice", "multiSelect": true, "options": []any{
		map[string]any{"label": "Auth", "description": "log in"}, map[string]any{"label": "Logs", "description": "logs"},
		map[string]any{"label": "Metrics", "description": "counters"}}},
}}

// accept is a client's answer accepting a form with content.
func accept(content map[string]any) func(context.Context, sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	return func(context.Context, sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
		r := sdk.NewUnstableCreateElicitationResponseAccept()
		r.Accept.Content = content
		return r, nil
	}
}

// answer is a client's answer r to a form.
func answer(r sdk.UnstableCreateElicitationResponse) func(context.Context, sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	return func(context.Context, sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
		return r, nil
	}
}

// toolResponse returns the response the model got for the last call of the tool name.
func toolResponse(t *testing.T, fake *fakegemini.Server, name string) map[string]any {
	t.Helper()
	reqs, err := fake.GenerateRequests()
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	for _, r := range reqs {
		for _, c := range r.Contents {
			for _, p := range c.Parts {
				if fr := p.FunctionResponse; fr != nil && fr.Name == name {
					out = nil
					if err := json.Unmarshal(fr.Response, &out); err != nil {
						t.Fatalf("%s's response %s: %v", name, fr.Response, err)
					}
				}
			}
		}
	}
	if out == nil {
		t.Fatalf("the model got no response of %s", name)
	}
	return out
}

// wireParams returns the params of the requests of method the agent wrote.
func wireParams(t *testing.T, a *agent, method string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(a.wire.String()) {
		var m struct {
			Method string
			Params map[string]any
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method == method {
			out = append(out, m.Params)
		}
	}
	return out
}

// TestAskUserElicitation: to a client that declares elicitation forms, ask_user's
// questions go as one elicitation/create form, scoped to the session and the call (a
// choice question a string of oneOf choices, several choices an array, yes/no a
// boolean, "Other" a text field of its own), and the model gets the answers, or the
// refusal when the form is declined or dismissed, or an error naming what does not fit
// when the client's answer does not fit the form.
func TestAskUserElicitation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		elicit func(context.Context, sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error)
		// answers are the answers the model gets; else err is in its error.
		answers map[string]string
		err     string
	}{
		{"answered", accept(map[string]any{"0": "SQLite", "1": true, "2": "skyline", "3": []any{"Auth", "Metrics"}, "3-other": "Billing"}),
			map[string]string{"0": "SQLite", "1": "Yes", "2": "skyline", "3": "Auth, Metrics, Billing"}, ""},
		{"other words, no and unanswered", accept(map[string]any{"0-other": "DuckDB", "1": false, "2": ""}),
			map[string]string{"0": "DuckDB", "1": "No"}, ""},
		{"declined", answer(sdk.NewUnstableCreateElicitationResponseDecline()), nil, "dismissed the questions"},
		{"dismissed", answer(sdk.NewUnstableCreateElicitationResponseCancel()), nil, "dismissed the questions"},
		{"yes/no answered with text", accept(map[string]any{"1": "maybe"}), nil, `field "1": want true or false, not "maybe"`},
		{"not a choice", accept(map[string]any{"0": "Oracle"}), nil, `"Oracle" is not one of the choices (Postgres, SQLite)`},
		{"an object for text", accept(map[string]any{"2": map[string]any{"x": 1}}), nil, `field "2": want text, not an object`},
		{"a field nobody asked", accept(map[string]any{"9": "x"}), nil, `the form has no field "9"`},
		{"the client fails", func(context.Context, sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
			return sdk.UnstableCreateElicitationResponse{}, errors.New("no form today")
		}, nil, "no form today"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			root, _ := filepath.EvalSymlinks(t.TempDir())
			fake, model := fakeModel(t,
				clients.Turn{Calls: []clients.ScriptCall{call("a1", "ask_user", askQuestions)}},
				clients.Turn{Text: "ok"},
			)
			a := start(t, env(t.TempDir(), t.TempDir(), model...), nil)
			a.client.elicit = tc.elicit
			a.initializeWith(ctx, formCaps)
			sess := a.newSession(ctx, root)
			res, err := a.prompt(ctx, sess.SessionId, "ask me")
			if err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			if perms := a.client.takePermissions(); len(perms) != 0 {
				t.Errorf("permission requests %+v; the questions go as a form", perms)
			}
			r := toolResponse(t, fake, "ask_user")
			if tc.answers != nil {
				out, _ := r["output"].(string)
				var got struct{ Answers map[string]string }
				if err := json.Unmarshal([]byte(out), &got); err != nil || !reflect.DeepEqual(got.Answers, tc.answers) {
					t.Errorf("the model got %v, want the answers %v", r, tc.answers)
				}
			} else if msg, _ := r["error"].(string); !strings.Contains(msg, tc.err) {
				t.Errorf("the model got %v, want an error with %q", r, tc.err)
			}

			sent := wireParams(t, a, "elicitation/create")
			if len(sent) != 1 {
				t.Fatalf("%d elicitation/create requests, want 1", len(sent))
			}
			p := sent[0]
			if p["sessionId"] != string(sess.SessionId) || p["toolCallId"] != string(sess.SessionId)+"/a1" || p["mode"] != "form" {
				t.Errorf("scope: sessionId %v toolCallId %v mode %v; want %s, %s/a1, form", p["sessionId"], p["toolCallId"], p["mode"], sess.SessionId, sess.SessionId)
			}
			if _, ok := p["_meta"]; ok {
				t.Errorf("_meta %v left in the request", p["_meta"])
			}
			if tc.name != "answered" {
				return
			}
			schema, _ := json.Marshal(p["requestedSchema"])
			var s struct {
				Type       string
				Required   []string
				Properties map[string]struct {
					Type, Title, Description string
					OneOf                    []struct{ Const, Title string }
					Items                    struct {
						AnyOf []struct{ Const, Title string }
					}
				}
			}
			if err := json.Unmarshal(schema, &s); err != nil {
				t.Fatal(err)
			}
			props := s.Properties
			var kinds []string
			for _, name := range []string{"0", "0-other", "1", "1-other", "2", "3", "3-other"} {
				kinds = append(kinds, name+":"+props[name].Type)
			}
			if got := strings.Join(kinds, " "); s.Type != "object" || len(props) != 7 || len(s.Required) != 0 ||
				got != "0:string 0-other:string 1:boolean 1-other:string 2:string 3:array 3-other:string" {
				t.Errorf("schema %s", schema)
			}
			if q := props["0"]; q.Title != "DB" || !strings.Contains(q.Description, "Which database?") || !strings.Contains(q.Description, "SQLite: a file") ||
				len(q.OneOf) != 2 || q.OneOf[1].Const != "SQLite" || q.OneOf[1].Title != "SQLite" {
				t.Errorf("the choice question %+v", q)
			}
			if q := props["3"]; len(q.Items.AnyOf) != 3 || q.Items.AnyOf[2].Const != "Metrics" {
				t.Errorf("the multiple choice %+v", q)
			}
			if q := props["2"]; !strings.Contains(q.Description, "my-app") {
				t.Errorf("the text question %+v lost its placeholder", q)
			}
			if p["message"] != "The agent has 4 questions for you" {
				t.Errorf("message %v", p["message"])
			}
		})
	}
}

// TestAskUserElicitationCancel: session/cancel while the form is open withdraws it
// ($/cancel_request, which the client's handler sees as its context's end) and the
// prompt ends cancelled.
func TestAskUserElicitationCancel(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	_, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("a1", "ask_user", askQuestions)}},
		clients.Turn{Text: "ok"},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), nil)
	asked, withdrawn := make(chan struct{}), make(chan struct{})
	a.client.elicit = func(ctx context.Context, _ sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
		close(asked)
		<-ctx.Done()
		close(withdrawn)
		return sdk.NewUnstableCreateElicitationResponseCancel(), nil
	}
	a.initializeWith(ctx, formCaps)
	sess := a.newSession(ctx, root)
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		res, err := a.prompt(ctx, sess.SessionId, "ask me")
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		done <- res
	}()
	select {
	case <-asked:
	case res := <-done:
		t.Fatalf("the prompt ended (%s) without putting the questions", res.StopReason)
	case <-ctx.Done():
		t.Fatal("the questions were never put")
	}
	if err := a.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-withdrawn:
	case <-ctx.Done():
		t.Fatal("the form was not withdrawn")
	}
	if res := <-done; res.StopReason != sdk.StopReasonCancelled {
		t.Errorf("stopReason %q, want cancelled", res.StopReason)
	}
}

// TestMCPElicitationOverACP: server-everything's form (every field type, defaults,
// the enum forms of SEP-1330) reaches a client that declares elicitation forms as
// elicitation/create, scoped to the MCP call; the answer reaches the server with the
// defaults of the fields left out. An answer that does not fit the form reaches the
// model as an error saying why; a declined form is declined; a client without the
// capability is not asked, and the server is told the question was declined.
func TestMCPElicitationOverACP(t *testing.T) {
	entry := testutil.NPMServer(t, "server-everything")
	for _, tc := range []struct {
		name   string
		caps   sdk.ClientCapabilities
		elicit func(context.Context, sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error)
		want   []string
	}{
		{"answered", formCaps, accept(map[string]any{"name": "Ada", "integer": 7, "titledSingleSelectEnum": "hero-3"}),
			[]string{"- Name: Ada", "- Favorite Integer: 7", "- Favorite Number: 3.14", `"titledSingleSelectEnum": "hero-3"`, `"legacyTitledEnum": "pet-1"`}},
		{"malformed", formCaps, accept(map[string]any{"name": "Ada", "integer": "seven"}),
			[]string{`does not fit its form: field "integer": want a whole number, not "seven"`}},
		{"declined", formCaps, answer(sdk.NewUnstableCreateElicitationResponseDecline()), []string{"User declined"}},
		{"no capability", sdk.ClientCapabilities{}, accept(map[string]any{"name": "Ada"}), []string{"User declined"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			root, _ := filepath.EvalSymlinks(t.TempDir())
			fake, model := fakeModel(t,
				clients.Turn{Calls: []clients.ScriptCall{call("m1", "everything__trigger-elicitation-request", map[string]any{})}},
				clients.Turn{Text: "done"},
			)
			a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
			a.client.elicit = tc.elicit
			a.initializeWith(ctx, tc.caps)
			sess, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{
				{Stdio: &sdk.McpServerStdio{Name: "everything", Command: "node", Args: []string{entry}, Env: []sdk.EnvVariable{}}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.prompt(ctx, sess.SessionId, "fill the form")
			if err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			r := toolResponse(t, fake, "everything__trigger-elicitation-request")
			out, _ := r["output"].(string)
			msg, _ := r["error"].(string)
			for _, w := range tc.want {
				if !strings.Contains(out+msg, w) {
					t.Errorf("the model got %v, want %s in it", r, w)
				}
			}
			sent := wireParams(t, a, "elicitation/create")
			if tc.caps.Elicitation == nil {
				if len(sent) != 0 {
					t.Errorf("a client without elicitation forms got %v", sent)
				}
				return
			}
			if len(sent) != 1 {
				t.Fatalf("%d elicitation/create requests, want 1", len(sent))
			}
			p := sent[0]
			if p["sessionId"] != string(sess.SessionId) || p["toolCallId"] != string(sess.SessionId)+"/m1" {
				t.Errorf("scope: sessionId %v toolCallId %v", p["sessionId"], p["toolCallId"])
			}
			if msg, _ := p["message"].(string); !strings.HasPrefix(msg, "MCP server everything asks: Please provide") {
				t.Errorf("message %q", msg)
			}
			schema, _ := json.Marshal(p["requestedSchema"])
			for _, w := range []string{`"required":["name"]`, `"default":42`, `{"const":"hero-2","title":"Green Lantern"}`,
				`"legacyTitledEnum":{"default":"pet-1","description":"Choose your favorite type of pet","oneOf":[{"const":"pet-1","title":"Cats"}`,
				`"untitledMultipleSelectEnum":{"default":["Guitar"],"description":"Choose your favorite instruments","items":{"anyOf":[{"const":"Guitar","title":"Guitar"}`,
				`"check":{"description":"Agree to the terms and conditions","title":"Boolean","type":"boolean"}`} {
				if !strings.Contains(string(schema), w) {
					t.Errorf("schema %s\nwant %s in it", schema, w)
				}
			}
		})
	}
}

// TestMCPElicitationCancel: session/cancel while an MCP server's form is open withdraws
// it, and the prompt ends cancelled.
func TestMCPElicitationCancel(t *testing.T) {
	entry := testutil.NPMServer(t, "server-everything")
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	_, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("m1", "everything__trigger-elicitation-request", map[string]any{})}},
		clients.Turn{Text: "done"},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
	asked, withdrawn := make(chan struct{}), make(chan struct{})
	a.client.elicit = func(ctx context.Context, _ sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
		close(asked)
		<-ctx.Done()
		close(withdrawn)
		return sdk.NewUnstableCreateElicitationResponseCancel(), nil
	}
	a.initializeWith(ctx, formCaps)
	sess, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "everything", Command: "node", Args: []string{entry}, Env: []sdk.EnvVariable{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		res, err := a.prompt(ctx, sess.SessionId, "fill the form")
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		done <- res
	}()
	select {
	case <-asked:
	case res := <-done:
		t.Fatalf("the prompt ended (%s) without putting the form", res.StopReason)
	case <-ctx.Done():
		t.Fatal("the form was never put")
	}
	if err := a.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-withdrawn:
	case <-ctx.Done():
		t.Fatal("the form was not withdrawn")
	}
	if res := <-done; res.StopReason != sdk.StopReasonCancelled {
		t.Errorf("stopReason %q, want cancelled", res.StopReason)
	}
}

// TestMCPURLElicitationOverACP: server-everything's URL question (trigger-url-elicitation,
// which it offers only to a client that declares URL mode) reaches a client that takes
// URL questions as elicitation/create in URL mode, scoped to the MCP call, with the
// server's elicitationId and URL, and the answer reaches the server; a URL that is not
// http(s) is declined without asking; a client without URL mode is not offered the tool.
func TestMCPURLElicitationOverACP(t *testing.T) {
	entry := testutil.NPMServer(t, "server-everything")
	urlCaps := sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}, Url: &sdk.ElicitationUrlCapabilities{}}}
	for _, tc := range []struct {
		name   string
		caps   sdk.ClientCapabilities
		url    string
		asked  bool
		output string
	}{
		{"accepted", urlCaps, "https://example.com/consent?x=1", true, "accept"},
		{"not http", urlCaps, "file:///etc/passwd", false, "decline"},
		{"forms only", formCaps, "https://example.com/consent", false, "not registered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			root, _ := filepath.EvalSymlinks(t.TempDir())
			fake, model := fakeModel(t,
				clients.Turn{Calls: []clients.ScriptCall{call("u1", "everything__trigger-url-elicitation",
					map[string]any{"url": tc.url, "message": "Sign in to continue.", "elicitationId": "el-7"})}},
				clients.Turn{Text: "done"},
			)
			a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
			a.client.elicit = accept(nil)
			a.initializeWith(ctx, tc.caps)
			sess, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{
				{Stdio: &sdk.McpServerStdio{Name: "everything", Command: "node", Args: []string{entry}, Env: []sdk.EnvVariable{}}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := a.prompt(ctx, sess.SessionId, "sign in"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			r := toolResponse(t, fake, "everything__trigger-url-elicitation")
			got, _ := json.Marshal(r)
			if !strings.Contains(strings.ToLower(string(got)), tc.output) {
				t.Errorf("the model got %s, want %q in it", got, tc.output)
			}
			sent := wireParams(t, a, "elicitation/create")
			if !tc.asked {
				if len(sent) != 0 {
					t.Errorf("the client was asked: %v", sent)
				}
				return
			}
			if len(sent) != 1 {
				t.Fatalf("%d elicitation/create requests, want 1", len(sent))
			}
			p := sent[0]
			if p["mode"] != "url" || p["url"] != tc.url || p["elicitationId"] != "el-7" ||
				p["sessionId"] != string(sess.SessionId) || p["toolCallId"] != string(sess.SessionId)+"/u1" {
				t.Errorf("elicitation/create params %v", p)
			}
			if msg, _ := p["message"].(string); !strings.Contains(msg, "MCP server everything asks you to open a link: Sign in to continue.") {
				t.Errorf("message %q", msg)
			}
		})
	}
}

// TestMCPURLRequiredOverACP: server-everything's trigger-url-elicitation with errorPath
// refuses the call with URLElicitationRequired (-32042) naming a prerequisite link; the
// ACP client is sent to it (URL mode), asked whether it is done (a form, since the server
// never says so), and the call then runs again and reaches the server's own question.
// A client that declines the link is not asked again and the call is not retried.
func TestMCPURLRequiredOverACP(t *testing.T) {
	entry := testutil.NPMServer(t, "server-everything")
	urlCaps := sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}, Url: &sdk.ElicitationUrlCapabilities{}}}
	for _, tc := range []struct {
		name   string
		elicit func(context.Context, sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error)
		modes  []string // of the elicitation/create requests, in order
		output string
	}{
		{"accepted", accept(nil), []string{"url", "form", "url"}, "user completed the url elicitation flow"},
		{"declined", answer(sdk.NewUnstableCreateElicitationResponseDecline()), []string{"url"}, "they chose not to (decline)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			root, _ := filepath.EvalSymlinks(t.TempDir())
			link := "https://example.com/consent?x=1"
			fake, model := fakeModel(t,
				clients.Turn{Calls: []clients.ScriptCall{call("u1", "everything__trigger-url-elicitation",
					map[string]any{"url": link, "message": "Sign in to continue.", "elicitationId": "el-7", "errorPath": true})}},
				clients.Turn{Text: "done"},
			)
			a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
			a.client.elicit = tc.elicit
			a.initializeWith(ctx, urlCaps)
			sess, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{
				{Stdio: &sdk.McpServerStdio{Name: "everything", Command: "node", Args: []string{entry}, Env: []sdk.EnvVariable{}}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := a.prompt(ctx, sess.SessionId, "sign in"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			r := toolResponse(t, fake, "everything__trigger-url-elicitation")
			got, _ := json.Marshal(r)
			if !strings.Contains(strings.ToLower(string(got)), tc.output) {
				t.Errorf("the model got %s, want %q in it", got, tc.output)
			}
			sent := wireParams(t, a, "elicitation/create")
			var modes []string
			for _, p := range sent {
				m, _ := p["mode"].(string)
				modes = append(modes, m)
			}
			if !slices.Equal(modes, tc.modes) {
				t.Fatalf("elicitation/create modes %v, want %v", modes, tc.modes)
			}
			if p := sent[0]; p["url"] != "https://modelcontextprotocol.io" || p["toolCallId"] != string(sess.SessionId)+"/u1" {
				t.Errorf("the prerequisite link's params %v", p)
			}
			if len(sent) == 3 && sent[2]["url"] != link {
				t.Errorf("the retried call's link %v, want %s", sent[2]["url"], link)
			}
		})
	}
}
