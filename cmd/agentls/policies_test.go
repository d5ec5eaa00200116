package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
)

// TestGeminiPolicyFiles: a Gemini CLI user's own policy files apply as they do in
// Gemini CLI. An allow rule of ~/.gemini/policies lets a shell command run without a
// terminal to ask on (without it the call is refused: nobody to ask); a deny rule of the
// workspace's .gemini/policies refuses a command even in yolo mode, with its
// denyMessage (without it the command runs).
func TestGeminiPolicyFiles(t *testing.T) {
	ws, cfg := workspaceDir(t), t.TempDir()
	run := func(args ...string) outcome {
		return agentlsWith(t, ws, cfg, nil, append([]string{"run", "run_shell_command"}, args...)...)
	}
	if got := run(`{"command":"touch allowed"}`); got.code == 0 || !strings.Contains(got.stderr, "no terminal") || exists(filepath.Join(ws, "allowed")) {
		t.Fatalf("without a policy: exit %d\n%s", got.code, got.stderr)
	}
	if got := run(`{"command":"touch denied"}`, "--approval-mode", "yolo"); got.code != 0 || !exists(filepath.Join(ws, "denied")) {
		t.Fatalf("yolo without a policy: exit %d\n%s", got.code, got.stderr)
	}
	os.Remove(filepath.Join(ws, "denied"))

	testutil.WriteFiles(t, cfg, map[string]string{".gemini/policies/mine.toml": `[[rule]]
toolName = "run_shell_command"
commandPrefix = "touch allowed"
decision = "allow"
priority = 100
`})
	testutil.WriteFiles(t, ws, map[string]string{".gemini/policies/team.toml": `[[rule]]
toolName = "run_shell_command"
commandPrefix = "touch denied"
decision = "deny"
denyMessage = "The team keeps that file out."
`})
	if got := run(`{"command":"touch allowed"}`); got.code != 0 || !exists(filepath.Join(ws, "allowed")) {
		t.Errorf("the user's allow rule: exit %d\n%s", got.code, got.stderr)
	}
	if got := run(`{"command":"touch denied"}`, "--approval-mode", "yolo"); got.code == 0 || exists(filepath.Join(ws, "denied")) ||
		!strings.Contains(got.stdout+got.stderr, "The team keeps that file out.") {
		t.Errorf("the workspace's deny rule: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
}
