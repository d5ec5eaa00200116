package sandbox_test

import (
	"os"
	"testing"

	"github.com/agentls/agentls/sandbox"
)

// TestMain makes the test binary its own sandbox helper, as agentls is.
func TestMain(m *testing.M) {
	sandbox.Enter()
	if dir := os.Getenv(envInner); dir != "" {
		innerWatch(dir)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
