package acp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/sandbox"
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
	wantTerminal(t, a, sess, term.req, root, "echo from-terminal; exit 3")
	if !term.released {
		t.Errorf("terminal %+v not released", term.req)
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

// wantTerminal checks that terminal/create r runs line in root: through `agentls
// sandbox` with the session's policy where the session's commands are contained (its
// _meta says), as bash -c LINE otherwise.
func wantTerminal(t *testing.T, a *agent, sess sdk.NewSessionResponse, r sdk.CreateTerminalRequest, root, line string) {
	t.Helper()
	st, _ := sess.Meta["agentls/sandbox"].(map[string]any)
	if st == nil {
		t.Fatalf("session/new _meta %v has no agentls/sandbox", sess.Meta)
	}
	if r.Cwd == nil || *r.Cwd != root {
		t.Errorf("terminal/create in %v, want %s", r.Cwd, root)
	}
	if st["contained"] != true {
		if r.Command != "bash" || strings.Join(r.Args, " ") != "-c "+line {
			t.Errorf("uncontained terminal/create %s %q", r.Command, r.Args)
		}
		return
	}
	want := []string{"sandbox", "--root", root, "--", "bash", "-c", line}
	if r.Command != a.cmd.Path || !slices.Equal(r.Args, want) {
		t.Errorf("terminal/create %s %q, want %s %q", r.Command, r.Args, a.cmd.Path, want)
	}
	if len(r.Env) != 1 || r.Env[0].Name != sandbox.EnvPolicy || !strings.Contains(r.Env[0].Value, `"contained":true`) {
		t.Errorf("terminal/create env %+v, want the session's policy in %s", r.Env, sandbox.EnvPolicy)
	}
}

// TestTerminalContained: a command run in the client's terminal is held to the
// session's sandbox: its write outside the workspace is refused and the model is told
// why; the same line uncontained writes its marker.
func TestTerminalContained(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	tmp, outside := t.TempDir(), t.TempDir()
	marker := filepath.Join(outside, "marker")
	line := "echo in > in.txt; echo pwned > " + marker
	fake, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("s1", "run_shell_command", map[string]any{"command": line})}},
		clients.Turn{Text: "done"},
	)
	// The session's temporary directory is tmp, so /tmp, which holds outside, is not
	// writable to its commands.
	a := start(t, env(t.TempDir(), t.TempDir(), append(model, "TMPDIR="+tmp)...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
	a.client.terminals = map[string]*terminal{}
	if _, err := a.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Terminal: true}}); err != nil {
		t.Fatal(err)
	}
	sess := a.newSession(ctx, root)
	if st, _ := sess.Meta["agentls/sandbox"].(map[string]any); st == nil || st["contained"] != true {
		if os.Getenv("AGENTLS_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("AGENTLS_REQUIRE_SANDBOX=1 but the session is not contained: %v", sess.Meta)
		}
		t.Skipf("not contained here: %v", sess.Meta)
	}
	if res, err := a.prompt(ctx, sess.SessionId, "run it"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	term, err := a.client.terminal("term-1")
	if err != nil {
		t.Fatal(err)
	}
	wantTerminal(t, a, sess, term.req, root, line)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the terminal's command wrote %s outside the sandbox", marker)
	}
	if _, err := os.Stat(filepath.Join(root, "in.txt")); err != nil {
		t.Errorf("the command did not write in the workspace: %v", err)
	}
	reqs, err := fake.GenerateRequests()
	if err != nil {
		t.Fatal(err)
	}
	resp := string(reqs[1].Contents[len(reqs[1].Contents)-1].Parts[0].FunctionResponse.Response)
	if !strings.Contains(resp, "Sandbox: contained (landlock") || !strings.Contains(resp, marker+" is outside the paths") {
		t.Errorf("the model got %s", resp)
	}
	// The control: the same line, uncontained, writes the marker.
	control := exec.Command("bash", "-c", line)
	control.Dir = t.TempDir()
	if out, err := control.CombinedOutput(); err != nil {
		t.Fatalf("control: %v %s", err, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control left no marker: %v", err)
	}
}
