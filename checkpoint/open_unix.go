//go:build unix

package checkpoint

import "syscall"

// A file is read without following a link (the link is recorded as such) and without
// waiting on a FIFO a command left.
const (
	syscallNoFollow = syscall.O_NOFOLLOW
	syscallNonBlock = syscall.O_NONBLOCK
)
