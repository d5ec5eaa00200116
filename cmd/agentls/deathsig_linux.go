package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has cmd killed when the thread that starts it ends (agentls's exit).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
