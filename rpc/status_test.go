package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/settings"
)

// modeUpdates returns the modes of the mode updates of session received so far.
func modeUpdates(t *testing.T, c *lsptest.Client, session string) []string {
	t.Helper()
	var out []string
	for _, m := range c.Received("agentls/update") {
		var p struct {
			Session string `json:"session"`
			Update  struct {
				Kind string `json:"kind"`
				Mode string `json:"mode"`
			} `json:"update"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Session == session && p.Update.Kind == "current_mode_update" {
			out = append(out, p.Update.Mode)
		}
	}
	return out
}

// waitMode waits for the mode update of session that makes n of them.
func waitMode(ctx context.Context, t *testing.T, c *lsptest.Client, session string, n int) []string {
	t.Helper()
	_, err := c.WaitFor(ctx, "agentls/update", func(lsptest.Message) bool { return len(modeUpdates(t, c, session)) >= n })
	if err != nil {
		t.Fatalf("waiting for mode update %d of session %q: %v (have %v)", n, session, err, modeUpdates(t, c, session))
	}
	return modeUpdates(t, c, session)
}

// TestModeUpdates: a rich client is told the approval mode in force after initialized
// and each time it changes, whoever changed it; a plain client is told nothing.
func TestModeUpdates(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	c := session(t, root, capsRich, map[string]any{"approvalMode": "auto_edit"})
	if got := waitMode(ctx, t, c, "", 1); got[0] != "auto_edit" {
		t.Fatalf("first mode update %v, want auto_edit (the settings' mode)", got)
	}
	if err := command(ctx, c, "agentls.setApprovalMode", map[string]any{"mode": "yolo"}, nil); err != nil {
		t.Fatal(err)
	}
	// The update comes before the command's answer.
	if got := modeUpdates(t, c, ""); len(got) != 2 || got[1] != "yolo" {
		t.Errorf("after setApprovalMode yolo: %v", got)
	}
	// The same mode again is no change.
	if err := command(ctx, c, "agentls.setApprovalMode", map[string]any{"mode": "yolo"}, nil); err != nil {
		t.Fatal(err)
	}
	// A configuration change that sets the mode (as a settings file could).
	if err := c.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"approvalMode": "plan"}}); err != nil {
		t.Fatal(err)
	}
	if got := waitMode(ctx, t, c, "", 3); len(got) != 3 || got[2] != "plan" {
		t.Errorf("after the configuration change: %v, want [auto_edit yolo plan]", got)
	}
	// An invalid mode changes nothing and is not announced.
	if err := command(ctx, c, "agentls.setApprovalMode", map[string]any{"mode": "sometimes"}, nil); err == nil {
		t.Error("setApprovalMode sometimes: no error")
	}
	if got := modeUpdates(t, c, ""); len(got) != 3 {
		t.Errorf("mode updates %v, want 3", got)
	}

	plain := session(t, root, withCaps(capsEditor, "experimental", map[string]any{"agentls": map[string]any{"confirm": true}}), nil)
	if err := command(ctx, plain, "agentls.setApprovalMode", map[string]any{"mode": "yolo"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := plain.Received("agentls/update"); got != nil {
		t.Errorf("a plain client got %v", got)
	}
}

// TestSessionInfo: a prompt's updates begin with the model serving the session; a
// session's own mode is announced under the session.
func TestSessionInfo(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	a := newAgent(t, root, "", clients.Turn{Text: "one"}, clients.Turn{Text: "two"})
	c := a.serve(capsRich, nil, rpc.Options{NewClient: func(ctx context.Context, _ settings.Settings) (clients.Client, error) {
		return clients.NewGemini(ctx, clients.GeminiOptions{APIKey: "test-key", BaseURL: a.fake.URL, Model: "gemini-test-model",
			Retry: clients.RetryPolicy{Attempts: 1}})
	}})
	var res promptResult
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "hi"}, &res); err != nil {
		t.Fatal(err)
	}
	infos := func() []map[string]any {
		var out []map[string]any
		for _, m := range c.Received("agentls/update") {
			var p struct {
				Session string         `json:"session"`
				Update  map[string]any `json:"update"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			if p.Session == res.Session && p.Update["kind"] == "session_info" {
				out = append(out, p.Update)
			}
		}
		return out
	}
	us := updates(t, c, res.Session)
	if len(us) == 0 || us[0].Kind != "session_info" {
		t.Fatalf("updates of the prompt %+v, want session_info first", us)
	}
	if got := infos(); len(got) != 1 || got[0]["model"] != "gemini-test-model" || got[0]["provider"] != "gemini" {
		t.Errorf("session_info %v, want model gemini-test-model, provider gemini", got)
	}
	// Each prompt says it again (the client may have resumed the session meanwhile).
	if err := c.Call(ctx, "agentls/prompt", map[string]any{"prompt": "again", "session": res.Session}, &res); err != nil {
		t.Fatal(err)
	}
	if got := infos(); len(got) != 2 {
		t.Errorf("session_info after two prompts: %v", got)
	}
	if err := command(ctx, c, "agentls.setApprovalMode", map[string]any{"mode": "plan", "session": res.Session}, nil); err != nil {
		t.Fatal(err)
	}
	if got := modeUpdates(t, c, res.Session); len(got) != 1 || got[0] != "plan" {
		t.Errorf("the session's mode updates %v, want [plan]", got)
	}
	if got := modeUpdates(t, c, ""); len(got) != 1 || got[0] != "default" {
		t.Errorf("workspace mode updates %v, want only the first, default", got)
	}
}

