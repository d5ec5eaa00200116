package discovered

import (
	"fmt"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/windows"
)

// Windows has no process groups to signal: a command gets a console process group of
// its own, and ending "the group" ends the command's process tree with taskkill (/T;
// /F for SIGKILL). Untested beyond compiling: agentls is built and tested on Linux.

// newGroup starts cmd in a process group of its own.
func newGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// signalGroup ends the process tree of pid: asked to close for SIGTERM, forced for
// SIGKILL.
func signalGroup(pid int, sig syscall.Signal) error {
	args := []string{"/T", "/PID", strconv.Itoa(pid)}
	if sig == syscall.SIGKILL {
		args = append([]string{"/F"}, args...)
	}
	// taskkill fails for a tree that has ended already, which is what was wanted.
	_ = exec.Command("taskkill", args...).Run()
	return nil
}

// signalName returns the conventional name of sig, such as SIGTERM.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return "signal " + strconv.Itoa(int(sig))
}

// waitExited waits until the process pid has exited; its handle, which exec.Cmd
// holds, keeps its id from being reused until exec.Cmd.Wait.
func waitExited(pid int) error {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("waiting for process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	if _, err := windows.WaitForSingleObject(h, windows.INFINITE); err != nil {
		return fmt.Errorf("waiting for process %d: %w", pid, err)
	}
	return nil
}
