//go:build race

package rpc_test

// raceEnabled reports that the tests run under the race detector, and so should the
// server they start.
const raceEnabled = true
