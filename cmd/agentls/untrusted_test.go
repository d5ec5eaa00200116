package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileSetup returns a parent folder holding a workspace ws whose settings start an
// MCP server and run a discovery command, each of which leaves a marker file in ws, a
// symbolic link to ws, and an empty user configuration directory.
func hostileSetup(t *testing.T) (parent, ws, link, cfg string) {
	t.Helper()
	parent = workspaceDir(t)
	ws = filepath.Join(parent, "ws")
	discover := `#!/bin/sh
touch discovery-ran
echo '[{"name": "project_lint", "description": "Lints the project.", "parameters": {"type": "object", "properties": {}}}]'
`
	settings := `{
		"mcpServers": {"marker": {"command": "sh", "args": ["-c", "touch mcp-ran; exit 1"]}},
		"tools": {"discoveryCommand": "./discover.sh", "callCommand": "./call.sh"}
	}`
	for name, content := range map[string]string{
		"discover.sh":            discover,
		"call.sh":                "#!/bin/sh\necho linted\n",
		".agentls/settings.json": settings,
	} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link = filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	return parent, ws, link, t.TempDir()
}

// markers reports which of the workspace's commands ran since the last call, and
// removes their markers.
func markers(t *testing.T, ws string) (mcp, discovery bool) {
	t.Helper()
	exists := func(name string) bool {
		p := filepath.Join(ws, name)
		_, err := os.Stat(p)
		os.Remove(p)
		return err == nil
	}
	return exists("mcp-ran"), exists("discovery-ran")
}

// TestUntrustedWorkspaceRunsNothing: opening a workspace whose settings name an MCP
// server and a discovery command runs neither until the user trusts the folder, and
// the built-in tools work meanwhile.
func TestUntrustedWorkspaceRunsNothing(t *testing.T) {
	parent, ws, link, cfg := hostileSetup(t)
	check := func(dir string, wantTrusted bool) {
		t.Helper()
		got := agentlsWith(t, dir, cfg, nil, "tools")
		if got.code != 0 {
			t.Fatalf("agentls tools in %s: exit %d\n%s", dir, got.code, got.stderr)
		}
		mcpRan, discoveryRan := markers(t, ws)
		listed := strings.Contains(got.stdout, "project_lint")
		if mcpRan != wantTrusted || discoveryRan != wantTrusted || listed != wantTrusted {
			t.Fatalf("in %s (trusted %v): MCP server started %v, discovery ran %v, discovered tool listed %v\nstdout: %s\nstderr: %s",
				dir, wantTrusted, mcpRan, discoveryRan, listed, got.stdout, got.stderr)
		}
		if !strings.Contains(got.stdout, "read_file") {
			t.Errorf("built-in tools missing:\n%s", got.stdout)
		}
		note := strings.Contains(got.stderr, "skipped because the folder is untrusted") &&
			strings.Contains(got.stderr, "mcpServers.marker") && strings.Contains(got.stderr, "agentls trust "+ws)
		if note == wantTrusted {
			t.Errorf("trusted %v, but the untrusted note is present = %v:\n%s", wantTrusted, note, got.stderr)
		}
	}

	check(ws, false)
	check(link, false)
	if ran, _ := shellRuns(t, ws, cfg); ran {
		t.Fatal("a shell command ran without consent")
	}

	mustTrust(t, ws, cfg)
	check(ws, true)
	check(link, true) // the link resolves to the same folder, so the same decision
	mustTrust(t, ws, cfg, "--revoke")
	check(ws, false)

	mustTrust(t, parent, cfg, "--parent")
	check(ws, true)
	check(link, true)
	mustTrust(t, parent, cfg, "--revoke")
	check(link, false)
}
