package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
)

// TestAuthenticate: without a key, initialize offers the API key method and, to a
// client that declares terminal authentication, `agentls login`; session/new fails
// with auth_required listing them; authenticate asks a client that answers forms for
// the key (a form tied to the authenticate request), stores it readable by the user
// alone, and the next session's model gets it; the key is in no log; a declined form
// stores nothing; logout removes the stored key.
func TestAuthenticate(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	const key = "AIza-acp-secret-5151"
	fake := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Text: "hello"}}})
	t.Cleanup(fake.Close)
	cfg := t.TempDir()
	a := start(t, env(cfg, t.TempDir(), "GOOGLE_GEMINI_BASE_URL="+fake.URL), nil)
	answer := "accept"
	a.client.elicit = func(_ context.Context, p sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
		if answer != "accept" {
			return sdk.UnstableCreateElicitationResponse{Decline: &sdk.UnstableCreateElicitationDecline{Action: "decline"}}, nil
		}
		return sdk.UnstableCreateElicitationResponse{Accept: &sdk.UnstableCreateElicitationAccept{Action: "accept", Content: map[string]any{"apiKey": key}}}, nil
	}
	res := a.initializeWith(ctx, sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}},
		Auth: sdk.AuthCapabilities{Terminal: true}})
	if res.AgentCapabilities.Auth.Logout == nil {
		t.Errorf("agentCapabilities.auth.logout is not offered: %+v", res.AgentCapabilities.Auth)
	}
	if len(res.AuthMethods) != 2 || res.AuthMethods[0].Agent == nil || res.AuthMethods[0].Agent.Id != "gemini-api-key" ||
		res.AuthMethods[1].Terminal == nil || strings.Join(res.AuthMethods[1].Terminal.Args, " ") != "login" {
		t.Fatalf("auth methods %s, want the API key method and terminal auth running `agentls login`", jsonOf(res.AuthMethods))
	}

	_, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32000 || !strings.Contains(re.Message, "agentls login") {
		t.Fatalf("session/new without a key: %v, want auth_required saying how to log in", err)
	}
	if data := jsonOf(re.Data); !strings.Contains(data, `"authMethods"`) || !strings.Contains(data, `"agentls-login"`) {
		t.Errorf("auth_required's data %s, want the methods", data)
	}

	answer = "decline"
	if _, err := a.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: "gemini-api-key"}); codeOf(err) != -32000 {
		t.Errorf("authenticate with the form declined: %v, want auth_required", err)
	}
	file := filepath.Join(cfg, "agentls", "keys.json")
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after a declined form: %v", file, err)
	}
	answer = "accept"
	if _, err := a.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: "gemini-api-key"}); err != nil {
		t.Fatalf("authenticate with the form answered: %v", err)
	}
	if n := len(a.client.elicitations); n != 2 {
		t.Fatalf("%d forms, want 2", n)
	}
	// The form is tied to its authenticate request (the schema's request scope).
	var scoped int
	for _, line := range strings.Split(a.wire.String(), "\n") {
		if strings.Contains(line, `"elicitation/create"`) && strings.Contains(line, `"requestId"`) && !strings.Contains(line, "agentls/elicitationScope") {
			scoped++
		}
	}
	if scoped != 2 {
		t.Errorf("%d elicitation/create requests carry their requestId, want 2:\n%s", scoped, a.wire.String())
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", file, fi.Mode().Perm())
	}

	sess := a.newSession(ctx, root)
	if r, err := a.prompt(ctx, sess.SessionId, "hi"); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt after authenticate = %+v, %v", r, err)
	}
	var sent []string
	for _, r := range fake.Requests() {
		if r.Turn != 0 {
			sent = append(sent, r.Header.Get("X-Goog-Api-Key"))
		}
	}
	if len(sent) != 1 || sent[0] != key {
		t.Errorf("the model got the keys %q, want the one given in the form", sent)
	}

	if _, err := a.conn.UnstableLogout(ctx, sdk.UnstableLogoutRequest{}); err != nil {
		t.Errorf("logout: %v", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after logout: %v", file, err)
	}
	if _, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}}); codeOf(err) != -32000 {
		t.Errorf("session/new after logout: %v, want auth_required", err)
	}
	if strings.Contains(a.stderr.String(), key) {
		t.Errorf("the key is in the agent's log:\n%s", a.stderr.String())
	}
}

// TestTerminalAuthMeta: a client that declares terminal authentication only by the
// _meta "terminal-auth" flag (Zed's, and the ACP registry validator's) gets the
// terminal method with the launch hint those clients read; a client that declares
// neither gets the API key method alone.
func TestTerminalAuthMeta(t *testing.T) {
	ctx := testContext(t)
	for _, tt := range []struct {
		name string
		caps sdk.ClientCapabilities
		want int
	}{
		{"the _meta flag", sdk.ClientCapabilities{Terminal: true, Meta: map[string]any{"terminal-auth": true}}, 2},
		{"neither", sdk.ClientCapabilities{Terminal: true}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := start(t, env(t.TempDir(), t.TempDir()), nil)
			res := a.initializeWith(ctx, tt.caps)
			if len(res.AuthMethods) != tt.want || res.AuthMethods[0].Agent == nil {
				t.Fatalf("auth methods %s, want %d", jsonOf(res.AuthMethods), tt.want)
			}
			if tt.want == 1 {
				return
			}
			hint, _ := res.AuthMethods[1].Terminal.Meta["terminal-auth"].(map[string]any)
			if cmd, _ := hint["command"].(string); filepath.Base(cmd) != "agentls" || jsonOf(hint["args"]) != `["login"]` {
				t.Errorf("the terminal method's launch hint %s, want agentls login", jsonOf(hint))
			}
		})
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
