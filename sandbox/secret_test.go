package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/sandbox"
)

// TestSecret: a path in the user's keys, agentls's configuration or the settings'
// hiddenPaths is secret (with the path holding it), whether or not a workspace root
// lies there (which leaves it readable to commands); other paths are not.
func TestSecret(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	cfg := t.TempDir()
	hidden := t.TempDir()
	ws := t.TempDir()
	keysRoot := filepath.Join(home, ".ssh", "project")
	box, err := sandbox.New(sandbox.Machine{}, sandbox.Config{Enabled: sandbox.EnabledOff, HiddenPaths: []string{hidden}},
		sandbox.Options{Roots: []string{ws, keysRoot}, ConfigDirs: []string{cfg}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(home, ".ssh"), filepath.Join(home, ".ssh")},
		{keysRoot, filepath.Join(home, ".ssh")},
		{filepath.Join(cfg, "agentls"), cfg},
		{hidden, hidden},
		{filepath.Join(hidden, "a", ".."), hidden},
		{ws, ""},
		{filepath.Join(home, ".sshx"), ""},
		{home, ""},
	} {
		if got := box.Secret(tc.path); got != tc.want {
			t.Errorf("Secret(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
