package discovered

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitExited waits until the child pid has exited without reaping it, so that its
// process id, which is also its process group id, stays reserved until exec.Cmd.Wait
// reaps it.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			if err != nil {
				return fmt.Errorf("waiting for process %d: %w", pid, err)
			}
			return nil
		}
	}
}
