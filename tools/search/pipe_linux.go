package search

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// outputPipe returns a pipe for a child's output. The read end blocks in plain read
// calls (no poller round trips per chunk) and the pipe's kernel buffer is enlarged, so
// that rg seldom waits for the reader and the reader wakes up for big chunks rather
// than many small ones. The write end is for exec.Cmd.
func outputPipe() (io.ReadCloser, *os.File, error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, fmt.Errorf("pipe: %w", err)
	}
	const fSetPipeSz = 1031 // F_SETPIPE_SZ; failing (a limit on pipe sizes) keeps the default
	syscall.Syscall(syscall.SYS_FCNTL, uintptr(fds[0]), fSetPipeSz, 1<<20)
	return &rawFile{fd: fds[0]}, os.NewFile(uintptr(fds[1]), "|1"), nil
}
