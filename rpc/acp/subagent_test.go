package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// TestSubagentCalls: a sub-agent's write reaches the client as a tool call of its own,
// announced with its invoke_agent call as _meta.parentToolCallId before the
// permission request that refers to it, and ends completed with its diff.
func TestSubagentCalls(t *testing.T) {
	ctx := testContext(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(root, "b.txt")
	_, model := fakeModel(t,
		clients.Turn{Calls: []clients.ScriptCall{call("p1", "invoke_agent", map[string]any{"agent_name": "writer", "prompt": "Create b.txt holding b."})}},
		clients.Turn{Calls: []clients.ScriptCall{call("w1", "write_file", map[string]any{"file_path": b, "content": "b\n"})}},
		clients.Turn{Text: "b.txt holds b."},
		clients.Turn{Text: "The writer created b.txt."},
	)
	cfg, state := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"agents": {"writer": {"description": "writes files", "tools": ["write_file"]}}}`
	if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.Mutex
		announced = map[sdk.ToolCallId]chan struct{}{}
	)
	seen := func(id sdk.ToolCallId) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if announced[id] == nil {
			announced[id] = make(chan struct{})
		}
		return announced[id]
	}
	var inOrder []bool
	a := start(t, env(cfg, state, model...), func(p sdk.RequestPermissionRequest) sdk.PermissionOptionId {
		// The SDK hands requests and notifications to the client on goroutines of
		// their own, so a tool_call sent before the request may be delivered just
		// after it: wait for it, bounded. A call never announced fails.
		ok := false
		select {
		case <-seen(p.ToolCall.ToolCallId):
			ok = true
		case <-time.After(10 * time.Second):
		}
		mu.Lock()
		inOrder = append(inOrder, ok)
		mu.Unlock()
		return "allow_once"
	})
	a.client.mu.Lock()
	a.client.onUpdate = func(n sdk.SessionNotification) {
		if tc := n.Update.ToolCall; tc != nil {
			ch := seen(tc.ToolCallId)
			select {
			case <-ch:
				t.Errorf("%s announced twice", tc.ToolCallId)
			default:
				close(ch)
			}
		}
	}
	a.client.mu.Unlock()
	a.initialize(ctx)
	sess := a.newSession(ctx, root)
	res, err := a.prompt(ctx, sess.SessionId, "have the writer create b.txt")
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	if got := readFile(t, b); got != "b\n" {
		t.Errorf("b.txt = %q", got)
	}
	perms := a.client.takePermissions()
	mu.Lock()
	defer mu.Unlock()
	if len(perms) != 1 || len(inOrder) != 1 {
		t.Fatalf("%d permission requests, want the agent's write once", len(perms))
	}
	id := perms[0].ToolCall.ToolCallId
	if !inOrder[0] {
		t.Errorf("the permission request refers to %s, which no tool_call announced", id)
	}
	parent := string(sess.SessionId) + "/p1"
	var started *sdk.SessionUpdateToolCall
	var ended *sdk.SessionToolCallUpdate
	for _, u := range a.client.take() {
		switch {
		case u.ToolCall != nil && u.ToolCall.ToolCallId == id:
			started = u.ToolCall
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == id && u.ToolCallUpdate.Status != nil &&
			*u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted:
			ended = u.ToolCallUpdate
		}
	}
	if started == nil || started.Meta["parentToolCallId"] != parent || started.Kind != sdk.ToolKindEdit ||
		len(started.Locations) != 1 || started.Locations[0].Path != b {
		t.Errorf("the agent's tool_call = %+v, want an edit of b.txt with _meta.parentToolCallId %s", started, parent)
	}
	if ended == nil || ended.Meta["parentToolCallId"] != parent || len(ended.Content) == 0 || ended.Content[0].Diff == nil {
		t.Errorf("the agent's call ended with %+v, want completed with its diff under %s", ended, parent)
	}
	if !strings.HasPrefix(string(id), string(sess.SessionId)+"/writer-") {
		t.Errorf("the agent's call id %s is not of its own", id)
	}
}
