//go:build !windows

package hooks

import (
	"os/exec"
	"syscall"
)

// newGroup makes cmd the leader of a process group of its own, so that a hook that
// runs past its timeout is stopped with whatever it started.
func newGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group of a started cmd.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // gone already: nothing to do
	}
}
