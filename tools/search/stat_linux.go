package search

import (
	"io/fs"
	"syscall"
)

// fileMTime returns the modification time (Unix nanoseconds) of the file at path, an
// entry of a walk, if it is a regular file or a symlink to one. It stats into a stack
// value: a glob may stat tens of thousands of files, and os.Lstat allocates for each.
func fileMTime(path string, d fs.DirEntry) (int64, bool) {
	var st syscall.Stat_t
	var err error
	switch {
	case d.Type().IsRegular():
		err = syscall.Lstat(path, &st)
	case d.Type()&fs.ModeSymlink != 0:
		err = syscall.Stat(path, &st)
	default:
		return 0, false
	}
	if err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return 0, false
	}
	return st.Mtim.Nano(), true
}
