package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// What write_file and replace share: reading the file they are about to change, showing
// the change, and committing it.

// readCurrent reads the file a tool is about to change: nil when it does not exist (and
// is not an unsaved document in the editor), an error when it is not a text file.
func readCurrent(ws *workspace.Workspace, abs, verb string) (*workspace.File, error) {
	if _, open := ws.Document(abs); !open {
		fi, err := ws.Stat(abs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil
		case err != nil:
			return nil, fileError(ws, abs, err)
		case fi.IsDir():
			return nil, fileError(ws, abs, fmt.Errorf("%s: %w", abs, workspace.ErrIsDirectory))
		case !fi.Mode().IsRegular():
			return nil, tools.Errorf(tools.ErrReadContentFailure, "Cannot %s %s: it is not a regular file (%s).", verb, ws.Rel(abs), workspace.FileKind(fi.Mode()))
		}
	}
	f, err := readText(ws, abs, verb)
	if err != nil {
		var te *tools.Error
		if errors.As(err, &te) && te.Type == tools.ErrFileNotFound {
			return nil, nil // deleted since the Stat
		}
		return nil, err
	}
	return f, nil
}

// basis is the file a call's proposal was computed from, as its Confirmation read it.
// Execute applies the call only to that same text: a person approved a diff against it,
// and the same change applied to other text (say, after the person typed in the buffer
// while the question was open) is a change nobody saw.
//
// The path is held too: abs spelled the same may reach another file once a link along
// it changes (a directory replaced by a link to .git/hooks, say, by a checkout), and
// the consent given was for the file it reached when proposed.
type basis struct {
	mu     sync.Mutex
	shown  bool
	abs    string
	real   string // the file abs reached, every link resolved
	exists bool
	text   string
	// applied is the file abs reached when Execute read it, which the write must
	// still reach when it is committed.
	applied string
}

