// Package reexec is imported, for its initialisation only, by cmd/agentls: when
// agentls was started as the sandbox helper, it contains and executes the command
// before agentls's own packages and most of its dependencies initialise (see package
// sandbox). Go initialises a package once its imports are, in import-path order, so
// the packages sandbox needs (go-landlock's psx among them) and about 140 others come
// first: a re-executed agentls costs some 6 ms per command where the small
// agentls-sandbox costs 3 (BENCHMARKS.md), which is why agentls prefers that.
package reexec

import "github.com/agentls/agentls/sandbox"

func init() {
	sandbox.InstallEnter()
}
