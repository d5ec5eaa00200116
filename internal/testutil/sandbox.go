package testutil

import (
	"os"
	"testing"

	"github.com/agentls/agentls/sandbox"
)

// Landlocked returns what this machine gives the sandbox, probed with the test binary
// as the helper (its TestMain calls sandbox.Enter), and the binary's path. It skips tb
// where the machine has no Landlock, and fails it instead under
// AGENTLS_REQUIRE_SANDBOX=1 (make test sets it), so that containment is never
// untested where it should run.
func Landlocked(tb testing.TB) (sandbox.Machine, string) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	m := sandbox.Probe(exe)
	if m.LandlockABI == 0 {
		if os.Getenv("AGENTLS_REQUIRE_SANDBOX") == "1" {
			tb.Fatalf("AGENTLS_REQUIRE_SANDBOX=1 but this machine has no Landlock: %s", m.LandlockError)
		}
		tb.Skip("this machine has no Landlock: ", m.LandlockError)
	}
	return m, exe
}
