package rpc_test

import (
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/tools"
)

// answer returns a handler that answers every request with result.
func answer(result any) lsptest.Handler {
	return func(context.Context, json.RawMessage) (any, error) { return result, nil }
}

// TestRichConfirmation: agentls/confirm carries the ConfirmDetails of an edit, and each
// outcome has its effect.
func TestRichConfirmation(t *testing.T) {
	t.Parallel()
	modified := "modified by the user\n"
	tests := []struct {
		name       string
		result     any
		wantStatus tools.Status
		wantText   string // the editor's text afterwards
		wantMsg    string
	}{
		{name: "proceed_once", result: map[string]any{"outcome": "proceed_once"}, wantStatus: tools.StatusSuccess, wantText: "new text\n"},
		{name: "proceed_always", result: map[string]any{"outcome": "proceed_always"}, wantStatus: tools.StatusSuccess, wantText: "new text\n"},
		{name: "modify_with_editor", result: map[string]any{"outcome": "modify_with_editor", "content": modified}, wantStatus: tools.StatusSuccess, wantText: modified},
		{name: "cancel", result: map[string]any{"outcome": "cancel"}, wantStatus: tools.StatusCancelled, wantText: "old text\n", wantMsg: "declined"},
		{name: "modify without content", result: map[string]any{"outcome": "modify_with_editor"}, wantStatus: tools.StatusCancelled, wantText: "old text\n", wantMsg: "content"},
		{name: "unknown outcome", result: map[string]any{"outcome": "yes please"}, wantStatus: tools.StatusCancelled, wantText: "old text\n", wantMsg: "yes please"},
		{name: "null", result: nil, wantStatus: tools.StatusCancelled, wantText: "old text\n", wantMsg: "null"},
		{name: "error", result: &lsptest.ResponseError{Code: -32603, Message: "dialog crashed"}, wantStatus: tools.StatusCancelled, wantText: "old text\n", wantMsg: "dialog crashed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, map[string]string{"f.txt": "old text\n"})
			c := session(t, root, capsRich, nil)
			path := filepath.Join(root, "f.txt")
			uri := lsptest.FileURI(path)
			if err := c.Editor().Open(uri, "old text\n"); err != nil {
				t.Fatal(err)
			}
			c.Handle("agentls/confirm", func(context.Context, json.RawMessage) (any, error) {
				if e, ok := tt.result.(*lsptest.ResponseError); ok {
					return nil, e
				}
				return tt.result, nil
			})
			res := runTool(ctx, t, c, "write_file", map[string]any{"file_path": "f.txt", "content": "new text\n"})
			if res.Status != tt.wantStatus || !strings.Contains(res.Output, tt.wantMsg) {
				t.Errorf("result %s %q, want %s mentioning %q", res.Status, res.Output, tt.wantStatus, tt.wantMsg)
			}
			if doc, _ := c.Editor().Doc(uri); doc.Text != tt.wantText {
				t.Errorf("editor text %q, want %q", doc.Text, tt.wantText)
			}
			if disk := readFile(t, path); disk != "old text\n" {
				t.Errorf("the disk was written: %q", disk)
			}
			asked := c.Received("agentls/confirm")
			if len(asked) != 1 {
				t.Fatalf("%d agentls/confirm requests, want 1", len(asked))
			}
			var d map[string]any
			if err := json.Unmarshal(asked[0].Params, &d); err != nil {
				t.Fatal(err)
			}
			if d["type"] != "edit" || d["uri"] != uri || d["originalContent"] != "old text\n" || d["newContent"] != "new text\n" ||
				d["toolCallId"] == "" || d["id"] == "" || !strings.Contains(d["title"].(string), "f.txt") ||
				!strings.Contains(d["diff"].(string), "+new text") {
				t.Errorf("ConfirmDetails = %s", asked[0].Params)
			}
			if c.Received("window/showMessageRequest") != nil {
				t.Errorf("a rich client was asked with showMessageRequest too")
			}
		})
	}
}

