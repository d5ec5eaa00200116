//go:build !unix

package search

import (
	"io"
	"os"
)

func openRead(path string) (io.ReadCloser, error) { return os.Open(path) }
