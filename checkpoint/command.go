package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentls/agentls/workspace"
)

// Kind is what a path is.
type Kind string

// The kinds of State.
const (
	Absent  Kind = "absent"
	File    Kind = "file"
	Dir     Kind = "dir"
	Symlink Kind = "symlink"
)

// State is what a path held at one moment.
type State struct {
	Kind Kind        `json:"kind"`
	Mode fs.FileMode `json:"mode,omitempty"` // permission bits
	Size int64       `json:"size,omitempty"`
	// Hash is a file's content's SHA-256, by which the Store holds it.
	Hash string `json:"hash,omitempty"`
	// Link is a symlink's target.
	Link string `json:"link,omitempty"`
	// Lost says why a file's content was not kept (a file over the size limit): the
	// state can be compared with, not restored.
	Lost string `json:"lost,omitempty"`
	// Text, when set, is a file's text held by the record itself rather than the
	// store: the edit tools record their files so.
	Text *string `json:"-"`
}

// Same reports whether a and b are the same content, kind and mode. A state holding
// its text is compared by it.
func (a State) Same(b State) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case File:
		if a.Text != nil && b.Text != nil {
			return *a.Text == *b.Text
		}
		return a.Hash != "" && a.Hash == b.Hash && a.Mode == b.Mode
	case Symlink:
		return a.Link == b.Link
	case Dir:
		return a.Mode == b.Mode
	}
	return true
}

// Change is what one command did to one path.
type Change struct {
	Path string `json:"path"`
	// From is where a renamed file was: Before is what it held there, and From is
	// absent after.
	From   string `json:"from,omitempty"`
	Before State  `json:"before"`
	After  State  `json:"after"`
}

// Record is what one command changed in the workspace.
type Record struct {
	// Command is the command line.
	Command string   `json:"command"`
	Changes []Change `json:"changes,omitempty"`
	// LeftOut counts the ignored paths the command changed, which were not recorded;
	// Examples names a few.
	LeftOut  int      `json:"leftOut,omitempty"`
	Examples []string `json:"examples,omitempty"`
	// Unrecorded, when set, says why the command's changes were not recorded at all.
	Unrecorded string `json:"unrecorded,omitempty"`
}

// Recorder makes the checkpoints of one workspace's commands. Its records go to the
// function given to NewRecorder, in the order the commands end.
type Recorder struct {
	store *Store
	ws    *workspace.Workspace
	done  func(Record)

	mu        sync.Mutex
	ignorers  map[string]*workspace.Ignorer // by root
	maxTree   int
	maxListed int
}

// NewRecorder returns a Recorder keeping contents in store, for the roots of ws, that
// hands each command's Record to done.
func NewRecorder(store *Store, ws *workspace.Workspace, done func(Record)) *Recorder {
	return &Recorder{store: store, ws: ws, done: done, ignorers: map[string]*workspace.Ignorer{}, maxTree: 20000, maxListed: 5}
}

// Store returns the store the Recorder keeps contents in.
func (r *Recorder) Store() *Store { return r.store }

// Unrecorded records that command ran without being watched, and why.
func (r *Recorder) Unrecorded(command, why string) {
	r.done(Record{Command: command, Unrecorded: why})
}

// Command starts the checkpoint of one command. Its Changing is a sandbox.Watcher's.
func (r *Recorder) Command(command string) *Command {
	return &Command{r: r, command: command, before: map[string]State{}}
}

// ignorer returns the Ignorer of the root holding path, or nil when no root does.
func (r *Recorder) ignorer(path string) *workspace.Ignorer {
	for _, root := range r.ws.Roots() {
		if path == root || strings.HasPrefix(path, root+string(filepath.Separator)) {
			r.mu.Lock()
			defer r.mu.Unlock()
			ig, ok := r.ignorers[root]
			if !ok {
				ig = r.ws.NewIgnorer(root, workspace.DefaultWalk())
				r.ignorers[root] = ig
			}
			return ig
		}
	}
	return nil
}

// Command is the checkpoint of one running command.
type Command struct {
	r       *Recorder
	command string

	mu       sync.Mutex
	before   map[string]State
	order    []string
	ignored  map[string]bool
	finished bool
}

// Changing implements sandbox.Watcher: it keeps what path holds before the command
// changes it, the first time the command changes it.
func (c *Command) Changing(path string, tree bool) {
	path = filepath.Clean(path)
	ig := c.r.ignorer(path)
	if ig == nil || slices.Contains(c.r.ws.Roots(), path) {
		return // outside the workspace, or a root itself
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return
	}
	if _, seen := c.before[path]; seen || c.ignored[path] {
		return
	}
	fi, err := os.Lstat(path)
	if ig.Ignored(path, err == nil && fi.IsDir()) {
		c.noteIgnored(path)
		return
	}
	st := c.capture(path, fi, err)
	c.before[path] = st
	c.order = append(c.order, path)
	if tree && st.Kind == Dir {
		c.captureTree(path, ig)
	}
}

