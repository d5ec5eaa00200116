//go:build !windows

package session

import (
	"errors"
	"os"
	"syscall"
)

// lockShared takes a shared lock on f, waiting for an exclusive one (a Delete, which
// holds it only while it unlinks the file) to go.
func lockShared(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// lockExclusive takes the exclusive lock on f without waiting; it fails with
// ErrOpenElsewhere while a shared lock is held on the file.
func lockExclusive(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrOpenElsewhere
	}
	return err
}

// unlinked reports whether f's file has been removed from its folder.
func unlinked(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
