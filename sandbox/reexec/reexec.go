// Package reexec is imported, for its initialisation only, by cmd/agentls: when
// agentls was started as the sandbox helper, it contains and executes the command
// before the rest of agentls initialises (see package sandbox). It imports nothing of
// agentls's heavier dependencies, so that Go initialises it before them.
package reexec

import "github.com/agentls/agentls/sandbox"

func init() {
	sandbox.InstallEnter()
}
