package session

import (
	"os"
	"testing"

	"github.com/agentls/agentls/sandbox"
)

// TestMain gives the tests an empty home, so that the user's own Gemini CLI settings
// (~/.gemini/settings.json, read for the keys agentls shares with it) play no part.
func TestMain(m *testing.M) {
	// The test binary is the sandbox helper of the tests that contain commands.
	sandbox.Enter()
	home, err := os.MkdirTemp("", "agentls-session-home")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
