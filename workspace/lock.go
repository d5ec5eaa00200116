package workspace

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
)

// LockPaths takes the workspace's locks of paths and returns the function that releases
// them, or returns ctx's error, holding none, if ctx ends first. Whoever writes files of
// the workspace from text it read (every scheduler of every session, and the editor's
// own tool runs) holds the locks of those files from the read to the write, so that of
// two edits of one file the later one is computed from what the earlier one wrote. The
// writers do not lock: a Writer may wait for the editor, which must stay free to report
// what it did.
//
// The paths are cleaned; duplicates are taken once, and all are taken in one order, so
// that two holders of overlapping sets never wait for each other. The locks are handed to
// waiters in the order they came. A lock is not reentrant: a holder that asks again for a
// path it holds waits for itself.
func (w *Workspace) LockPaths(ctx context.Context, paths ...string) (unlock func(), err error) {
	return w.locks.LockPaths(ctx, paths...)
}

// PathLocks is a lock per file path, taken as LockPaths describes. The zero value is
// ready for use. A Workspace holds the locks of its files; a PathLocks of one's own
// keeps apart only those who share it.
type PathLocks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	held chan struct{} // one slot: full while held
	refs int           // holders and waiters
}

// LockPaths takes the locks of paths; see (*Workspace).LockPaths.
func (l *PathLocks) LockPaths(ctx context.Context, paths ...string) (unlock func(), err error) {
	clean := make([]string, len(paths))
	for i, p := range paths {
		clean[i] = filepath.Clean(p)
	}
	slices.Sort(clean)
	clean = slices.Compact(clean)

	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*pathLock{}
	}
	entries := make([]*pathLock, len(clean))
	for i, p := range clean {
		e := l.m[p]
		if e == nil {
			e = &pathLock{held: make(chan struct{}, 1)}
			l.m[p] = e
		}
		e.refs++
		entries[i] = e
	}
	l.mu.Unlock()
	taken := 0
	var once sync.Once
	release := func() {
		once.Do(func() {
			for _, e := range entries[:taken] {
				<-e.held
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			for i, e := range entries {
				if e.refs--; e.refs == 0 {
					delete(l.m, clean[i])
				}
			}
		})
	}
	for _, e := range entries {
		select {
		case e.held <- struct{}{}:
			taken++
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		}
	}
	return release, nil
}

// refs returns how many hold or wait for the lock of path.
func (l *PathLocks) refs(path string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.m[filepath.Clean(path)]; e != nil {
		return e.refs
	}
	return 0
}
