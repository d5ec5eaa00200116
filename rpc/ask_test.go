package rpc_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/tools"
)

// TestAskUser: ask_user's questions reach the editor by the way it supports —
// agentls/confirm of type ask_user for a client that declared askUser, one
// window/showMessageRequest per question for a plain one — and the answers reach the
// model; where the questions cannot be put, or are dismissed, the call says so and
// nothing is made up.
func TestAskUser(t *testing.T) {
	t.Parallel()
	capsAsk := withCaps(capsEditor, "experimental", map[string]any{"agentls": map[string]any{"confirm": true, "updates": true, "askUser": true}})
	choice := map[string]any{"question": "Which database?", "header": "DB", "type": "choice",
		"options": []any{map[string]any{"label": "Postgres", "description": "relational"}, map[string]any{"label": "SQLite", "description": "a file"}}}
	yesno := map[string]any{"question": "Add tests?", "header": "Tests", "type": "yesno"}
	text := map[string]any{"question": "Project name?", "header": "Name", "type": "text"}
	tests := []struct {
		name      string
		caps      map[string]any
		questions []any
		confirm   lsptest.Handler // agentls/confirm
		message   lsptest.Handler // window/showMessageRequest
		want      tools.Status
		wantOut   string
		confirms  int // agentls/confirm requests expected
		messages  int // window/showMessageRequest requests expected
	}{
		{name: "rich", caps: capsAsk, questions: []any{choice, text},
			confirm: answer(map[string]any{"outcome": "proceed_once", "answers": map[string]any{"0": "SQLite", "1": "agentls"}}),
			want:    tools.StatusSuccess, wantOut: `{"answers":{"0":"SQLite","1":"agentls"}}`, confirms: 1},
		{name: "rich dismissed", caps: capsAsk, questions: []any{text},
			confirm: answer(map[string]any{"outcome": "cancel"}), want: tools.StatusCancelled, wantOut: "dismissed", confirms: 1},
		{name: "message requests", caps: capsRich, questions: []any{choice, yesno},
			message: func(_ context.Context, p json.RawMessage) (any, error) {
				if strings.Contains(string(p), "Which database?") {
					return map[string]any{"title": "Postgres"}, nil
				}
				return map[string]any{"title": "No"}, nil
			},
			want: tools.StatusSuccess, wantOut: `{"answers":{"0":"Postgres","1":"No"}}`, messages: 2},
		{name: "message dismissed", caps: capsEditor, questions: []any{choice},
			message: answer(nil), want: tools.StatusCancelled, wantOut: "dismissed", messages: 1},
		{name: "message not offered", caps: capsEditor, questions: []any{choice},
			message: answer(map[string]any{"title": "MySQL"}), want: tools.StatusCancelled, wantOut: `"MySQL"`, messages: 1},
		{name: "free text without askUser", caps: capsRich, questions: []any{choice, text},
			want: tools.StatusCancelled, wantOut: "free-form answer"},
		{name: "no way to ask", caps: withDiagnostics(capsNone), questions: []any{choice},
			want: tools.StatusCancelled, wantOut: "cannot put questions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			c := session(t, workspaceDir(t, nil), tt.caps, nil)
			var mu sync.Mutex
			var confirmParams []map[string]any
			c.Handle("agentls/confirm", func(ctx context.Context, p json.RawMessage) (any, error) {
				var d map[string]any
				json.Unmarshal(p, &d)
				// agentls.confirm answers with an outcome, not with the answers: it
				// must not take the questions as answered (nor drop the answer silently).
				if err := command(ctx, c, "agentls.confirm", map[string]any{"id": d["id"], "outcome": "proceed_once"}, nil); codeOf(err) != lsptest.CodeInvalidParams {
					t.Errorf("agentls.confirm for the questions %v: %v, want InvalidParams", d["id"], err)
				}
				mu.Lock()
				confirmParams = append(confirmParams, d)
				mu.Unlock()
				if tt.confirm == nil {
					return nil, &lsptest.ResponseError{Code: -32601, Message: "unexpected"}
				}
				return tt.confirm(ctx, p)
			})
			if tt.message != nil {
				c.Handle("window/showMessageRequest", tt.message)
			}
			res := runTool(ctx, t, c, "ask_user", map[string]any{"questions": tt.questions})
			if res.Status != tt.want || !strings.Contains(res.Output, tt.wantOut) {
				t.Errorf("result %s %q, want %s with %q", res.Status, res.Output, tt.want, tt.wantOut)
			}
			if n := len(c.Received("agentls/confirm")); n != tt.confirms {
				t.Errorf("%d agentls/confirm requests, want %d", n, tt.confirms)
			}
			if n := len(c.Received("window/showMessageRequest")); n != tt.messages {
				t.Errorf("%d showMessageRequest requests, want %d", n, tt.messages)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, d := range confirmParams {
				qs, _ := d["questions"].([]any)
				if d["type"] != "ask_user" || len(qs) != len(tt.questions) {
					t.Errorf("ConfirmDetails %v, want type ask_user with %d questions", d, len(tt.questions))
				}
			}
		})
	}
}
