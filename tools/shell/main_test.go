package shell

import (
	"os"
	"testing"

	"github.com/agentls/agentls/sandbox"
)

// TestMain makes the test binary its own sandbox helper, as agentls is.
func TestMain(m *testing.M) {
	sandbox.Enter()
	os.Exit(m.Run())
}
