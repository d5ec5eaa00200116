package acp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
)

// TestCustomCommands: a custom command of ~/.gemini/commands is announced in
// available_commands_update; "/git:commit …" sends the model its expanded prompt, the
// output of its !{…} command run after a permission request the client answered.
func TestCustomCommands(t *testing.T) {
	ctx := testContext(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	cfg := t.TempDir()
	dir := filepath.Join(cfg, ".gemini", "commands", "git")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	toml := "description = \"Writes a commit message\"\nprompt = \"Message for {{args}}: !{echo staged-diff}\"\n"
	if err := os.WriteFile(filepath.Join(dir, "commit.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	fake, model := fakeModel(t, clients.Turn{Text: "feat: things"})
	a := start(t, env(cfg, t.TempDir(), model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
	a.initialize(ctx)
	sess, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	var commands []sdk.AvailableCommand
	for len(commands) == 0 {
		for _, u := range a.client.take() {
			if u.AvailableCommandsUpdate != nil {
				commands = u.AvailableCommandsUpdate.AvailableCommands
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("no available_commands_update")
		case <-time.After(10 * time.Millisecond):
		}
	}
	// agentls's own commands come first (TestUndoRedoCommands).
	commands = slices.DeleteFunc(commands, func(c sdk.AvailableCommand) bool { return slices.Contains([]string{"undo", "redo", "diff"}, c.Name) })
	if len(commands) != 1 || commands[0].Name != "git:commit" || commands[0].Description != "Writes a commit message" || commands[0].Input == nil {
		t.Fatalf("commands %+v", commands)
	}
	if res, err := a.prompt(ctx, sess.SessionId, "/git:commit the parser"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	perms := a.client.takePermissions()
	var asked string
	for _, p := range perms {
		if p.ToolCall.Title != nil {
			asked += *p.ToolCall.Title
		}
		for _, c := range p.ToolCall.Content {
			if c.Content != nil {
				asked += textOf(c.Content.Content)
			}
		}
	}
	if len(perms) != 1 || !strings.Contains(asked, "echo staged-diff") {
		t.Errorf("permission requests %+v, want the !{} command's", perms)
	}
	reqs, err := fake.GenerateRequests()
	if err != nil || len(reqs) != 1 {
		t.Fatalf("%d requests (%v)", len(reqs), err)
	}
	last := reqs[0].Contents[len(reqs[0].Contents)-1]
	if got := last.Parts[0].Text; got != "Message for the parser: staged-diff" {
		t.Errorf("the model was sent %q", got)
	}
}
