package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Turn checkpoints. Every file a prompt's tool calls change is recorded in the
// session's file (an edit record: the prompt's number, the file, its text before and
// after), so that all a prompt did can be seen as one diff and taken back as one edit,
// from any front end and after a restart.

// Edit is a file change a tool call of a session made.
type Edit struct {
	Path   string
	Before *string // nil: the call created the file
	After  string
}

// recordEdits persists the edits of the running prompt. It runs on the prompt's
// goroutine, which owns the session's file.
func (s *Session) recordEdits(edits []Edit) {
	for _, e := range edits {
		after := e.After
		s.persist(record{Type: recEdit, Turn: s.prompts, Path: e.Path, Before: e.Before, After: &after})
	}
}

// editOf returns the edit a finished call made, if it made one.
func editOf(ev tools.Event) (Edit, bool) {
	if ev.Status != tools.StatusSuccess || ev.Result == nil || ev.Result.Diff == nil {
		return Edit{}, false
	}
	d := ev.Result.Diff
	return Edit{Path: d.Path, Before: d.OriginalContent, After: d.NewContent}, true
}

// TurnChange is what a prompt did to one file: its text before the prompt's first edit
// (nil: the prompt created it) and after its last.
type TurnChange struct {
	Path   string  `json:"path"`
	Before *string `json:"-"`
	After  string  `json:"-"`
}

// Turn is what one prompt of a session changed.
type Turn struct {
	Session string       `json:"session"`
	Turn    int          `json:"turn"` // the prompt's number, from 1
	Changes []TurnChange `json:"files"`
	Undone  bool         `json:"undone,omitempty"`
}

// ErrNoEdits is the error of a turn that changed no file.
var ErrNoEdits = errors.New("no prompt of the session changed a file")

// Turn returns what prompt n of the stored session id changed; n 0 means its last
// prompt that changed files and was not undone.
func (h *Host) Turn(id string, n int) (Turn, error) {
	if h.o.Store == nil {
		return Turn{}, errors.New("sessions are not stored here")
	}
	st, err := h.o.Store.load(id, h.log)
	if err != nil {
		return Turn{}, err
	}
	if n == 0 {
		for t := st.prompts; t >= 1; t-- {
			if len(st.edits[t]) > 0 && !st.undone[t] {
				n = t
				break
			}
		}
		if n == 0 {
			return Turn{}, fmt.Errorf("session %s: %w (or all were undone)", id, ErrNoEdits)
		}
	}
	if n < 1 || n > st.prompts {
		return Turn{}, fmt.Errorf("session %s has prompts 1 to %d, not %d", id, st.prompts, n)
	}
	t := Turn{Session: id, Turn: n, Undone: st.undone[n]}
	index := map[string]int{}
	for _, e := range st.edits[n] {
		i, ok := index[e.Path]
		if !ok {
			index[e.Path] = len(t.Changes)
			t.Changes = append(t.Changes, TurnChange{Path: e.Path, Before: e.Before, After: e.After})
			continue
		}
		t.Changes[i].After = e.After
	}
	// The calls of one batch end in any order: the files are listed by path.
	slices.SortFunc(t.Changes, func(a, b TurnChange) int { return strings.Compare(a.Path, b.Path) })
	return t, nil
}

// Diff returns the turn's changes as one unified diff, with paths relative to the
// workspace.
func (t Turn) Diff(ws *workspace.Workspace) string {
	var b strings.Builder
	for _, c := range t.Changes {
		before, created := "", c.Before == nil
		if !created {
			before = *c.Before
		}
		b.WriteString(workspace.UnifiedDiff(ws.Rel(c.Path), before, c.After, created))
	}
	return b.String()
}

// UndoResult is what UndoTurn did.
type UndoResult struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	// Reverted are the files given back the text they had before the prompt, Deleted
	// the files the prompt created that were deleted.
	Reverted []string `json:"reverted"`
	Deleted  []string `json:"deleted"`
	// Changed are the files changed since the prompt (by the user, or a later prompt),
	// which were left as they are.
	Changed []string `json:"changed"`
}

