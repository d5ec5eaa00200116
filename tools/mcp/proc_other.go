//go:build !unix

package mcp

import (
	"os/exec"
	"time"
)

// ownProcessGroup does nothing where process groups are not available.
func ownProcessGroup(*exec.Cmd) {}

// terminateGroup does nothing where process groups are not available.
func terminateGroup(*exec.Cmd) {}

// stopGroup does nothing where process groups are not available.
func stopGroup(*exec.Cmd, time.Duration) {}
