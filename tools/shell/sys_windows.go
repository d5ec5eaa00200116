package shell

import (
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/windows"
)

// Windows has neither process groups to signal nor /proc: a command gets a console
// process group of its own, ending "the group" ends the command's process tree with
// taskkill (/T; /F for SIGKILL), and a persistent shell's working directory is not
// learnt from the kernel. Untested beyond compiling: agentls is built and tested on
// Linux.

// newGroup starts cmd in a process group of its own.
func newGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// signalGroup ends the process tree of pgid, its leader: asked to close for SIGTERM,
// forced for SIGKILL.
func signalGroup(pgid int, sig syscall.Signal) error {
	args := []string{"/T", "/PID", strconv.Itoa(pgid)}
	if sig == syscall.SIGKILL {
		args = append([]string{"/F"}, args...)
	}
	// taskkill fails for a tree that has ended already, which is what was wanted.
	_ = exec.Command("taskkill", args...).Run()
	return nil
}

// readFD reads from the handle fd once.
func readFD(fd uintptr, buf []byte) (int, error) { return syscall.Read(syscall.Handle(fd), buf) }

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

// is reports false: the directory is not known from the kernel here.
func (d kernelDir) is(string) bool { return false }

// read reports that the kernel cannot be asked for the shell's directory here.
func (w *cwdProbe) read() (kernelDir, bool) { return kernelDir{}, false }
