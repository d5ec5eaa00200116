//go:build linux

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// openCount returns how many of this process's file descriptors name the file at path.
func openCount(t *testing.T, path string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}

// tryLock reports whether an exclusive flock on the file at path could be taken now,
// releasing it at once.
func tryLock(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if err != unix.EWOULDBLOCK {
			t.Fatal(err)
		}
		return false
	}
	return true
}

// A writer waiting for the lock of a file that another writer then replaces by a rename
// must end up holding the lock of the new file, which is the one the path names and the
// next writer will lock: holding that of the old one would let it and the next writer
// in together.
func TestLockFollowsRename(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unlockOld, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		unlock func()
		err    error
	}
	got := make(chan result, 1)
	go func() {
		unlock, err := lockFile(context.Background(), path)
		got <- result{unlock, err}
	}()
	// Wait until the waiter has the old file open, so that it is waiting on its lock.
	for openCount(t, path) < 2 {
		runtime.Gosched()
	}
	if err := replaceFile(path, []byte("new\n"), 0, 0o644); err != nil {
		t.Fatal(err)
	}
	unlockOld()
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	if tryLock(t, path) {
		t.Error("after the rename the waiter holds no lock on the file the path names")
	}
	r.unlock()
	if !tryLock(t, path) {
		t.Error("the file is still locked after the waiter released its lock")
	}
}
