package session

import "io/fs"

// On Windows the privacy of the store is that of the user's profile folder, whose
// access control lists Go's file modes do not show: the checks of owner and mode pass,
// and a link in a file's place is caught only by its error (isLink). Untested beyond
// compiling: agentls is built and tested on Linux.

// noFollow adds nothing to os.OpenFile's flags: Windows has no O_NOFOLLOW.
const noFollow = 0

// permOf returns the permissions the store wants, which Windows does not show.
func permOf(fi fs.FileInfo) fs.FileMode {
	if fi.IsDir() {
		return 0o700
	}
	return 0o600
}

// owner reports the user agentls runs as: Windows files have no user id.
func owner(fs.FileInfo) (uid int, ours bool) { return 0, true }
