package acp_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// TestTerminal: a client that declares terminal runs run_shell_command in its
// terminal, embedded in the call's content while it runs and after; the model gets
// the output and the exit code; session/cancel kills the terminal's process.
func TestTerminal(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	sleep := uniqueSleep()
	fake, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("s1", "run_shell_command", map[string]any{"command": "echo from-terminal; exit 3"})}},
		clients.Turn{Text: "it failed"},
		clients.Turn{Calls: []clients.ScriptCall{call("s2", "run_shell_command", map[string]any{"command": sleep})}},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
	a.client.terminals = map[string]*terminal{}
	if _, err := a.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Terminal: true}}); err != nil {
		t.Fatal(err)
	}
	sess := a.newSession(ctx, root)
	if res, err := a.prompt(ctx, sess.SessionId, "run it"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	term, err := a.client.terminal("term-1")
	if err != nil {
		t.Fatal(err)
	}
	if r := term.req; r.Command != "bash" || strings.Join(r.Args, " ") != "-c echo from-terminal; exit 3" || r.Cwd == nil || *r.Cwd != root || !term.released {
		t.Errorf("terminal/create %+v, released %v", r, term.released)
	}
	var shown, ended bool
	for _, u := range a.client.take() {
		up := u.ToolCallUpdate
		if up == nil || len(up.Content) == 0 || up.Content[0].Terminal == nil || up.Content[0].Terminal.TerminalId != "term-1" {
			continue
		}
		if up.Status == nil {
			shown = true
		} else if *up.Status == sdk.ToolCallStatusCompleted {
			ended = true
		}
	}
	if !shown || !ended {
		t.Errorf("the terminal was embedded while running: %v, in the result: %v", shown, ended)
	}
	reqs, err := fake.GenerateRequests()
	if err != nil {
		t.Fatal(err)
	}
	resp := reqs[1].Contents[len(reqs[1].Contents)-1].Parts[0].FunctionResponse
	if resp == nil || !strings.Contains(string(resp.Response), "from-terminal") || !strings.Contains(string(resp.Response), "Exit Code: 3") {
		t.Errorf("the model got %+v, want the output and the exit code", resp)
	}

	done := make(chan sdk.PromptResponse, 1)
	go func() {
		res, err := a.prompt(ctx, sess.SessionId, "sleep")
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for !processRunning(sleep) {
		select {
		case <-ctx.Done():
			t.Fatal("the sleep never started in the terminal")
		case <-time.After(10 * time.Millisecond):
		}
	}
	a.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sess.SessionId})
	if res := <-done; res.StopReason != sdk.StopReasonCancelled {
		t.Errorf("stopReason %q, want cancelled", res.StopReason)
	}
	waitGone(ctx, t, sleep)
}
