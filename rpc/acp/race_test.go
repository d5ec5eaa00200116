//go:build race

package acp_test

// raceEnabled reports that the tests run under the race detector, and so should the
// agent they start.
const raceEnabled = true
