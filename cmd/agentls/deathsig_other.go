//go:build !linux

package main

import "os/exec"

// dieWithParent does nothing: only Linux kills a child with its parent
// (PR_SET_PDEATHSIG); elsewhere a command outlives a killed agentls sandbox.
func dieWithParent(*exec.Cmd) {}
