//go:build unix

package search

import (
	"io"
	"io/fs"
	"syscall"
)

// rawFile reads a file through its descriptor with plain system calls. os.File would
// also try to register every descriptor with the runtime's poller (which regular files
// refuse), and over the thousands of files of a search those wasted calls cost more
// than the reads.
type rawFile struct{ fd int }

func openRead(path string) (*rawFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return &rawFile{fd: fd}, nil
	}
}

func (f *rawFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *rawFile) Close() error { return syscall.Close(f.fd) }
