package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// TestMCPServerFromUserSettings: an MCP server of the user's settings (the npm
// server-everything over stdio) lists its tools in agentls tools, and agentls run calls
// one through the scheduler, with the MCP confirmation refused without a terminal.
func TestMCPServerFromUserSettings(t *testing.T) {
	entry := testutil.NPMServer(t, "server-everything")
	root, cfg := workspaceDir(t), t.TempDir()
	settings := `{"mcpServers": {"everything": {"command": "node", "args": ["` + entry + `", "stdio"]}}}`
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	got := agentlsWith(t, root, cfg, nil, "tools")
	if got.code != 0 || !strings.Contains(got.stdout, "everything__echo") || !strings.Contains(got.stdout, "mcp") {
		t.Fatalf("agentls tools: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
	}

	got = agentlsWith(t, root, cfg, nil, "run", "everything__echo", `{"message": "hi there"}`, "--json")
	var res tools.CallResult
	json.Unmarshal([]byte(got.stdout), &res)
	if res.Status == tools.StatusSuccess || !strings.Contains(res.Output, "needs approval") || !strings.Contains(got.stderr, "no terminal") {
		t.Errorf("an untrusted MCP server's tool ran without consent: %+v\n%s", res, got.stderr)
	}
	got = agentlsWith(t, root, cfg, nil, "run", "everything__echo", `{"message": "hi there"}`, "--json", "--approval-mode", "yolo")
	json.Unmarshal([]byte(got.stdout), &res)
	if got.code != 0 || res.Status != tools.StatusSuccess || !strings.Contains(res.Output, "hi there") {
		t.Errorf("echo: exit %d, %+v\n%s", got.code, res, got.stderr)
	}
}
