package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// A session file holds what the person asked, what the model answered and every edit
// with the file's text before it, which `agentls undo` writes back. So the store keeps
// it private: files 0600 in a folder 0700, both the user's own. A file or folder
// someone else owns, or that others may write, is refused: the undo records in it may
// not be agentls's. A folder of the user's own that others may only read or enter
// (0755, as a umask or an earlier tool may have made it) is tightened to 0700 without
// a word, since nobody but the user could have put anything in it.

// unsafeError is the error of a session file or folder the store will not use.
type unsafeError struct {
	path, problem, fix string
}

func (e *unsafeError) Error() string {
	return fmt.Sprintf("session store: %s %s; agentls uses only session files that are private to you. %s",
		e.path, e.problem, e.fix)
}

// checkDir checks the store's folder, and tightens it to 0700 when it is the user's and
// others may read or enter it but not write in it. A folder that does not exist yet is
// fine: append creates it 0700.
func (st *Store) checkDir() error {
	fi, err := os.Stat(st.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("session store: %s is not a folder", st.dir)
	}
	if uid, ours := owner(fi); !ours {
		return &unsafeError{st.dir, fmt.Sprintf("belongs to user id %d, not to you", uid),
			fmt.Sprintf("Move it aside (agentls makes a new one), or if it is yours: chown -R \"$USER\" %s", st.dir)}
	}
	perm := permOf(fi)
	switch {
	case perm&0o022 != 0:
		return &unsafeError{st.dir, fmt.Sprintf("can be written by others (mode %#o)", perm),
			fmt.Sprintf("Check that its files are your sessions, then: chmod 700 %s", st.dir)}
	case perm&0o077 != 0:
		if err := os.Chmod(st.dir, 0o700); err != nil {
			return fmt.Errorf("session store: making %s private: %w", st.dir, err)
		}
	}
	return nil
}

// checkFile checks an open session file: a regular file of the user's that nobody
// else may read or write.
func checkFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	name := f.Name()
	if !fi.Mode().IsRegular() {
		return &unsafeError{name, "is not a regular file", "Remove it."}
	}
	if uid, ours := owner(fi); !ours {
		return &unsafeError{name, fmt.Sprintf("belongs to user id %d, not to you", uid),
			fmt.Sprintf("Remove it, or if it is yours: chown \"$USER\" %s && chmod 600 %s", name, name)}
	}
	if perm := permOf(fi); perm&0o077 != 0 {
		return &unsafeError{name, fmt.Sprintf("can be read or written by others (mode %#o)", perm),
			fmt.Sprintf("Check that it is your session, then: chmod 600 %s", name)}
	}
	return nil
}

// openFile opens the session file of id with flag (creating it 0600 with O_CREATE),
// after checking the store's folder, and checks the file it opened. A link in the
// store's place of the file is not followed.
func (st *Store) openFile(id string, flag int) (*os.File, error) {
	if err := st.checkDir(); err != nil {
		return nil, err
	}
	return st.openChecked(id, flag)
}

// openChecked is openFile in a store whose folder was just checked (checkDir).
func (st *Store) openChecked(id string, flag int) (*os.File, error) {
	if flag&os.O_CREATE != 0 {
		if err := os.MkdirAll(st.dir, 0o700); err != nil {
			return nil, fmt.Errorf("session store: %w", err)
		}
	}
	f, err := os.OpenFile(st.path(id), flag|noFollow, 0o600)
	if err != nil {
		if isLink(st.path(id)) {
			return nil, &unsafeError{st.path(id), "is a symbolic link", "Remove it."}
		}
		return nil, err
	}
	if err := checkFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// isLink reports whether path is a symbolic link.
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}
