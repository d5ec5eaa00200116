package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// TestFSDelegation: a client that declares fs has the tools read its unsaved buffer
// and the approved edits written through fs/write_text_file (the disk untouched); an
// edit of a buffer the user changed after the tool read it is refused as stale and not
// written.
func TestFSDelegation(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	a1, fresh := filepath.Join(root, "a.txt"), filepath.Join(root, "new.txt")
	writeFile(t, root, "a.txt", "alpha\nbeta\n")
	_, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("r1", "read_file", map[string]any{"file_path": a1})}},
		clients.Turn{Calls: []clients.ScriptCall{call("e1", "replace", map[string]any{"file_path": a1, "old_string": "unsaved", "new_string": "saved"})}},
		clients.Turn{Calls: []clients.ScriptCall{call("w1", "write_file", map[string]any{"file_path": fresh, "content": "fresh\n"})}},
		clients.Turn{Calls: []clients.ScriptCall{call("e2", "replace", map[string]any{"file_path": a1, "old_string": "saved", "new_string": "again"})}},
		clients.Turn{Text: "done"},
	)
	var asked atomic.Int32
	var a *agent
	a = start(t, env(t.TempDir(), t.TempDir(), model...), func(p sdk.RequestPermissionRequest) sdk.PermissionOptionId {
		if asked.Add(1) == 3 {
			// The user types in the buffer while the last edit waits for consent.
			a.client.setBuffer(a1, "alpha\nsaved\nand typed\n")
		}
		return "allow_once"
	})
	a.client.buffers = map[string]string{a1: "alpha\nunsaved\n"}
	if _, err := a.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}}); err != nil {
		t.Fatal(err)
	}
	sess := a.newSession(ctx, root)
	if res, err := a.prompt(ctx, sess.SessionId, "edit a.txt"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}

	ended := map[string]*sdk.SessionToolCallUpdate{}
	for _, u := range a.client.take() {
		if up := u.ToolCallUpdate; up != nil && up.Status != nil && (*up.Status == sdk.ToolCallStatusCompleted || *up.Status == sdk.ToolCallStatusFailed) {
			ended[string(up.ToolCallId)[strings.LastIndex(string(up.ToolCallId), "/")+1:]] = up
		}
	}
	raw, _ := json.Marshal(ended["r1"].RawOutput)
	if !strings.Contains(string(raw), "unsaved") {
		t.Errorf("read_file returned %s, want the buffer's unsaved text", raw)
	}
	perms := a.client.takePermissions()
	if len(perms) != 3 {
		t.Fatalf("%d permission requests, want 3", len(perms))
	}
	if d := perms[0].ToolCall.Content[0].Diff; d == nil || d.OldText == nil || *d.OldText != "alpha\nunsaved\n" || d.NewText != "alpha\nsaved\n" {
		t.Errorf("the edit's diff = %+v, want it made from the buffer", d)
	}
	if got, _ := a.client.buffer(a1); got != "alpha\nsaved\nand typed\n" {
		t.Errorf("the buffer holds %q: the stale edit overwrote the user's typing", got)
	}
	if got, _ := a.client.buffer(fresh); got != "fresh\n" {
		t.Errorf("new.txt's buffer holds %q", got)
	}
	if e := ended["e2"]; e == nil || *e.Status != sdk.ToolCallStatusFailed {
		t.Errorf("the edit of a buffer changed since it was read ended %+v, want failed", e)
	} else if raw, _ := json.Marshal(e.RawOutput); !strings.Contains(string(raw), "changed") {
		t.Errorf("the stale edit's result %s does not say the file changed", raw)
	}
	if len(a.client.writes) != 2 {
		t.Errorf("%d writes through the client, want the two allowed ones: %+v", len(a.client.writes), a.client.writes)
	}
	if got := readFile(t, a1); got != "alpha\nbeta\n" {
		t.Errorf("a.txt on disk = %q: written behind the editor's back", got)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("new.txt was written to disk, not through the client")
	}
}