// captureTree keeps what every path under dir holds, before a rename moves it.
func (c *Command) captureTree(dir string, ig *workspace.Ignorer) {
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		if ig.Ignored(p, d.IsDir()) {
			c.noteIgnored(p)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if _, seen := c.before[p]; seen {
			return nil
		}
		if n++; n > c.r.maxTree {
			c.before[dir] = State{Kind: Dir, Mode: c.before[dir].Mode, Lost: fmt.Sprintf("a folder of more than %d files", c.r.maxTree)}
			return filepath.SkipAll
		}
		fi, err := os.Lstat(p)
		c.before[p] = c.capture(p, fi, err)
		c.order = append(c.order, p)
		return nil
	})
}

// capture returns what path holds, keeping a file's content in the store.
func (c *Command) capture(path string, fi fs.FileInfo, err error) State {
	st := stateOf(path, fi, err)
	if st.Kind == File && st.Lost == "" {
		hash, lost, err := c.r.store.keep(path, fi.Size())
		switch {
		case err != nil:
			st.Lost = "it could not be read: " + err.Error()
		case lost != "":
			// Not kept, but hashed, so that Finish can tell whether it changed.
			st.Lost = lost
			st.Hash, _ = hashFile(path)
		default:
			st.Hash = hash
		}
	}
	return st
}

// stateOf returns the state of path from its Lstat, without its content.
func stateOf(path string, fi fs.FileInfo, err error) State {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return State{Kind: Absent}
	case err != nil:
		return State{Kind: Absent, Lost: err.Error()}
	case fi.Mode().IsRegular():
		return State{Kind: File, Mode: fi.Mode().Perm(), Size: fi.Size()}
	case fi.IsDir():
		return State{Kind: Dir, Mode: fi.Mode().Perm()}
	case fi.Mode()&fs.ModeSymlink != 0:
		link, err := os.Readlink(path)
		if err != nil {
			return State{Kind: Symlink, Lost: err.Error()}
		}
		return State{Kind: Symlink, Link: link}
	}
	return State{Kind: File, Mode: fi.Mode().Perm(), Lost: "not a regular file (" + fi.Mode().Type().String() + ")"}
}

// Current returns what path holds now, with a file's hash but its content not kept.
func Current(path string) State {
	fi, err := os.Lstat(path)
	st := stateOf(path, fi, err)
	if st.Kind == File && st.Lost == "" {
		if h, err := hashFile(path); err != nil {
			st.Lost = err.Error()
		} else {
			st.Hash = h
		}
	}
	return st
}

// Finish ends the checkpoint once the command has ended: it compares every path the
// command was about to change with what it holds now, and hands the Record to the
// Recorder's function. Changes made afterwards (by processes the command left running)
// are not recorded.
func (c *Command) Finish() Record {
	c.mu.Lock()
	c.finished = true
	rec := Record{Command: c.command}
	after := map[string]State{}
	var changes []Change
	add := func(p string, before State) {
		now := Current(p)
		after[p] = now
		if !before.Same(now) {
			changes = append(changes, Change{Path: p, Before: before, After: now})
		}
	}
	for _, p := range c.order {
		before := c.before[p]
		ig := c.r.ignorer(p)
		if before.Kind == Absent && ig.Ignored(p, true) {
			// Absent, it was judged as a file; an ignored folder it made is left out.
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				c.noteIgnored(p)
				continue
			}
		}
		add(p, before)
		// A folder the command made (or moved here) holds files it never named.
		if before.Kind == Absent && after[p].Kind == Dir {
			filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
				if err != nil || q == p {
					return nil
				}
				if ig.Ignored(q, d.IsDir()) {
					c.noteIgnored(q)
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if _, seen := c.before[q]; !seen {
					if _, done := after[q]; !done {
						add(q, State{Kind: Absent})
					}
				}
				return nil
			})
		}
	}
	ignored := slices.Sorted(maps.Keys(c.ignored))
	c.mu.Unlock()
	rec.LeftOut = len(ignored)
	for _, p := range ignored[:min(len(ignored), c.r.maxListed)] {
		rec.Examples = append(rec.Examples, c.r.ws.Rel(p))
	}
	rec.Changes = pairRenames(changes)
	c.r.store.Prune()
	c.r.done(rec)
	return rec
}

// noteIgnored counts an ignored path the command changed.
func (c *Command) noteIgnored(p string) {
	if c.ignored == nil {
		c.ignored = map[string]bool{}
	}
	c.ignored[p] = true
}

// pairRenames makes one change of a file that went from one path and a file with the
// same content and mode that came to another.
func pairRenames(changes []Change) []Change {
	gone := map[string]int{} // hash → index of a removed file
	for i, ch := range changes {
		if ch.Before.Kind == File && ch.Before.Hash != "" && ch.After.Kind == Absent {
			gone[ch.Before.Hash] = i
		}
	}
	drop := map[int]bool{}
	for i, ch := range changes {
		if ch.Before.Kind != Absent || ch.After.Kind != File || ch.After.Hash == "" {
			continue
		}
		j, ok := gone[ch.After.Hash]
		if !ok || drop[j] {
			continue
		}
		changes[i] = Change{Path: ch.Path, From: changes[j].Path, Before: changes[j].Before, After: ch.After}
		drop[j] = true
	}
	out := changes[:0:0]
	for i, ch := range changes {
		if !drop[i] {
			out = append(out, ch)
		}
	}
	return out
}
