//go:build unix && !aix

package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Waiting for a file's lock polls (a blocking flock(2) cannot be cancelled): first
// after lockPollMin, then at twice the interval each time up to lockPollMax, and gives
// up after about maxLockWait in all. The lock is held only across a read, a comparison
// and the write of a temporary file, so a wait that long means a holder that is stopped
// (a suspended process) rather than slow.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 32 * time.Millisecond
	maxLockWait = 30 * time.Second
)

// lockFile takes an exclusive advisory lock on the existing regular file at path, an
// absolute path with no symlink in it, and returns the function that releases it. The
// lock is a flock(2) lock on an open file description of its own, so it excludes other
// processes and other goroutines of this one alike.
//
// Writers replace the file by renaming another over it, after which the path names a
// new file and a lock on the old one protects nothing: a lock taken on a file the path
// no longer names is dropped and the new one locked instead. An error matching
// fs.ErrNotExist reports the file removed meanwhile. Where the file system has no such
// locks, or gives them only to a writer of the file that this process may not be,
// lockFile returns without one: the writer's comparison then still catches changes made
// before it.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	mode := os.O_RDONLY
	for range maxRounds {
		// O_NONBLOCK: should a named pipe have taken the file's place, opening it must
		// not wait for a writer to come.
		f, err := os.OpenFile(path, mode|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			if mode != os.O_RDONLY && (errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS)) {
				return func() {}, nil // see errNeedsWrite: no lock to be had
			}
			return nil, err
		}
		if err := flockWait(ctx, f); err != nil {
			f.Close()
			switch {
			case errors.Is(err, errNeedsWrite) && mode == os.O_RDONLY:
				mode = os.O_RDWR
				continue
			case errors.Is(err, errNoFlock), errors.Is(err, errNeedsWrite):
				return func() {}, nil
			}
			return nil, err
		}
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		now, err := os.Stat(path)
		if err == nil && os.SameFile(held, now) {
			return func() { f.Close() }, nil
		}
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return nil, errors.New("the file was replaced too often while waiting for its lock")
}

// errNoFlock reports a file system without flock(2) locks.
var errNoFlock = errors.New("the file system does not support flock")

// errNeedsWrite reports a file system where an exclusive flock(2) lock needs the file
// open for writing: NFS, where Linux emulates flock with a POSIX lock. The file is then
// opened for writing (nothing is written to it), and a file that cannot be is written
// without a lock.
var errNeedsWrite = errors.New("an exclusive lock needs the file open for writing")

// flockWait takes an exclusive flock(2) lock on f, waiting while another holds it,
// until ctx ends or maxLockWait has passed.
func flockWait(ctx context.Context, f *os.File) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	waited := time.Duration(0)
	for poll := lockPollMin; ; poll = min(2*poll, lockPollMax) {
		var ferr error
		if err := conn.Control(func(fd uintptr) {
			for {
				ferr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
				if ferr != unix.EINTR {
					return
				}
			}
		}); err != nil {
			return err
		}
		switch {
		case ferr == nil:
			return nil
		case ferr == unix.ENOLCK || ferr == unix.EOPNOTSUPP || ferr == unix.ENOSYS:
			return errNoFlock
		case ferr == unix.EBADF:
			return errNeedsWrite
		case ferr != unix.EWOULDBLOCK:
			return fmt.Errorf("flock: %w", ferr)
		}
		if waited >= maxLockWait {
			return fmt.Errorf("another process has held its lock for over %v", maxLockWait)
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		waited += poll
	}
}

// processGone reports whether no process has the id pid. A process of another user
// counts as running.
func processGone(pid int) bool {
	return unix.Kill(pid, 0) == unix.ESRCH
}
