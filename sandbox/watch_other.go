//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
)

// Watch is a watched command's link to its [Watcher]; on this system nothing is
// watched.
type Watch struct{}

// Watch reports that commands cannot be watched on this system.
func (s *Sandbox) Watch(cmd *exec.Cmd, w Watcher) (*Watch, error) {
	return nil, errors.New("commands are watched on Linux only")
}

// Started does nothing here.
func (wt *Watch) Started() {}

// Abandon does nothing here.
func (wt *Watch) Abandon() {}

// Stop reports that nothing was watched.
func (wt *Watch) Stop() error { return errors.New("commands are watched on Linux only") }