// ErrChangedSince is the error of an undo refused because files changed since the turn.
var ErrChangedSince = errors.New("files changed since the prompt")

// ErrOutside is the error of an undo refused because the session's file names a file
// outside the workspace's roots.
var ErrOutside = errors.New("undo refused")

// UndoTurn takes back what prompt n of session id changed (n 0: its last prompt that
// changed files and was not undone), as one edit through the workspace's writer: each
// file gets the text it had before the prompt, and a file the prompt created is
// deleted. A file changed since the prompt (its text is not what the prompt left) is
// left alone; unless force is set, nothing is undone then, and the error wraps
// ErrChangedSince with the result naming those files. A prompt whose recorded files
// are not all inside the workspace's roots (links resolved) is not undone at all: the
// error wraps ErrOutside. A session answering a prompt cannot be undone (ErrBusy).
func (h *Host) UndoTurn(ctx context.Context, id string, n int, force bool) (UndoResult, error) {
	if l := h.get(id); l != nil {
		_, end, err := l.begin(ctx)
		if err != nil && !errors.Is(err, errLetGo) {
			return UndoResult{}, err
		}
		if err == nil {
			defer end()
		}
	}
	t, err := h.Turn(id, n)
	if err != nil {
		return UndoResult{}, err
	}
	res := UndoResult{Session: id, Turn: t.Turn, Reverted: []string{}, Deleted: []string{}, Changed: []string{}}
	if t.Undone {
		return res, fmt.Errorf("prompt %d of session %s was undone already", t.Turn, id)
	}
	ws := h.tb.Workspace
	// The session file is data on disk, not a record the host can vouch for: whatever
	// path it names is confined to the workspace's roots, links resolved, as a tool's
	// write would be. A file naming any path outside undoes nothing, force or not.
	paths := make([]string, len(t.Changes))
	var outside []string
	for i, c := range t.Changes {
		p, err := ws.Resolve(c.Path)
		var oe *workspace.OutsideError
		switch {
		case errors.As(err, &oe):
			outside = append(outside, c.Path)
		case err != nil:
			return res, fmt.Errorf("undo of prompt %d of session %s: %w", t.Turn, id, err)
		}
		paths[i] = p
	}
	if len(outside) > 0 {
		return res, fmt.Errorf("%w: the file of session %s names %s, outside the workspace (roots: %s); nothing was undone",
			ErrOutside, id, strings.Join(outside, ", "), strings.Join(ws.Roots(), ", "))
	}
	var changes []workspace.Change
	for i, c := range t.Changes {
		path := paths[i]
		cur, err := ws.ReadText(path, maxUndoFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("reading %s: %w", path, err)
		}
		if err != nil || cur.Text != c.After {
			res.Changed = append(res.Changed, path)
			continue
		}
		label := fmt.Sprintf("agentls: undo prompt %d", t.Turn)
		if c.Before == nil {
			changes = append(changes, workspace.Change{Path: path, Old: cur, Delete: true, Label: label})
			res.Deleted = append(res.Deleted, path)
		} else {
			changes = append(changes, workspace.Change{Path: path, Old: cur, New: *c.Before, Label: label})
			res.Reverted = append(res.Reverted, path)
		}
	}
	if len(res.Changed) > 0 && !force {
		res.Reverted, res.Deleted = []string{}, []string{}
		return res, fmt.Errorf("%w: %s (force undoes the others)", ErrChangedSince, strings.Join(res.Changed, ", "))
	}
	if len(changes) > 0 {
		if err := ws.CommitAll(ctx, changes); err != nil {
			return UndoResult{Session: id, Turn: t.Turn, Reverted: []string{}, Deleted: []string{}, Changed: res.Changed}, err
		}
	}
	if err := h.o.Store.append(id, record{Type: recUndo, Turn: t.Turn}); err != nil {
		h.log.Warn("recording an undo", "session", id, "err", err)
	}
	slices.Sort(res.Changed)
	return res, nil
}

// maxUndoFile bounds the files an undo reads.
const maxUndoFile = 64 << 20
