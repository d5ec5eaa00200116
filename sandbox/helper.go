package sandbox

import (
	"os"
	"path/filepath"
)

// HelperName is the file name of the small helper program that agentls prefers to
// itself when it lies beside agentls: it starts several milliseconds faster.
const HelperName = "agentls-sandbox"

// enterInstalled records that this program calls Enter while it initialises (package
// sandbox/reexec sets it, once, before main), so that its own executable can be the
// helper. It is written only during package initialisation.
var enterInstalled bool

// InstallEnter is for package sandbox/reexec: it calls Enter and records that this
// program is a helper.
func InstallEnter() {
	Enter()
	enterInstalled = true
}

// Helper returns the program to run as the sandbox helper: agentls-sandbox beside this
// executable, else this executable when it is agentls (it imports package
// sandbox/reexec); "" when neither, as in a test binary.
func Helper() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return ""
	}
	beside := filepath.Join(filepath.Dir(exe), HelperName)
	if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return beside
	}
	if enterInstalled {
		return exe
	}
	return ""
}
