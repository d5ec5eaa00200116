//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
	"runtime"
)

// Enter does nothing here: no sandbox is built for this system yet.
func Enter() {}

// Probe reports that this system has nothing agentls can contain commands with.
func Probe(self string) Machine {
	return Machine{OS: runtime.GOOS, LandlockError: "Landlock is Linux's", UserNamespacesError: "agentls contains commands on Linux only, for now"}
}

// Wrap leaves cmd as it is, or refuses it where containment is required.
func (s *Sandbox) Wrap(cmd *exec.Cmd) error {
	if s.refuse != "" {
		return errors.New(s.refuse)
	}
	return nil
}
