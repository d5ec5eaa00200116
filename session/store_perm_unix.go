//go:build !windows

package session

import (
	"io/fs"
	"os"
	"syscall"
)

// noFollow makes os.OpenFile refuse a symbolic link in the file's place.
const noFollow = syscall.O_NOFOLLOW

// permOf returns the permissions of fi's file.
func permOf(fi fs.FileInfo) fs.FileMode { return fi.Mode().Perm() }

// owner returns the user id owning fi's file, and whether that is the user agentls runs
// as.
func owner(fi fs.FileInfo) (uid int, ours bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), int(st.Uid) == os.Geteuid()
}
