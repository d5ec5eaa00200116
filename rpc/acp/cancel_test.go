package acp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

var sleepSeq atomic.Int64

// uniqueSleep returns a sleep command line that no other process runs, to find it.
func uniqueSleep() string {
	return fmt.Sprintf("sleep %d.%03d%d", 300+os.Getpid()%100, sleepSeq.Add(1), 7)
}

// processRunning reports whether a process's command line is cmdline.
func processRunning(cmdline string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Join(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), " ") == cmdline {
			return true
		}
	}
	return false
}

// waitGone waits until no process runs cmdline, failing the test when ctx ends first.
func waitGone(ctx context.Context, t *testing.T, cmdline string) {
	t.Helper()
	for processRunning(cmdline) {
		select {
		case <-ctx.Done():
			t.Fatalf("%q still runs after the cancel", cmdline)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestCancel: session/cancel in the middle of a shell command (yolo mode, set with
// session/set_mode) ends the prompt with stopReason cancelled and leaves no process
// behind; a second prompt while the first runs is an error and changes nothing; and
// the session answers the next prompt.
func TestCancel(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	sleep := uniqueSleep()
	_, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("s1", "run_shell_command", map[string]any{"command": sleep})}},
		clients.Turn{Text: "still here"},
	)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), nil)
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	if _, err := a.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "yolo"}); err != nil {
		t.Fatal(err)
	}
	// The session's commands are announced after session/new, whenever they come.
	ups := slices.DeleteFunc(a.client.take(), func(u sdk.SessionUpdate) bool { return u.AvailableCommandsUpdate != nil })
	// current_mode_update, then config_option_update for the clients of configOptions
	// (TestModeConfigOption).
	if len(ups) != 2 || ups[0].CurrentModeUpdate == nil || ups[0].CurrentModeUpdate.CurrentModeId != "yolo" || ups[1].ConfigOptionUpdate == nil {
		t.Errorf("set_mode sent %+v, want current_mode_update yolo and config_option_update", ups)
	}
	_, err := a.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "reckless"})
	if codeOf(err) != -32602 || !strings.Contains(err.Error(), "auto_edit") {
		t.Errorf("set_mode reckless: %v, want invalid params listing the modes", err)
	}

	running := make(chan struct{})
	var once atomic.Bool
	a.client.mu.Lock()
	a.client.onUpdate = func(n sdk.SessionNotification) {
		if up := n.Update.ToolCallUpdate; up != nil && up.Status != nil && *up.Status == sdk.ToolCallStatusInProgress && once.CompareAndSwap(false, true) {
			close(running)
		}
	}
	a.client.mu.Unlock()
	type result struct {
		res sdk.PromptResponse
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := a.prompt(ctx, sess.SessionId, "sleep")
		done <- result{res, err}
	}()
	select {
	case <-running:
	case <-ctx.Done():
		t.Fatal("the command never ran")
	}
	for !processRunning(sleep) {
		select {
		case <-ctx.Done():
			t.Fatal("the sleep never started")
		case <-time.After(10 * time.Millisecond):
		}
	}
	_, err = a.prompt(ctx, sess.SessionId, "and another")
	if codeOf(err) != -32600 || !strings.Contains(err.Error(), "already answering") {
		t.Errorf("a second prompt while one runs: %v, want an invalid request saying so", err)
	}
	if err := a.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("the cancelled prompt = %+v, %v; want stopReason cancelled", r.res, r.err)
	}
	waitGone(ctx, t, sleep)

	res, err := a.prompt(ctx, sess.SessionId, "are you there?")
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("the prompt after the cancel = %+v, %v", res, err)
	}
}

// TestCancelPermission: session/cancel while a permission request waits cancels the
// request and the call, which does not run; the prompt ends cancelled.
func TestCancelPermission(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	_, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("w1", "write_file", map[string]any{"file_path": filepath.Join(root, "z.txt"), "content": "z"})}},
	)
	asked := make(chan struct{}, 1)
	a := start(t, env(t.TempDir(), t.TempDir(), model...), func(p sdk.RequestPermissionRequest) sdk.PermissionOptionId {
		asked <- struct{}{}
		return wait
	})
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		res, err := a.prompt(ctx, sess.SessionId, "write z.txt")
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("no permission request")
	}
	a.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sess.SessionId})
	if res := <-done; res.StopReason != sdk.StopReasonCancelled {
		t.Errorf("stopReason %q, want cancelled", res.StopReason)
	}
	if _, err := os.Stat(filepath.Join(root, "z.txt")); err == nil {
		t.Error("z.txt was written though its permission request was cancelled")
	}
}

// TestPromptContent: resource links bring in the file they name, embedded resources
// their text, images go to the model with the text; audio, images that are not, and
// unknown sessions are refused with a message.
func TestPromptContent(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(root, "notes.md"), []byte("the notes\n"), 0o644)
	fake, model := fakeModel(t, clients.Turn{Text: "ok"})
	a := start(t, env(t.TempDir(), t.TempDir(), model...), nil)
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	res, err := a.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("summarise "),
		sdk.ResourceLinkBlock("notes.md", "file://"+filepath.Join(root, "notes.md")),
		sdk.TextBlock(" and the buffer"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{
			Uri: "file://" + filepath.Join(root, "unsaved.go"), Text: "package unsaved"}}),
		sdk.ImageBlock("aGk=", "image/png"),
	}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	reqs, err := fake.GenerateRequests()
	if err != nil || len(reqs) != 1 {
		t.Fatalf("requests %d, %v", len(reqs), err)
	}
	last := reqs[0].Contents[len(reqs[0].Contents)-1]
	if n := len(last.Parts); n != 2 || last.Parts[1].InlineData == nil ||
		last.Parts[1].InlineData.MIMEType != "image/png" || last.Parts[1].InlineData.Data != "aGk=" {
		t.Errorf("the prompt's parts %+v, want its text and the image", last.Parts)
	}
	sent := last.Parts[0].Text
	for _, want := range []string{"summarise @notes.md and the buffer", "Content from @notes.md:\nthe notes\n", "Content from @unsaved.go:\npackage unsaved\n"} {
		if !strings.Contains(sent, want) {
			t.Errorf("the model was sent %q, without %q", sent, want)
		}
	}

	tests := []struct {
		name    string
		session sdk.SessionId
		blocks  []sdk.ContentBlock
		code    int
		message string
	}{
		{"audio", sess.SessionId, []sdk.ContentBlock{sdk.TextBlock("hi"), sdk.AudioBlock("aGk=", "audio/wav")}, -32602, "audio"},
		{"not an image", sess.SessionId, []sdk.ContentBlock{sdk.TextBlock("hi"), sdk.ImageBlock("aGk=", "text/plain")}, -32602, "image/*"},
		{"not base64", sess.SessionId, []sdk.ContentBlock{sdk.TextBlock("hi"), sdk.ImageBlock("%%%", "image/png")}, -32602, "base64"},
		{"empty", sess.SessionId, []sdk.ContentBlock{sdk.TextBlock("  ")}, -32602, "empty"},
		{"unknown session", "no-such-session", []sdk.ContentBlock{sdk.TextBlock("hi")}, -32602, "unknown session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.conn.Prompt(ctx, sdk.PromptRequest{SessionId: tt.session, Prompt: tt.blocks})
			if codeOf(err) != tt.code || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("prompt: %v, want code %d saying %q", err, tt.code, tt.message)
			}
		})
	}
}
