package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

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
			return nil, tools.Errorf(tools.ErrReadContentFailure, "Cannot %s %s: it is not a regular file (%s).", verb, ws.Rel(abs), fileKind(fi.Mode()))
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

// change is a proposed new text for one file.
type change struct {
	abs string
	rel string
	old *workspace.File // nil: the file is created
	new string
}

func (c change) diff() (string, *string) {
	if c.old == nil {
		return workspace.UnifiedDiff(c.rel, "", c.new, true), nil
	}
	orig := c.old.Text
	return unifiedDiff(c.rel, orig, c.new), &orig
}

// diffContext is the number of unchanged lines workspace.UnifiedDiff shows around a
// change.
const diffContext = 3

// unifiedDiff is workspace.UnifiedDiff(path, old, new, false), made fast for the usual
// edit: a small change in a large file. The line diff of the whole texts costs hundreds
// of milliseconds on a 10 MB file; the lines both texts share at their start and end,
// beyond the context a hunk shows, cannot be part of any hunk, so only the middle is
// diffed and its hunk headers are moved down by the lines cut from the start.
func unifiedDiff(path, old, new string) string {
	if old == new {
		return ""
	}
	// The start of the line holding the first difference, less the context lines.
	pre := strings.LastIndexByte(old[:commonPrefix(old, new)], '\n') + 1
	for k := 0; k < diffContext && pre > 0; k++ {
		pre = strings.LastIndexByte(old[:pre-1], '\n') + 1
	}
	// The end of the first line wholly inside the common suffix (not reaching back
	// before pre), plus the context lines; the texts end alike from there.
	oldEnd, newEnd := len(old), len(new)
	s := commonSuffix(old[pre:], new[pre:])
	if i := strings.IndexByte(old[len(old)-s:], '\n'); i >= 0 {
		end := len(old) - s + i + 1
		for k := 0; k < diffContext && end < len(old); k++ {
			j := strings.IndexByte(old[end:], '\n')
			if j < 0 {
				end = len(old)
				break
			}
			end += j + 1
		}
		oldEnd, newEnd = end, len(new)-(len(old)-end)
	}
	d := workspace.UnifiedDiff(path, old[pre:oldEnd], new[pre:newEnd], false)
	if pre == 0 {
		return d
	}
	return shiftHunks(d, strings.Count(old[:pre], "\n"))
}

// commonPrefix returns the length of the longest common prefix of a and b, comparing
// blocks at a time: the texts are often megabytes long and differ in a few lines.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && a[i:i+4096] == b[i:i+4096] {
		i += 4096
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns the length of the longest common suffix of a and b.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && a[len(a)-i-4096:len(a)-i] == b[len(b)-i-4096:len(b)-i] {
		i += 4096
	}
	for i < n && a[len(a)-i-1] == b[len(b)-i-1] {
		i++
	}
	return i
}

// shiftHunks adds offset to the line numbers in the hunk headers of the unified diff d.
// A hunk header is the only kind of line that starts with "@@": the lines of a hunk
// start with ' ', '+', '-' or '\\'.
func shiftHunks(d string, offset int) string {
	var b strings.Builder
	b.Grow(len(d) + 32)
	for d != "" {
		line := d
		if i := strings.IndexByte(d, '\n'); i >= 0 {
			line = d[:i+1]
		}
		d = d[len(line):]
		if f := strings.Fields(line); len(f) == 4 && f[0] == "@@" && f[3] == "@@" {
			fmt.Fprintf(&b, "@@ %s %s @@\n", shiftRange(f[1], offset), shiftRange(f[2], offset))
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// shiftRange moves a hunk range such as "-12,7" or "+3" down by offset lines.
func shiftRange(r string, offset int) string {
	if len(r) < 2 {
		return r
	}
	start, count, hasCount := strings.Cut(r[1:], ",")
	n, err := strconv.Atoi(start)
	if err != nil || n == 0 {
		return r // "-0,0": an empty side, which has no position to move
	}
	r = r[:1] + strconv.Itoa(n+offset)
	if hasCount {
		r += "," + count
	}
	return r
}

// details is what a person approves.
func (c change) details(title string) *confirm.Details {
	diff, orig := c.diff()
	return &confirm.Details{
		Type:            confirm.TypeEdit,
		Title:           title + ": " + c.rel,
		Path:            c.abs,
		Diff:            diff,
		OriginalContent: orig,
		NewContent:      c.new,
	}
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
	diff, orig := c.diff()
	return &tools.FileDiff{Path: c.abs, Diff: diff, OriginalContent: orig, NewContent: c.new}, nil
}
