package shell

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe enlarges the pipe f belongs to, if the system allows; the default size works,
// only more slowly, so a refusal is not an error.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
	})
}
