package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreCreatesPrivate: the store makes its folder 0700 and its files 0600.
func TestStoreCreatesPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "sessions")
	st := NewStore(dir)
	path := writeSession(t, st, "s1", record{Type: recSession, ID: "s1"})
	for p, want := range map[string]fs.FileMode{dir: 0o700, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %#o", p, fi.Mode(), err, want)
		}
	}
}

// TestStoreRefusesUnsafe: a session file or folder others may write, read or own is
// refused, for reading (resume, undo, listing) and writing alike, with an error that
// names it and the command that fixes it; a folder of the user's that others may only
// read is made private and used. The control is the same session left as the store
// made it.
func TestStoreRefusesUnsafe(t *testing.T) {
	const id = "s1"
	for _, tt := range []struct {
		name    string
		spoil   func(t *testing.T, dir, file string)
		want    string // in the error; "" when the session is used
		dirMode fs.FileMode
	}{
		{name: "control", dirMode: 0o700},
		{
			name:    "folder readable by others is tightened",
			spoil:   func(t *testing.T, dir, _ string) { chmod(t, dir, 0o755) },
			dirMode: 0o700,
		},
		{
			name:  "file readable by others",
			spoil: func(t *testing.T, _, file string) { chmod(t, file, 0o644) },
			want:  "can be read or written by others (mode 0644); agentls uses only session files that are private to you. Check that it is your session, then: chmod 600 FILE",
		},
		{
			name:  "file writable by the group",
			spoil: func(t *testing.T, _, file string) { chmod(t, file, 0o620) },
			want:  "FILE can be read or written by others (mode 0620)",
		},
		{
			name:  "folder writable by others",
			spoil: func(t *testing.T, dir, _ string) { chmod(t, dir, 0o777) },
			want:  "DIR can be written by others (mode 0777); agentls uses only session files that are private to you. Check that its files are your sessions, then: chmod 700 DIR",
		},
		{
			name: "file is a link",
			spoil: func(t *testing.T, _, file string) {
				target := filepath.Join(t.TempDir(), "elsewhere.jsonl")
				if err := os.Rename(file, target); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, file); err != nil {
					t.Fatal(err)
				}
			},
			want: "FILE is a symbolic link",
		},
		{
			name:  "file of another user",
			spoil: func(t *testing.T, _, file string) { chown(t, file) },
			want:  "FILE belongs to user id 65534, not to you",
		},
		{
			name:  "folder of another user",
			spoil: func(t *testing.T, dir, _ string) { chown(t, dir) },
			want:  "DIR belongs to user id 65534, not to you",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sessions")
			st := NewStore(dir)
			file := writeSession(t, st, id, record{Type: recSession, ID: id}, record{Type: recPrompt, Text: "hello"})
			if tt.spoil != nil {
				tt.spoil(t, dir, file)
			}
			want := strings.NewReplacer("FILE", file, "DIR", dir).Replace(tt.want)
			ops := map[string]func() error{
				"load":   func() error { _, err := st.load(id, discard()); return err },
				"append": func() error { return st.append(id, record{Type: recPrompt, Text: "more"}) },
				"roots":  func() error { _, err := st.Roots(id); return err },
				"list": func() error {
					infos, err := st.List()
					if err == nil && len(infos) != 1 {
						return fmt.Errorf("listed %d sessions", len(infos))
					}
					return err
				},
			}
			for op, run := range ops {
				err := run()
				var ue *unsafeError
				switch {
				case want == "" && err != nil:
					t.Errorf("%s: %v", op, err)
				case want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), want)):
					t.Errorf("%s: %v\nwant an error containing %q", op, err, want)
				}
			}
			if tt.dirMode != 0 {
				if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != tt.dirMode {
					t.Errorf("the folder's mode %v, %v; want %#o", fi.Mode(), err, tt.dirMode)
				}
			}
		})
	}
}

func chmod(t *testing.T, path string, mode fs.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// chown gives path to user id 65534 (nobody), which only root can do.
func chown(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
}
