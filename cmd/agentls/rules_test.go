package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/settings"
)

// TestRules: `agentls rules` lists the saved rules of the user's and the workspace's
// settings with their files, and `agentls rules remove N` removes rule N, keeping the
// rest of the file; bad numbers are errors that change nothing.
func TestRules(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	user := filepath.Join(cfg, "agentls", "settings.json")
	ws := filepath.Join(root, ".agentls", "settings.json")
	for path, text := range map[string]string{
		user: `{"model": "m", "policy": {"rules": [{"toolName": "run_shell_command", "decision": "allow", "commandPrefix": ["git"]}, {"toolName": "web_fetch", "decision": "allow"}]}}`,
		ws:   `{"policy": {"rules": [{"toolName": "write_file", "decision": "deny"}]}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := agentlsWith(t, root, cfg, nil, "rules")
	lines := strings.Split(strings.TrimSpace(got.stdout), "\n")
	if got.code != 0 || len(lines) != 3 ||
		!strings.Contains(lines[0], "1") || !strings.Contains(lines[0], user) || !strings.Contains(lines[0], `allow run_shell_command for commands starting with ["git"]`) ||
		!strings.Contains(lines[1], "web_fetch") ||
		!strings.Contains(lines[2], "workspace") || !strings.Contains(lines[2], ws) || !strings.Contains(lines[2], "deny write_file") {
		t.Fatalf("rules: %+v", got)
	}
	for _, bad := range [][]string{{"rules", "remove", "4"}, {"rules", "remove", "0"}, {"rules", "remove", "x"}, {"rules", "drop", "1"}} {
		if got := agentlsWith(t, root, cfg, nil, bad...); got.code == 0 || got.stderr == "" {
			t.Errorf("%v: %+v", bad, got)
		}
	}
	got = agentlsWith(t, root, cfg, nil, "rules", "remove", "1")
	if got.code != 0 || !strings.Contains(got.stdout, "removed rule 1") || !strings.Contains(got.stdout, user) {
		t.Fatalf("rules remove 1: %+v", got)
	}
	rules, err := settings.FileRules(user)
	if err != nil || len(rules) != 1 || rules[0].ToolName != "web_fetch" {
		t.Fatalf("user rules after removal: %+v, %v", rules, err)
	}
	if data, _ := os.ReadFile(user); !strings.Contains(string(data), `"model": "m"`) {
		t.Errorf("the rest of the user's file was lost: %s", data)
	}
	got = agentlsWith(t, root, cfg, nil, "rules", "remove", "2", "--root", root)
	if got.code != 0 || !strings.Contains(got.stdout, ws) {
		t.Fatalf("rules remove 2: %+v", got)
	}
	if got := agentlsWith(t, t.TempDir(), t.TempDir(), nil, "rules"); got.code != 0 || !strings.Contains(got.stdout, "no policy rules") {
		t.Errorf("rules with none: %+v", got)
	}
}
