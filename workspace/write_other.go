//go:build !unix || aix

package workspace

import "context"

// lockFile would lock the file at path against other writers; this system has no
// flock(2), so writers rely on their comparison alone (see DiskWriter).
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	return func() {}, nil
}

// processGone would report whether no process has the id pid; without a portable way
// to tell, every process counts as running and no temporary file is removed as orphaned.
func processGone(pid int) bool {
	return false
}
