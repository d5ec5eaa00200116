package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// IsolateHome makes HOME an empty temporary directory for the tests of a package, so
// that what they run reads none of the user's own settings (Gemini CLI's among them),
// and pins the Go caches, which default to places under HOME, where they are, so that
// binaries still build from the cache. It returns the function that removes the
// directory.
func IsolateHome(prefix string) (cleanup func()) {
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output(); err == nil {
		vals := strings.Split(strings.TrimSpace(string(out)), "\n")
		for i, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
			if i < len(vals) && vals[i] != "" {
				os.Setenv(name, vals[i])
			}
		}
	}
	home, err := os.MkdirTemp("", prefix+"-home")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	return func() { os.RemoveAll(home) }
}

// Binary is the agentls binary, built once for the tests of a package that drive the
// real command over real pipes.
type Binary struct {
	// Race builds it with the race detector.
	Race bool

	once      sync.Once
	path, dir string
	err       error
}

// Path returns the binary, building it the first time; a failed build fails tb.
func (b *Binary) Path(tb testing.TB) string {
	tb.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "agentls-test-bin")
		if err != nil {
			b.err = err
			return
		}
		b.dir, b.path = dir, filepath.Join(dir, "agentls")
		args := []string{"build", "-o", b.path}
		if b.Race {
			args = append(args, "-race")
		}
		build := exec.Command("go", append(args, "github.com/agentls/agentls/cmd/agentls")...)
		var stderr strings.Builder
		build.Stderr = &stderr
		if err := build.Run(); err != nil {
			b.err = fmt.Errorf("building agentls: %v\n%s", err, stderr.String())
		}
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

// Remove deletes the binary, if it was built.
func (b *Binary) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}