// TestRichConfirmationKinds checks the ConfirmDetails of a new file and of a shell
// command, and that "always" is remembered.
func TestRichConfirmationKinds(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsRich, nil)
	c.Handle("agentls/confirm", answer(map[string]any{"outcome": "proceed_always"}))
	if res := runTool(ctx, t, c, "write_file", map[string]any{"file_path": "new.txt", "content": "x\n"}); res.Status != tools.StatusSuccess {
		t.Fatalf("write_file: %+v", res)
	}
	var d map[string]any
	json.Unmarshal(c.Received("agentls/confirm")[0].Params, &d)
	if v, ok := d["originalContent"]; !ok || v != nil {
		t.Errorf("a new file's originalContent = %v (present %v), want null", v, ok)
	}
	for range 2 {
		res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo hi"})
		if res.Status != tools.StatusSuccess || !strings.Contains(res.Output, "hi") {
			t.Fatalf("run_shell_command: %+v", res)
		}
	}
	asked := c.Received("agentls/confirm")
	if len(asked) != 2 {
		t.Fatalf("%d confirmations, want 2: proceed_always must be remembered for echo", len(asked))
	}
	json.Unmarshal(asked[1].Params, &d)
	roots, _ := d["rootCommands"].([]any)
	if d["type"] != "execute" || d["command"] != "echo hi" || len(roots) != 1 || roots[0] != "echo" || d["directory"] != root {
		t.Errorf("execute ConfirmDetails = %s", asked[1].Params)
	}
}

// TestMessageRequestConfirmation: a client that knows nothing of agentls but shows
// message requests is asked with one; only an offered approving title approves.
func TestMessageRequestConfirmation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler lsptest.Handler // nil: MethodNotFound
		want    tools.Status
		wantMsg string
	}{
		{name: "allow once", handler: answer(map[string]any{"title": "Allow once"}), want: tools.StatusSuccess},
		{name: "allow always", handler: answer(map[string]any{"title": "Always allow touch for this session"}), want: tools.StatusSuccess},
		{name: "reject always", handler: answer(map[string]any{"title": "Always reject touch for this session"}), want: tools.StatusCancelled, wantMsg: "for the rest of the session"},
		{name: "reject", handler: answer(map[string]any{"title": "Reject"}), want: tools.StatusCancelled, wantMsg: "declined"},
		{name: "a title not offered", handler: answer(map[string]any{"title": "Sure"}), want: tools.StatusCancelled, wantMsg: `"Sure"`},
		{name: "dismissed", handler: answer(nil), want: tools.StatusCancelled, wantMsg: "dismissed"},
		{name: "error", handler: func(context.Context, json.RawMessage) (any, error) {
			return nil, &lsptest.ResponseError{Code: -32603, Message: "no UI"}
		}, want: tools.StatusCancelled, wantMsg: "no UI"},
		{name: "method not found", want: tools.StatusCancelled, wantMsg: "unhandled method"},
		{name: "no answer in time", handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, want: tools.StatusCancelled, wantMsg: "no answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, nil)
			c := session(t, root, capsEditor, nil, "--confirm-timeout", "300ms")
			c.Handle("window/showMessageRequest", tt.handler)
			marker := filepath.Join(root, "ran")
			res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "touch ran"})
			if res.Status != tt.want || !strings.Contains(res.Output, tt.wantMsg) {
				t.Errorf("result %s %q, want %s mentioning %q", res.Status, res.Output, tt.want, tt.wantMsg)
			}
			if ran := fileExists(marker); ran != (tt.want == tools.StatusSuccess) {
				t.Errorf("the command ran: %v", ran)
			}
			asked := c.Received("window/showMessageRequest")
			if len(asked) != 1 {
				t.Fatalf("%d showMessageRequest requests, want 1", len(asked))
			}
			var p struct {
				Message string
				Actions []struct{ Title string }
			}
			json.Unmarshal(asked[0].Params, &p)
			if !strings.Contains(p.Message, "touch ran") || len(p.Actions) != 5 || p.Actions[0].Title != "Allow once" ||
				p.Actions[2].Title != "Always allow touch, and save it in your settings" || p.Actions[4].Title != "Always reject touch for this session" {
				t.Errorf("showMessageRequest = %s", asked[0].Params)
			}
			if tt.name == "no answer in time" {
				// The editor is told to take the question down.
				if _, err := c.WaitFor(ctx, "$/cancelRequest", nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestConfirmationWithoutUI: a client with neither agentls/confirm, showMessageRequest
// nor diagnostics is never sent any of them, and the call is refused saying the editor
// cannot ask.
func TestConfirmationWithoutUI(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsNone, nil)
	res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "touch ran"})
	if res.Status != tools.StatusCancelled || !strings.Contains(res.Output, "cannot ask") {
		t.Errorf("result %s %q, want cancelled saying the editor cannot ask", res.Status, res.Output)
	}
	if fileExists(filepath.Join(root, "ran")) {
		t.Errorf("the command ran")
	}
	for _, m := range []string{"agentls/confirm", "window/showMessageRequest", "workspace/applyEdit"} {
		if got := c.Received(m); got != nil {
			t.Errorf("a client that advertised nothing was sent %s", m)
		}
	}
}

