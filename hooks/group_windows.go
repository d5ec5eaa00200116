package hooks

import "os/exec"

// newGroup does nothing on Windows: killGroup kills the process alone.
func newGroup(*exec.Cmd) {}

// killGroup kills a started cmd.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill() // gone already: nothing to do
	}
}
