//go:build !unix

package checkpoint

const (
	syscallNoFollow = 0
	syscallNonBlock = 0
)