// TestConfirmByCommand: agentls.confirm answers a pending confirmation by its id, and
// the question the editor still shows is withdrawn.
func TestConfirmByCommand(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsRich, nil)
	c.Handle("agentls/confirm", func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-ctx.Done() // the user never answers in the dialog
		return nil, ctx.Err()
	})
	p := c.Go("workspace/executeCommand", map[string]any{"command": "agentls.runTool",
		"arguments": []any{map[string]any{"name": "run_shell_command", "args": map[string]any{"command": "echo confirmed"}}}})
	m, err := c.WaitFor(ctx, "agentls/confirm", nil)
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ ID string }
	json.Unmarshal(m.Params, &d)

	for _, bad := range []map[string]any{
		{"id": "no-such-confirmation", "outcome": "proceed_once"},
		{"id": d.ID, "outcome": "maybe"},
		{"id": d.ID, "outcome": "modify_with_editor"},
		{"outcome": "proceed_once"},
	} {
		if err := command(ctx, c, "agentls.confirm", bad, nil); codeOf(err) != lsptest.CodeInvalidParams {
			t.Errorf("agentls.confirm %v: %v, want InvalidParams", bad, err)
		}
	}
	if err := command(ctx, c, "agentls.confirm", map[string]any{"id": d.ID, "outcome": "proceed_once"}, nil); err != nil {
		t.Fatal(err)
	}
	var res tools.CallResult
	if err := p.Wait(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != tools.StatusSuccess || !strings.Contains(res.Output, "confirmed") {
		t.Errorf("result %+v", res)
	}
	cancel, err := c.WaitFor(ctx, "$/cancelRequest", nil)
	if err != nil {
		t.Fatal(err)
	}
	var cp struct{ ID json.RawMessage }
	json.Unmarshal(cancel.Params, &cp)
	if string(cp.ID) != string(m.ID) {
		t.Errorf("$/cancelRequest for %s, want the agentls/confirm request %s", cp.ID, m.ID)
	}
	// Answered once, it is no longer pending.
	if err := command(ctx, c, "agentls.confirm", map[string]any{"id": d.ID, "outcome": "proceed_once"}, nil); codeOf(err) != lsptest.CodeInvalidParams {
		t.Errorf("answering twice: %v, want InvalidParams", err)
	}
}

// helix is a client like Helix: it applies edits and shows diagnostics with their code
// actions, but has no way to put a question.
var helix = withDiagnostics(withCaps(capsEditor, "window", map[string]any{}))

// questions returns the pending-confirmation diagnostics among diags.
func questions(diags []lsptest.Diagnostic) []lsptest.Diagnostic {
	return ofSource(diags, "agentls", lsptest.SeverityWarning)
}

// codeActions asks for the code actions at r in uri, about diags.
func codeActions(ctx context.Context, t *testing.T, c *lsptest.Client, uri string, r lsptest.Range, diags []lsptest.Diagnostic) []codeActionResult {
	t.Helper()
	var actions []codeActionResult
	if diags == nil {
		diags = []lsptest.Diagnostic{}
	}
	if err := c.Call(ctx, "textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": r, "context": map[string]any{"diagnostics": diags}}, &actions); err != nil {
		t.Fatal(err)
	}
	return actions
}

