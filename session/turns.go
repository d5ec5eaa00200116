package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/checkpoint"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Turn checkpoints. Every file a prompt's tool calls change is recorded in the
// session's file, in the order the changes happened: an edit tool's change with the
// file's text before and after; a shell command's changes (package checkpoint) with
// what each path held before and after, the contents in the workspace's checkpoint
// store. So all a prompt did can be seen as one diff and taken back as one edit, from
// any front end and after a restart, and the taking back can itself be taken back.

// Edit is a file change an edit tool call of a session made.
type Edit struct {
	Path   string
	Before *string // nil: the call created the file
	After  string
	// Tool is the tool that made it.
	Tool string
}

// turnItem is one change of a prompt's: an edit tool's, or a shell command's Record.
type turnItem struct {
	edit  *Edit
	shell *checkpoint.Record
}

// recordItems persists the changes of the running prompt. It runs on the prompt's
// goroutine, which owns the session's file.
func (s *Session) recordItems(items []turnItem) {
	for _, it := range items {
		switch {
		case it.edit != nil:
			e := it.edit
			after := e.After
			s.persist(record{Type: recEdit, Turn: s.prompts, Path: e.Path, Before: e.Before, After: &after, Tool: e.Tool})
		case it.shell != nil:
			s.persist(record{Type: recShell, Turn: s.prompts, Shell: it.shell})
		}
	}
}

// editOf returns the edit a finished call made, if it made one.
func editOf(ev tools.Event) (Edit, bool) {
	if ev.Status != tools.StatusSuccess || ev.Result == nil || ev.Result.Diff == nil {
		return Edit{}, false
	}
	d := ev.Result.Diff
	return Edit{Path: d.Path, Before: d.OriginalContent, After: d.NewContent, Tool: ev.Name}, true
}

// TurnChange is what a prompt did to one path: what it held before the prompt's first
// change of it and after its last.
type TurnChange struct {
	Path string `json:"path"`
	// From is where the file was before a command renamed it here.
	From   string           `json:"from,omitempty"`
	Before checkpoint.State `json:"before"`
	After  checkpoint.State `json:"after"`
	// By names the calls that changed it, in order: an edit tool's name, or
	// "run_shell_command: " and the command.
	By []string `json:"by"`
}

// Turn is what one prompt of a session changed.
type Turn struct {
	Session string       `json:"session"`
	Turn    int          `json:"turn"` // the prompt's number, from 1
	Changes []TurnChange `json:"files"`
	Undone  bool         `json:"undone,omitempty"`
	// Unrecorded are the prompt's commands whose changes are not known, each with why.
	Unrecorded []string `json:"unrecorded,omitempty"`
	// LeftOut counts the ignored paths the prompt's commands changed, which are not
	// recorded (node_modules, build outputs, .git); LeftOutExamples names a few.
	LeftOut         int      `json:"leftOut,omitempty"`
	LeftOutExamples []string `json:"leftOutExamples,omitempty"`
}

// ErrNoEdits is the error of a turn that changed no file.
var ErrNoEdits = errors.New("no prompt of the session changed a file")

// shellLabel names a command in TurnChange.By.
const shellLabel = "run_shell_command: "

