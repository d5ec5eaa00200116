//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package discovered

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitExited waits until the child pid has exited without reaping it, so that its
// process id, which is also its process group id, stays reserved until exec.Cmd.Wait
// reaps it. These systems have no waitid(WNOWAIT) in golang.org/x/sys/unix: a kqueue
// reports the exit (NOTE_EXIT), and a process the kernel no longer lets one watch
// (ESRCH) has exited already.
func waitExited(pid int) error {
	kq, err := unix.Kqueue()
	if err != nil {
		return fmt.Errorf("waiting for process %d: %w", pid, err)
	}
	defer unix.Close(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	changes := []unix.Kevent_t{ev}
	events := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, changes, events, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ESRCH):
			return nil
		case err != nil:
			return fmt.Errorf("waiting for process %d: %w", pid, err)
		case n == 1 && events[0].Flags&unix.EV_ERROR != 0 && syscall.Errno(events[0].Data) == syscall.ESRCH:
			return nil
		case n == 1 && events[0].Flags&unix.EV_ERROR != 0:
			return fmt.Errorf("waiting for process %d: %w", pid, syscall.Errno(events[0].Data))
		case n == 1:
			return nil
		}
		changes = nil // registered: wait on
	}
}
