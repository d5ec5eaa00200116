package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NPMServer returns the entry point of an npm MCP server package of test/mcp (say
// "server-everything"), to run with node. Without it (cd test/mcp && npm ci) or without
// node the test skips, unless AGENTLS_REQUIRE_NPM=1 (as on CI) makes that a failure.
func NPMServer(t testing.TB, pkg string) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(root, "test", "mcp", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	_, statErr := os.Stat(entry)
	_, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		msg := fmt.Sprintf("%s is not installed (run: cd test/mcp && npm ci; node is needed too)", pkg)
		if os.Getenv("AGENTLS_REQUIRE_NPM") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return entry
}

// moduleRoot returns the directory of go.mod above the test's working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
