//go:build !linux

package search

import (
	"io"
	"os"
)

// outputPipe returns a pipe for a child's output: the read end and, for exec.Cmd, the
// write end.
func outputPipe() (io.ReadCloser, *os.File, error) { return os.Pipe() }