// Turn returns what prompt n of the stored session id changed; n 0 means its last
// prompt that changed files and was not undone.
func (h *Host) Turn(id string, n int) (Turn, error) {
	st, err := h.stored(id)
	if err != nil {
		return Turn{}, err
	}
	if n == 0 {
		for t := st.prompts; t >= 1; t-- {
			if !st.undone[t] && len(turnOf(id, t, st.items[t]).Changes) > 0 {
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
	t := turnOf(id, n, st.items[n])
	t.Undone = st.undone[n]
	return t, nil
}

// stored loads the stored session id.
func (h *Host) stored(id string) (*stored, error) {
	if h.o.Store == nil {
		return nil, errors.New("sessions are not stored here")
	}
	return h.o.Store.load(id, h.log)
}

// turnOf merges a prompt's changes, in order, into one change per path.
func turnOf(id string, n int, items []turnItem) Turn {
	t := Turn{Session: id, Turn: n}
	index := map[string]int{}
	change := func(path string, before, after checkpoint.State, by, from string) {
		i, ok := index[path]
		if !ok {
			index[path] = len(t.Changes)
			t.Changes = append(t.Changes, TurnChange{Path: path, Before: before, After: after, By: []string{by}, From: from})
			return
		}
		c := &t.Changes[i]
		c.After = after
		if from != "" {
			c.From = from
		}
		if !slices.Contains(c.By, by) {
			c.By = append(c.By, by)
		}
	}
	for _, it := range items {
		if e := it.edit; e != nil {
			before := checkpoint.State{Kind: checkpoint.Absent}
			if e.Before != nil {
				before = checkpoint.State{Kind: checkpoint.File, Text: e.Before}
			}
			after := e.After
			change(e.Path, before, checkpoint.State{Kind: checkpoint.File, Text: &after}, cmp.Or(e.Tool, "edit"), "")
			continue
		}
		r := it.shell
		by := shellLabel + r.Command
		if r.Unrecorded != "" {
			t.Unrecorded = append(t.Unrecorded, fmt.Sprintf("`%s`: %s", r.Command, r.Unrecorded))
		}
		t.LeftOut += r.LeftOut
		for _, ex := range r.Examples {
			if len(t.LeftOutExamples) < 5 && !slices.Contains(t.LeftOutExamples, ex) {
				t.LeftOutExamples = append(t.LeftOutExamples, ex)
			}
		}
		for _, c := range r.Changes {
			if c.From != "" {
				change(c.From, c.Before, checkpoint.State{Kind: checkpoint.Absent}, by, "")
				change(c.Path, checkpoint.State{Kind: checkpoint.Absent}, c.After, by, c.From)
				continue
			}
			change(c.Path, c.Before, c.After, by, "")
		}
	}
	// A file made and removed within the prompt is no change.
	t.Changes = slices.DeleteFunc(t.Changes, func(c TurnChange) bool { return c.Before.Same(c.After) })
	slices.SortFunc(t.Changes, func(a, b TurnChange) int { return strings.Compare(a.Path, b.Path) })
	return t
}

// Diff returns the turn's changes as one unified diff, with paths relative to the
// workspace; each file's diff is headed by a line naming the calls that changed it.
// Contents the store no longer has are said to be missing.
func (h *Host) Diff(t Turn) string {
	ws := h.tb.Workspace
	var b strings.Builder
	for _, c := range t.Changes {
		rel := ws.Rel(c.Path)
		by := make([]string, len(c.By))
		for i, s := range c.By {
			if len(s) > 100 {
				s = s[:strings.LastIndex(s[:97], " ")+1] + "…"
			}
			by[i] = s
		}
		fmt.Fprintf(&b, "# %s: changed by %s\n", rel, strings.Join(by, "; "))
		if c.From != "" {
			fmt.Fprintf(&b, "# renamed from %s\n", ws.Rel(c.From))
		}
		if c.Before.Kind != c.After.Kind && c.Before.Kind != checkpoint.Absent && c.After.Kind != checkpoint.Absent {
			fmt.Fprintf(&b, "# was a %s, is a %s\n", c.Before.Kind, c.After.Kind)
		}
		if c.Before.Kind == c.After.Kind && c.Before.Mode != c.After.Mode && c.Before.Mode != 0 && c.After.Mode != 0 {
			fmt.Fprintf(&b, "# mode %04o → %04o\n", c.Before.Mode, c.After.Mode)
		}
		switch {
		case c.Before.Kind == checkpoint.Dir || c.After.Kind == checkpoint.Dir:
			fmt.Fprintf(&b, "# folder %s\n", map[bool]string{true: "created", false: "removed"}[c.Before.Kind == checkpoint.Absent])
			continue
		case c.Before.Kind == checkpoint.Symlink || c.After.Kind == checkpoint.Symlink:
			fmt.Fprintf(&b, "# link: %q → %q\n", c.Before.Link, c.After.Link)
			continue
		}
		before, bok := h.text(c.From, c.Before)
		after, aok := h.text(c.Path, c.After)
		switch {
		case c.From != "" && c.Before.Same(c.After):
		case !bok || !aok:
			fmt.Fprintf(&b, "# binary file, or a content not kept: %s\n", cmp.Or(c.Before.Lost, c.After.Lost, "not shown as text"))
		default:
			b.WriteString(workspace.UnifiedDiff(rel, before, after, c.Before.Kind == checkpoint.Absent))
		}
	}
	for _, u := range t.Unrecorded {
		fmt.Fprintf(&b, "# not recorded: %s\n", u)
	}
	if t.LeftOut > 0 {
		fmt.Fprintf(&b, "# left out: %d ignored paths (%s)\n", t.LeftOut, strings.Join(t.LeftOutExamples, ", "))
	}
	return b.String()
}

// text returns the content of state s of path as text: "" for an absent path; false
// when it is not text or is not kept.
func (h *Host) text(path string, s checkpoint.State) (string, bool) {
	switch {
	case s.Kind == checkpoint.Absent:
		return "", true
	case s.Kind != checkpoint.File:
		return "", false
	case s.Text != nil:
		return *s.Text, true
	}
	b, err := h.content(path, s)
	if err != nil || !utf8.Valid(b) || slices.Contains(b, 0) {
		return "", false
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), true
}

// content returns the bytes of the file state s of path: held by the record, kept in
// the store, or, for what a command left (which is not kept until an undo replaces
// it), read from path while it still holds it.
func (h *Host) content(path string, s checkpoint.State) ([]byte, error) {
	switch {
	case s.Text != nil:
		return []byte(*s.Text), nil
	case s.Lost != "":
		return nil, fmt.Errorf("%s: %w", s.Lost, checkpoint.ErrLost)
	case h.checkpoints == nil:
		return nil, fmt.Errorf("no checkpoint store: %w", checkpoint.ErrLost)
	}
	b, err := h.checkpoints.Read(s.Hash)
	if err != nil && path != "" {
		if cur, rerr := os.ReadFile(path); rerr == nil && checkpoint.HashText(cur) == s.Hash {
			return cur, nil
		}
	}
	return b, err
}

// UndoResult is what UndoTurn or RedoTurn did.
type UndoResult struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	// Reverted are the files given back what they held before the prompt (after it,
	// for a redo), Deleted the files removed because the prompt made them (because
	// the undo removed them, for a redo).
	Reverted []string `json:"reverted"`
	Deleted  []string `json:"deleted"`
	// Changed are the files changed since the prompt (since the undo, for a redo), by
	// the user or a later prompt, which were left as they are.
	Changed []string `json:"changed"`
	// NotRestorable are the paths whose earlier content was not kept, each with why
	// (over the size limit, or removed from the store); they were left as they are.
	NotRestorable []string `json:"notRestorable,omitempty"`
	// Unrecorded are the prompt's commands whose changes are not known, and so were
	// not undone; LeftOut counts the ignored paths its commands changed.
	Unrecorded []string `json:"unrecorded,omitempty"`
	LeftOut    int      `json:"leftOut,omitempty"`
}

// ErrChangedSince is the error of an undo refused because files changed since the turn.
var ErrChangedSince = errors.New("files changed since the prompt")

// ErrOutside is the error of an undo refused because the session's file names a file
// outside the workspace's roots.
var ErrOutside = errors.New("undo refused")

// UndoTurn takes back what prompt n of session id changed (n 0: its last prompt that
// changed files and was not undone): each path gets back what it held before the
// prompt. Text files go through the workspace's writer as one edit (in the editor, one
// step of its undo); folders, links, binary files and modes are restored on disk. A
// path changed since the prompt is left alone; unless force is set, nothing is undone
// then, and the error wraps ErrChangedSince with the result naming those paths. A
// prompt whose recorded paths are not all inside the workspace's roots (links
// resolved) is not undone at all: the error wraps ErrOutside. A session answering a
// prompt cannot be undone (ErrBusy). What the undo replaces is kept, so RedoTurn can
// bring it back.
func (h *Host) UndoTurn(ctx context.Context, id string, n int, force bool) (UndoResult, error) {
	return h.turnBack(ctx, id, n, force, false)
}

// RedoTurn brings back what UndoTurn took back of prompt n of session id (n 0: the
// prompt undone last that was not redone), under the same rules: a path changed since
// the undo is left alone, and without force nothing is redone then. A redone prompt
// can be undone again.
func (h *Host) RedoTurn(ctx context.Context, id string, n int, force bool) (UndoResult, error) {
	return h.turnBack(ctx, id, n, force, true)
}

func (h *Host) turnBack(ctx context.Context, id string, n int, force, redo bool) (UndoResult, error) {
	if l := h.get(id); l != nil {
		_, end, err := l.begin(ctx)
		if err != nil && !errors.Is(err, errLetGo) {
			return UndoResult{}, err
		}
		if err == nil {
			defer end()
		}
	}
	verb := map[bool]string{false: "undo", true: "redo"}[redo]
	if redo && n == 0 {
		st, err := h.stored(id)
		if err != nil {
			return UndoResult{}, err
		}
		if len(st.undoneOrder) == 0 {
			return UndoResult{}, fmt.Errorf("session %s: no prompt is undone, so there is nothing to redo", id)
		}
		n = st.undoneOrder[len(st.undoneOrder)-1]
	}
	t, err := h.Turn(id, n)
	if err != nil {
		return UndoResult{}, err
	}
	res := UndoResult{Session: id, Turn: t.Turn, Reverted: []string{}, Deleted: []string{}, Changed: []string{}, Unrecorded: t.Unrecorded, LeftOut: t.LeftOut}
	switch {
	case !redo && t.Undone:
		return res, fmt.Errorf("prompt %d of session %s was undone already (redo brings it back)", t.Turn, id)
	case redo && !t.Undone:
		return res, fmt.Errorf("prompt %d of session %s is not undone, so there is nothing to redo", t.Turn, id)
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
			return res, fmt.Errorf("%s of prompt %d of session %s: %w", verb, t.Turn, id, err)
		}
		paths[i] = p
	}
	if len(outside) > 0 {
		return res, fmt.Errorf("%w: the file of session %s names %s, outside the workspace (roots: %s); nothing was undone",
			ErrOutside, id, strings.Join(outside, ", "), strings.Join(ws.Roots(), ", "))
	}
	label := fmt.Sprintf("agentls: %s prompt %d", verb, t.Turn)
	var p plan
	for i, c := range t.Changes {
		from, to := c.After, c.Before
		if redo {
			from, to = to, from
		}
		if err := h.planChange(&p, &res, paths[i], from, to, label); err != nil {
			return res, fmt.Errorf("%s of prompt %d of session %s: %w", verb, t.Turn, id, err)
		}
	}
	if len(res.Changed) > 0 && !force {
		res.Reverted, res.Deleted = []string{}, []string{}
		return res, fmt.Errorf("%w: %s (force %ss the others)", ErrChangedSince, strings.Join(res.Changed, ", "), verb)
	}
	if err := h.carry(ctx, p); err != nil {
		return UndoResult{Session: id, Turn: t.Turn, Reverted: []string{}, Deleted: []string{}, Changed: res.Changed}, err
	}
	typ := recUndo
	if redo {
		typ = recRedo
	}
	if err := h.o.Store.append(id, record{Type: typ, Turn: t.Turn}); err != nil {
		h.log.Warn("recording an "+verb, "session", id, "err", err)
	}
	slices.Sort(res.Changed)
	return res, nil
}

// plan is what an undo or redo does, in the order carry does it.
type plan struct {
	mkdirs []dirOp            // folders to make, before the files in them
	edits  []workspace.Change // text files, through the workspace's writer, as one
	disk   []diskOp           // binary files and links, on disk
	modes  map[string]fs.FileMode
	rmdirs []string // folders to remove once empty, after the files in them
}

type dirOp struct {
	path string
	mode fs.FileMode
}

type diskOp struct {
	path    string
	to      checkpoint.State
	content []byte
}

// planChange adds to p what gives path the state to, where it holds from now.
func (h *Host) planChange(p *plan, res *UndoResult, path string, from, to checkpoint.State, label string) error {
	ws := h.tb.Workspace
	if !h.holds(path, from) {
		res.Changed = append(res.Changed, path)
		return nil
	}
	if to.Kind == checkpoint.File && to.Text == nil && to.Lost != "" {
		res.NotRestorable = append(res.NotRestorable, fmt.Sprintf("%s: %s", ws.Rel(path), to.Lost))
		return nil
	}
	// What is replaced is kept, for the redo of an undo (and the undo of a redo).
	if from.Kind == checkpoint.File && from.Text == nil && h.checkpoints != nil {
		if b, err := os.ReadFile(path); err == nil {
			h.checkpoints.Put(b)
		}
	}
	var content []byte
	if to.Kind == checkpoint.File {
		b, err := h.content("", to)
		if err != nil {
			res.NotRestorable = append(res.NotRestorable, fmt.Sprintf("%s: %v", ws.Rel(path), err))
			return nil
		}
		content = b
	}
	_, fromIsText := h.text(path, from)
	toIsText := to.Kind == checkpoint.Absent || to.Kind == checkpoint.File && utf8.Valid(content) && !slices.Contains(content, 0)
	switch {
	case to.Kind == checkpoint.Dir && from.Kind == checkpoint.Absent:
		p.mkdirs = append(p.mkdirs, dirOp{path, to.Mode})
		res.Reverted = append(res.Reverted, path)
	case to.Kind == checkpoint.Dir:
		p.setMode(path, to.Mode)
		res.Reverted = append(res.Reverted, path)
	case from.Kind == checkpoint.Dir && to.Kind == checkpoint.Absent:
		p.rmdirs = append(p.rmdirs, path)
		res.Deleted = append(res.Deleted, path)
	case from.Kind == checkpoint.Dir:
		return fmt.Errorf("%s is a folder now and was a %s: not undone", ws.Rel(path), to.Kind)
	case (from.Kind == checkpoint.File && fromIsText || from.Kind == checkpoint.Absent) && toIsText:
		var cur *workspace.File
		if from.Kind == checkpoint.File {
			f, err := ws.ReadText(path, maxUndoFile)
			if err != nil {
				return fmt.Errorf("reading %s: %w", path, err)
			}
			cur = f
		}
		if to.Kind == checkpoint.Absent {
			p.edits = append(p.edits, workspace.Change{Path: path, Old: cur, Delete: true, Label: label})
			res.Deleted = append(res.Deleted, path)
			return nil
		}
		p.edits = append(p.edits, workspace.Change{Path: path, Old: cur, New: strings.ReplaceAll(string(content), "\r\n", "\n"), Label: label})
		if to.Text == nil {
			p.setMode(path, to.Mode)
		}
		res.Reverted = append(res.Reverted, path)
	default:
		p.disk = append(p.disk, diskOp{path, to, content})
		if to.Kind == checkpoint.Absent {
			res.Deleted = append(res.Deleted, path)
		} else {
			res.Reverted = append(res.Reverted, path)
		}
	}
	return nil
}

func (p *plan) setMode(path string, mode fs.FileMode) {
	if mode == 0 {
		return
	}
	if p.modes == nil {
		p.modes = map[string]fs.FileMode{}
	}
	p.modes[path] = mode
}

// holds reports whether path holds the state s now.
func (h *Host) holds(path string, s checkpoint.State) bool {
	if s.Text != nil {
		cur, err := h.tb.Workspace.ReadText(path, maxUndoFile)
		return err == nil && cur.Text == *s.Text
	}
	cur := checkpoint.Current(path)
	if cur.Kind == checkpoint.File && s.Kind == checkpoint.File {
		// What the editor holds is what an edit replaces: unsaved changes of the user's
		// over the very content on disk are a change since, too.
		if d, open := h.tb.Workspace.Document(path); open {
			// The content of s, from the store or, for what a command left, the disk.
			if t, ok := h.text(path, s); ok && d.Text != t {
				return false
			}
		}
	}
	if cur.Kind == checkpoint.File && s.Kind == checkpoint.File && cur.Hash != s.Hash {
		// A file the editor holds unsaved is compared by its text.
		if t, ok := h.text("", s); ok {
			if f, err := h.tb.Workspace.ReadText(path, maxUndoFile); err == nil && f.Text == t {
				return true
			}
		}
	}
	return s.Same(cur)
}

// carry does what p says: folders made, text files through the writer as one edit,
// binary files and links on disk, modes, then emptied folders removed.
func (h *Host) carry(ctx context.Context, p plan) error {
	slices.SortFunc(p.mkdirs, func(a, b dirOp) int { return strings.Compare(a.path, b.path) })
	for _, d := range p.mkdirs {
		if err := os.Mkdir(d.path, cmp.Or(d.mode, 0o755)); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("making the folder %s: %w", d.path, err)
		}
	}
	if len(p.edits) > 0 {
		if err := h.tb.Workspace.CommitAll(ctx, p.edits); err != nil {
			return err
		}
	}
	for _, op := range p.disk {
		if err := restoreOnDisk(op); err != nil {
			return err
		}
	}
	for path, mode := range p.modes {
		if err := os.Chmod(path, mode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("giving %s its mode back: %w", path, err)
		}
	}
	// Deepest first: a folder is removed once the folders in it are.
	slices.SortFunc(p.rmdirs, func(a, b string) int { return strings.Compare(b, a) })
	for _, d := range p.rmdirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			h.log.Warn("undo: a folder the prompt made is not empty, so it stays", "path", d, "err", err)
		}
	}
	return nil
}

