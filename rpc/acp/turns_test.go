package acp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// TestUndoRedoCommands: a prompt whose shell command rewrites a file and makes another
// is taken back by /undo and brought back by /redo, slash commands answered without a
// model call; /diff names the command beside each file; the commands are announced
// with the session; bad arguments are a JSON-RPC error.
func TestUndoRedoCommands(t *testing.T) {
	ctx := testContext(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a1, made := filepath.Join(root, "a.txt"), filepath.Join(root, "made.txt")
	os.WriteFile(a1, []byte("alpha\n"), 0o644)
	line := "sed -i s/alpha/omega/ a.txt && echo new > made.txt"
	fake, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("s1", "run_shell_command", map[string]any{"command": line})}},
		clients.Turn{Text: "done"},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	if res, err := a.prompt(ctx, sess.SessionId, "change it"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	if got := readFile(t, a1); got != "omega\n" {
		t.Fatalf("a.txt = %q after the command", got)
	}
	var names []string
	for _, u := range a.client.take() {
		if u.AvailableCommandsUpdate != nil {
			for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
				names = append(names, c.Name)
			}
		}
	}
	if !slices.Contains(names, "undo") || !slices.Contains(names, "redo") || !slices.Contains(names, "diff") {
		t.Errorf("announced commands %v, want undo, redo and diff", names)
	}
	answer := func(text string) string {
		t.Helper()
		res, err := a.prompt(ctx, sess.SessionId, text)
		if err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("%s = %+v, %v", text, res, err)
		}
		var b strings.Builder
		for _, u := range a.client.take() {
			if u.AgentMessageChunk != nil {
				b.WriteString(textOf(u.AgentMessageChunk.Content))
			}
		}
		return b.String()
	}
	requests := func() int {
		reqs, err := fake.GenerateRequests()
		if err != nil {
			t.Fatal(err)
		}
		return len(reqs)
	}
	calls := requests()
	if out := answer("/diff"); !strings.Contains(out, "# a.txt: changed by run_shell_command: "+line) || !strings.Contains(out, "+omega") {
		t.Errorf("/diff answered %q", out)
	}
	if out := answer("/undo"); !strings.Contains(out, "Undid prompt 1") || !strings.Contains(out, "reverted a.txt") || !strings.Contains(out, "deleted made.txt") {
		t.Errorf("/undo answered %q", out)
	}
	if got := readFile(t, a1); got != "alpha\n" {
		t.Errorf("a.txt = %q after /undo", got)
	}
	if _, err := os.Stat(made); err == nil {
		t.Error("made.txt stays after /undo")
	}
	if out := answer("/redo"); !strings.Contains(out, "Redid prompt 1") {
		t.Errorf("/redo answered %q", out)
	}
	if got := readFile(t, a1); got != "omega\n" || readFile(t, made) != "new\n" {
		t.Errorf("a.txt = %q after /redo", got)
	}
	if out := answer("/redo"); !strings.Contains(out, "Nothing done") {
		t.Errorf("a second /redo answered %q", out)
	}
	if n := requests(); n != calls {
		t.Errorf("the commands called the model %d times", n-calls)
	}
	if _, err := a.prompt(ctx, sess.SessionId, "/undo lots"); err == nil || !strings.Contains(err.Error(), "neither a prompt's number") {
		t.Errorf("/undo lots: %v, want an invalid-params error", err)
	}
}