// record remembers cur, read from abs (nil: no such file), as what the proposal shown
// was computed from.
func (b *basis) record(ws *workspace.Workspace, abs string, cur *workspace.File) {
	real, err := ws.Real(abs)
	if err != nil {
		real = "" // unresolvable now: nothing resolvable later matches it
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.shown, b.abs, b.real, b.exists, b.text = true, abs, real, cur != nil, ""
	if cur != nil {
		b.text = cur.Text
	}
}

// errMoved is the stale_content error for a write whose path now reaches another file
// than the one consent was given for.
func errMoved(ws *workspace.Workspace, abs, was, now string) *tools.Error {
	rel := ws.Rel(abs)
	what := fmt.Sprintf("%s now leads to %s, not to %s as when the change was proposed (a link along the path changed)", rel, now, was)
	if now == "" {
		what = rel + " can no longer be resolved as when the change was proposed (a link along the path changed)"
	}
	return &tools.Error{
		Type: tools.ErrStaleContent,
		Message: what + ", so the change was not applied and nothing was written. " +
			"Read the file again and retry the change if it is still wanted.",
		Err: fmt.Errorf("%s: %w", abs, workspace.ErrStale),
	}
}

// check returns a stale_content error if a proposal was shown and cur, read from abs at
// execution, is not the text it was computed from. Without a proposal (a direct
// Execute) there is nothing to hold the call to.
func (b *basis) check(ws *workspace.Workspace, abs string, cur *workspace.File) error {
	b.mu.Lock()
	shown, was, wasReal, exists, text := b.shown, b.abs, b.real, b.exists, b.text
	b.mu.Unlock()
	if shown && was == abs {
		if real, err := ws.Real(abs); err != nil || real != wasReal {
			return errMoved(ws, abs, wasReal, real)
		}
	}
	var what string
	switch {
	case !shown:
		return nil
	case was != abs:
		what = fmt.Sprintf("%s now names another file (%s) than when the proposed change was shown", ws.Rel(was), ws.Rel(abs))
	case exists && cur == nil:
		what = ws.Rel(abs) + " was deleted since the proposed change was shown"
	case !exists && cur != nil:
		what = ws.Rel(abs) + " was created since the proposed change was shown"
	case exists && cur.Text != text:
		what = ws.Rel(abs) + " changed since the proposed change was shown (the user, another program or another agentls edited it)"
	default:
		return nil
	}
	return &tools.Error{
		Type: tools.ErrStaleContent,
		Message: what + ", so the proposed change was not applied and nothing was written. " +
			"Read the file again to see its current content, then retry the change against it.",
		Err: fmt.Errorf("%s: %w", abs, workspace.ErrStale),
	}
}

// readToPropose reads the file an edit call changes, with read, for its Confirmation:
// the proposal is made only against text the session has read (checkRead).
func readToPropose(ctx context.Context, ws *workspace.Workspace, read func() (string, *workspace.File, error)) (string, *workspace.File, error) {
	abs, cur, err := read()
	if err != nil {
		return "", nil, err
	}
	if err := checkRead(ctx, ws, abs, cur); err != nil {
		return "", nil, err
	}
	return abs, cur, nil
}

// readToApply reads the file an edit call changes, with read, for its Execute: held
// first to the text the proposal shown was computed from (b), then to what the session
// has read (checkRead).
func (b *basis) readToApply(ctx context.Context, ws *workspace.Workspace, read func() (string, *workspace.File, error)) (string, *workspace.File, error) {
	abs, cur, err := read()
	if err != nil {
		return "", nil, err
	}
	if err := b.check(ws, abs, cur); err != nil {
		return "", nil, err
	}
	if err := checkRead(ctx, ws, abs, cur); err != nil {
		return "", nil, err
	}
	real, err := ws.Real(abs)
	if err != nil {
		return "", nil, fileError(ws, abs, err)
	}
	b.mu.Lock()
	b.applied = real
	b.mu.Unlock()
	return abs, cur, nil
}

// commit commits ch, read by readToApply, once its path is judged again: still inside
// the workspace and reaching the file it reached when read. A link swapped in between
// (by a command running meanwhile) would otherwise carry the write to a file nobody
// judged.
func (b *basis) commit(ctx context.Context, ws *workspace.Workspace, ch change, label string) (*tools.FileDiff, error) {
	b.mu.Lock()
	want := b.applied
	b.mu.Unlock()
	if _, err := ws.Resolve(ch.abs); err != nil {
		return nil, errMoved(ws, ch.abs, want, "a place outside the workspace")
	}
	if real, err := ws.Real(ch.abs); err != nil || real != want {
		return nil, errMoved(ws, ch.abs, want, real)
	}
	return ch.commit(ctx, ws, label)
}

// change is a proposed new text for one file.
type change struct {
	abs string
	rel string
	old *workspace.File // nil: the file is created
	new string
}

// diff returns the change as a unified diff and its hunks and, for an existing file,
// the text it had.
func (c change) diff() (string, []workspace.Hunk, *string) {
	if c.old == nil {
		diff, hunks := workspace.DiffHunks(c.rel, "", c.new, true)
		return diff, hunks, nil
	}
	orig := c.old.Text
	diff, hunks := workspace.DiffHunks(c.rel, orig, c.new, false)
	return diff, hunks, &orig
}

// details is what a person approves, with the hunks they may choose among.
func (c change) details(title string) *confirm.Details {
	diff, hunks, orig := c.diff()
	d := &confirm.Details{
		Type:            confirm.TypeEdit,
		Title:           title + ": " + c.rel,
		Path:            c.abs,
		Diff:            diff,
		OriginalContent: orig,
		NewContent:      c.new,
	}
	d.Hunks = append(d.Hunks, hunks...) // nil when there are none
	return d
}

// commit writes the change through the workspace's writer and returns its display form.
// The Change carries the file as read for this commit, so a writer refuses it if the
// file changed since.
func (c change) commit(ctx context.Context, ws *workspace.Workspace, label string) (*tools.FileDiff, error) {
	err := ws.Commit(ctx, workspace.Change{Path: c.abs, Old: c.old, New: c.new, Label: label})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if c.old == nil && errors.Is(err, fs.ErrExist) {
			// Created by someone else since it was read: as stale as a changed file.
			err = fmt.Errorf("%s was created since it was read: %w (%w)", c.abs, workspace.ErrStale, err)
		}
		return nil, fileError(ws, c.abs, err)
	}
	noteWritten(ctx, ws, c.abs)
	diff, _, orig := c.diff()
	return &tools.FileDiff{Path: c.abs, Diff: diff, OriginalContent: orig, NewContent: c.new}, nil
}
