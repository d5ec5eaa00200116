//go:build !windows

package shell

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// newGroup makes cmd the leader of a process group of its own.
func newGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group pgid; a group that is gone is no error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("sending %v to process group %d: %w", sig, pgid, err)
	}
	return nil
}

// readFD reads from the descriptor fd once.
func readFD(fd uintptr, buf []byte) (int, error) { return syscall.Read(int(fd), buf) }

// signalName returns the conventional name of sig, such as SIGTERM.
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return "signal " + strconv.Itoa(int(sig))
}

// is reports whether the directory at path is the one d names.
func (d kernelDir) is(path string) bool {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false
	}
	return d.known && uint64(st.Dev) == d.dev && st.Ino == d.ino
}

// read returns the shell's working directory now.
func (w *cwdProbe) read() (kernelDir, bool) {
	if w.proc == nil {
		return kernelDir{}, false
	}
	fd := int(w.proc.Fd())
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "cwd", buf)
	if err != nil || n == len(buf) {
		return kernelDir{}, false
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, "cwd", &st, 0); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return kernelDir{}, false
	}
	d := kernelDir{known: true, path: string(buf[:n]), dev: uint64(st.Dev), ino: st.Ino}
	if st.Nlink == 0 {
		// Removed; the kernel names it with " (deleted)" after the name it had.
		d.gone, d.path = true, strings.TrimSuffix(d.path, " (deleted)")
	}
	return d, true
}