// TestAlwaysOnEditKeepsTheMode: "always" on an edit allows every later edit of the
// same session (here the editor's runTool calls) without a question, and changes no
// approval mode: the workspace stays in default for every other session (it used to
// switch the whole server to auto_edit, red team R8).
func TestAlwaysOnEditKeepsTheMode(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"f.txt": "one\n"})
	c := session(t, root, capsRich, nil)
	c.Handle("agentls/confirm", func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"choice": "always"}, nil
	})
	if got := waitMode(ctx, t, c, "", 1); got[0] != "default" {
		t.Fatalf("first mode %v, want default", got)
	}
	for _, step := range [][2]string{{"one", "two"}, {"two", "three"}} {
		if res := runTool(ctx, t, c, "replace", replaceArgs("f.txt", step[0], step[1])); res.Status != "success" {
			t.Fatalf("replace: %+v", res)
		}
	}
	if n := len(c.Received("agentls/confirm")); n != 1 {
		t.Errorf("%d questions, want 1: the second edit is allowed by the first answer", n)
	}
	var st struct{ ApprovalMode string }
	if err := command(ctx, c, "agentls.status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.ApprovalMode != "default" {
		t.Errorf("approval mode %q after an always on an edit, want default", st.ApprovalMode)
	}
}

// TestStatus: agentls.status reports the root, trust, approval mode, provider and the
// model the next session gets, or why it would get none (a missing key), without a
// request to the model.
func TestStatus(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"a.txt": "a\n"})
	type status struct {
		Root, ApprovalMode, Provider, Model, ModelError string
		Trusted, ModelReady                             bool
	}
	cases := []struct {
		name      string
		init      any
		newClient func(context.Context, settings.Settings) (clients.Client, error)
		want      status
	}{
		{"ready", map[string]any{"approvalMode": "auto_edit"}, nil,
			status{Root: root, ApprovalMode: "auto_edit", Provider: "gemini", Model: clients.DefaultGeminiModel, ModelReady: true}},
		{"no key", nil, func(context.Context, settings.Settings) (clients.Client, error) {
			return nil, errors.New("set GEMINI_API_KEY")
		}, status{Root: root, ApprovalMode: "default", Provider: "gemini", ModelError: "set GEMINI_API_KEY"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t, root, "")
			c := a.serve(capsRich, tc.init, rpc.Options{NewClient: tc.newClient})
			var got status
			if err := command(ctx, c, "agentls.status", nil, &got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("agentls.status = %+v, want %+v", got, tc.want)
			}
			if reqs, err := a.fake.GenerateRequests(); err != nil || len(reqs) != 0 {
				t.Errorf("requests reached the model: %d, %v", len(reqs), err)
			}
		})
	}
}
