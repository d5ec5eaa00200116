//go:build !linux

package search

import (
	"io/fs"
	"os"
)

// fileMTime returns the modification time (Unix nanoseconds) of the file at path, an
// entry of a walk, if it is a regular file or a symlink to one.
func fileMTime(path string, d fs.DirEntry) (int64, bool) {
	var fi fs.FileInfo
	var err error
	switch {
	case d.Type().IsRegular():
		fi, err = d.Info()
	case d.Type()&fs.ModeSymlink != 0:
		fi, err = os.Stat(path)
	default:
		return 0, false
	}
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	return fi.ModTime().UnixNano(), true
}