// restoreOnDisk gives path a binary file's content or a link, or removes it.
func restoreOnDisk(op diskOp) error {
	switch op.to.Kind {
	case checkpoint.Absent:
		if err := os.Remove(op.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", op.path, err)
		}
	case checkpoint.Symlink:
		tmp := op.path + ".agentls-undo"
		os.Remove(tmp)
		if err := os.Symlink(op.to.Link, tmp); err != nil {
			return fmt.Errorf("restoring the link %s: %w", op.path, err)
		}
		if err := os.Rename(tmp, op.path); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("restoring the link %s: %w", op.path, err)
		}
	case checkpoint.File:
		if err := os.MkdirAll(filepath.Dir(op.path), 0o755); err != nil {
			return err
		}
		// A link the command put where the file was goes: writing through it would
		// change the file it points to.
		if fi, err := os.Lstat(op.path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if err := os.Remove(op.path); err != nil {
				return fmt.Errorf("removing the link %s: %w", op.path, err)
			}
		}
		if err := workspace.WriteFileAtomic(op.path, op.content, cmp.Or(op.to.Mode, 0o644)); err != nil {
			return fmt.Errorf("restoring %s: %w", op.path, err)
		}
		if op.to.Mode != 0 {
			os.Chmod(op.path, op.to.Mode)
		}
	}
	return nil
}

// maxUndoFile bounds the files an undo reads.
const maxUndoFile = 64 << 20

// Lines says what an undo (or a redo) did, a line per path, paths relative to the
// workspace of ws, for front ends that answer in text: the terminal, ACP.
func (r UndoResult) Lines(ws *workspace.Workspace, redo bool) []string {
	since := "the prompt"
	if redo {
		since = "the undo"
	}
	var out []string
	for _, p := range r.Reverted {
		out = append(out, "reverted "+ws.Rel(p))
	}
	for _, p := range r.Deleted {
		out = append(out, "deleted "+ws.Rel(p))
	}
	for _, p := range r.Changed {
		out = append(out, fmt.Sprintf("left alone %s: changed since %s", ws.Rel(p), since))
	}
	for _, p := range r.NotRestorable {
		out = append(out, "not restorable "+p)
	}
	for _, u := range r.Unrecorded {
		out = append(out, "not recorded, so not taken back: "+u)
	}
	if r.LeftOut > 0 {
		out = append(out, fmt.Sprintf("left out: %d ignored paths the prompt's commands changed", r.LeftOut))
	}
	return out
}
