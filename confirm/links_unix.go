//go:build unix

package confirm

import (
	"io/fs"
	"syscall"
)

// hardLinks returns how many names the file of fi has.
func hardLinks(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
