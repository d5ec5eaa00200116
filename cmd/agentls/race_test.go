//go:build race

package main

// raceEnabled reports that the tests run under the race detector, and so should the
// agentls they start.
const raceEnabled = true
