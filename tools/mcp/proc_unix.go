//go:build unix

package mcp

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// ownProcessGroup starts cmd in a process group of its own, so that its whole group
// can be signalled: a server started through a wrapper (npx, uvx, a shell) is a
// grandchild of agentls, and the SDK signals only the wrapper, which may die and leave
// the server running.
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// terminateGroup sends SIGTERM to the process group of cmd, if it has one of its own.
func terminateGroup(cmd *exec.Cmd) {
	if pgid, ok := groupOf(cmd); ok {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
	}
}

// stopGroup ends what is left of the process group of cmd once its leader has ended:
// SIGTERM, then SIGKILL for what is still there after grace.
func stopGroup(cmd *exec.Cmd, grace time.Duration) {
	pgid, ok := groupOf(cmd)
	if !ok {
		return
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return // the group is empty: the usual case
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
			return
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

func groupOf(cmd *exec.Cmd) (int, bool) {
	if cmd == nil || cmd.Process == nil || cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		return 0, false
	}
	return cmd.Process.Pid, true
}