// confirmArg is the argument of agentls.confirm.
type confirmArg struct {
	ID      string `json:"id"`
	Choice  string `json:"choice,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Persist string `json:"persist,omitempty"`
}

type codeActionResult struct {
	Title       string
	Kind        string
	Diagnostics []lsptest.Diagnostic
	Command     struct {
		Title     string
		Command   string
		Arguments []confirmArg
	}
}

// TestConfirmationAsDiagnostic: a client with no way to ask (Helix) sees the pending
// confirmation as a Warning at the call's location; the code actions there answer it
// with agentls.confirm, the call waits until then (or the timeout), and the diagnostic
// goes once it is answered.
func TestConfirmationAsDiagnostic(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		choose string // the title of the code action run; "" for none
		want   tools.Status
		text   string
	}{
		{choose: "Allow once", want: tools.StatusSuccess, text: "one\nTWO\n"},
		{choose: "Allow every edit for this session", want: tools.StatusSuccess, text: "one\nTWO\n"},
		{choose: "Always allow replace, and save it in your settings", want: tools.StatusSuccess, text: "one\nTWO\n"},
		{choose: "Always reject replace for this session", want: tools.StatusCancelled, text: "one\ntwo\n"},
		{choose: "Reject", want: tools.StatusCancelled, text: "one\ntwo\n"},
		{choose: "", want: tools.StatusCancelled, text: "one\ntwo\n"},
	} {
		t.Run(cmp.Or(tt.choose, "no answer"), func(t *testing.T) {
			ctx := testContext(t)
			root := workspaceDir(t, map[string]string{"doc.txt": "one\ntwo\n", "other.txt": "x\n"})
			c := session(t, root, helix, nil, "--confirm-timeout", "500ms")
			uri := lsptest.FileURI(filepath.Join(root, "doc.txt"))
			other := lsptest.FileURI(filepath.Join(root, "other.txt"))
			for _, u := range []string{uri, other} {
				if err := c.Editor().Open(u, map[string]string{uri: "one\ntwo\n", other: "x\n"}[u]); err != nil {
					t.Fatal(err)
				}
			}
			p := runToolAs(c, "ask-1", "replace", replaceArgs("doc.txt", "two", "TWO"))
			diags, seen, err := c.WaitDiagnostics(ctx, uri, 0, func(d []lsptest.Diagnostic) bool { return len(questions(d)) == 1 })
			if err != nil {
				t.Fatal(err)
			}
			q := questions(diags)[0]
			if !contains(q.Message, "replace", "doc.txt", "Allow once", "Reject", "code action") {
				t.Errorf("question %q does not say what is asked and how to answer", q.Message)
			}
			if len(ofSource(diags, "agentls", lsptest.SeverityInformation)) != 0 {
				t.Errorf("the call's location diagnostic is shown beside its question: %+v", diags)
			}
			// Nothing on another document, nor for a range elsewhere.
			if a := codeActions(ctx, t, c, other, q.Range, nil); len(a) != 0 {
				t.Errorf("code actions on another document: %+v", a)
			}
			if a := codeActions(ctx, t, c, uri, lsptest.Range{Start: lsptest.Position{Line: 5}, End: lsptest.Position{Line: 5}}, nil); len(a) != 0 {
				t.Errorf("code actions on another line: %+v", a)
			}
			// At the cursor on the diagnostic's line, with or without it in the context.
			actions := codeActions(ctx, t, c, uri, lsptest.Range{Start: lsptest.Position{Character: 2}, End: lsptest.Position{Character: 2}}, nil)
			if len(actions) != 5 {
				t.Fatalf("code actions %+v, want the five choices offered", actions)
			}
			if with := codeActions(ctx, t, c, uri, q.Range, []lsptest.Diagnostic{q}); len(with) != 5 {
				t.Errorf("code actions for the diagnostic in context: %+v", with)
			}
			for _, a := range actions {
				if a.Kind != "quickfix" || a.Command.Command != "agentls.confirm" || len(a.Command.Arguments) != 1 ||
					a.Command.Arguments[0].ID == "" || len(a.Diagnostics) != 1 || a.Diagnostics[0].Message != q.Message {
					t.Errorf("code action %+v", a)
				}
			}
			if tt.choose != "" {
				i := slices.IndexFunc(actions, func(a codeActionResult) bool { return a.Title == tt.choose })
				if i < 0 {
					t.Fatalf("no code action %q in %+v", tt.choose, actions)
				}
				cmd := actions[i].Command
				if err := command(ctx, c, cmd.Command, cmd.Arguments[0], nil); err != nil {
					t.Fatal(err)
				}
			}
			var res tools.CallResult
			if err := p.Wait(ctx, &res); err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.want || (tt.choose == "" && !strings.Contains(res.Output, "no answer")) {
				t.Errorf("result %s %q, want %s", res.Status, res.Output, tt.want)
			}
			if doc, _ := c.Editor().Doc(uri); doc.Text != tt.text {
				t.Errorf("editor text %q, want %q", doc.Text, tt.text)
			}
			if strings.Contains(tt.choose, "save") {
				if _, err := c.WaitFor(ctx, "window/showMessage", func(m lsptest.Message) bool {
					return strings.Contains(string(m.Params), "Saved in") && strings.Contains(string(m.Params), "allow replace")
				}); err != nil {
					t.Errorf("the saved approval was not told: %v", err)
				}
			}
			if _, _, err := c.WaitDiagnostics(ctx, uri, seen, func(d []lsptest.Diagnostic) bool { return len(ofSource(d, "agentls", 0)) == 0 }); err != nil {
				t.Errorf("the question was not taken down: %v", err)
			}
			if a := codeActions(ctx, t, c, uri, q.Range, []lsptest.Diagnostic{q}); len(a) != 0 {
				t.Errorf("code actions for an answered question: %+v", a)
			}
			for _, m := range []string{"agentls/confirm", "window/showMessageRequest"} {
				if c.Received(m) != nil {
					t.Errorf("asked with %s, which the client did not advertise", m)
				}
			}
		})
	}
}

// TestConfirmationAsDiagnosticPlacement: a call that names no file (a shell command)
// is asked on the document last opened or changed; with nothing open it is refused,
// saying why. A client without code action literals gets the commands alone.
func TestConfirmationAsDiagnosticPlacement(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	noLiterals := withCaps(helix, "textDocument", map[string]any{"publishDiagnostics": map[string]any{}})
	c := session(t, root, noLiterals, nil)

	res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "touch ran"})
	if res.Status != tools.StatusCancelled || !contains(res.Output, "cannot ask", "no document is open") {
		t.Errorf("with nothing open: %s %q, want refused saying so", res.Status, res.Output)
	}
	if fileExists(filepath.Join(root, "ran")) {
		t.Fatalf("the command ran")
	}

	a, b := lsptest.FileURI(filepath.Join(root, "a.txt")), lsptest.FileURI(filepath.Join(root, "b.txt"))
	if err := c.Editor().Open(a, "a\n"); err != nil {
		t.Fatal(err)
	}
	if err := c.Editor().Open(b, "b\n"); err != nil {
		t.Fatal(err)
	}
	if err := c.Editor().Change(a, lsptest.Change{Text: "a, typed\n"}); err != nil {
		t.Fatal(err)
	}
	p := runToolAs(c, "sh-1", "run_shell_command", map[string]any{"command": "touch ran"})
	diags, _, err := c.WaitDiagnostics(ctx, a, 0, func(d []lsptest.Diagnostic) bool { return len(questions(d)) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(questions(diags)[0].Message, "touch ran") {
		t.Errorf("question %q does not show the command", questions(diags)[0].Message)
	}
	var commands []struct {
		Title     string
		Command   string
		Arguments []confirmArg
	}
	if err := c.Call(ctx, "textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": a},
		"range": questions(diags)[0].Range, "context": map[string]any{"diagnostics": []any{}}}, &commands); err != nil {
		t.Fatal(err)
	}
	if len(commands) != 5 || commands[0].Command != "agentls.confirm" || commands[0].Title != "Allow once" {
		t.Fatalf("commands %+v, want the five choices as commands", commands)
	}
	if err := command(ctx, c, "agentls.confirm", commands[0].Arguments[0], nil); err != nil {
		t.Fatal(err)
	}
	var r tools.CallResult
	if err := p.Wait(ctx, &r); err != nil || r.Status != tools.StatusSuccess {
		t.Fatalf("approved shell command: %+v %v", r, err)
	}
	if !fileExists(filepath.Join(root, "ran")) {
		t.Errorf("the approved command did not run")
	}
}
