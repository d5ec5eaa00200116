package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// replaceTool is the replace tool.
type replaceTool struct {
	ws   *workspace.Workspace
	info tools.Info
}

// NewReplace returns the replace tool (shown as Edit): it replaces old_string with
// new_string in a file, exactly or, failing that, ignoring the indentation and trailing
// whitespace of each line; with an empty old_string it creates a new file.
func NewReplace(ws *workspace.Workspace) tools.Tool {
	return &replaceTool{ws: ws, info: tools.Info{
		Name:        "replace",
		DisplayName: "Edit",
		Description: "Replaces exact text in a file. old_string must occur once (or expected_replacements times, or any number with allow_multiple): " +
			"literal, unescaped, with its whitespace and enough lines around the change, about 3, to be unique. " +
			"Failing an exact match, one that differs only in indentation and trailing whitespace is taken (new_string re-indented), " +
			"then, for one replacement, a single fuzzy match (the same tokens, or within an edit distance of a tenth); the result says so. " +
			"An empty old_string creates a new file. The result shows the changed code, and says if the user changed new_string.",
		Kind:       tools.KindEdit,
		Source:     tools.SourceBuiltin,
		Parameters: tools.Parameters[replaceArgs](false),
	}}
}

func (t *replaceTool) Info() tools.Info { return t.info }

type replaceArgs struct {
	FilePath    string `json:"file_path"`
	Instruction string `json:"instruction,omitempty" jsonschema:"What the change does and why, shown to the user with it."`
	// OldString and NewString are pointers so that a missing one is told from an
	// empty one, which is meaningful (an empty old_string creates a file).
	OldString            *string  `json:"old_string" jsonschema:"The exact text to replace; empty to create a file."`
	NewString            *string  `json:"new_string" jsonschema:"The exact text to put in its place."`
	AllowMultiple        bool     `json:"allow_multiple,omitempty" jsonschema:"Replace every occurrence." schema:"default=false"`
	ExpectedReplacements *float64 `json:"expected_replacements,omitempty" jsonschema:"How many occurrences to replace; another count fails (default 1)." schema:"type=integer,minimum=1"`
}

func (t *replaceTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var a replaceArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	var missing []string
	if a.OldString == nil {
		missing = append(missing, `"old_string"`)
	}
	if a.NewString == nil {
		missing = append(missing, `"new_string"`)
	}
	if len(missing) > 0 {
		return nil, tools.Errorf(tools.ErrInvalidParams, "missing required parameter %s", strings.Join(missing, ", "))
	}
	n, err := intParam("expected_replacements", a.ExpectedReplacements)
	if err != nil {
		return nil, err
	}
	abs, err := resolvePath(t.ws, "file_path", a.FilePath)
	if err != nil {
		return nil, err
	}
	c := &replaceCall{
		ws:          t.ws,
		path:        a.FilePath,
		abs:         abs,
		old:         normalizeNewlines(*a.OldString),
		new:         normalizeNewlines(*a.NewString),
		want:        Expect{All: a.AllowMultiple, Count: n},
		instruction: a.Instruction,
	}
	if c.old != "" && c.old == c.new {
		return nil, tools.Errorf(tools.ErrEditNoChange, "No changes to apply. The old_string and new_string are identical in file: %s", t.ws.Rel(abs))
	}
	if fi, err := t.ws.Stat(abs); err == nil && fi.IsDir() {
		return nil, fileError(t.ws, abs, fmt.Errorf("%s: %w", abs, workspace.ErrIsDirectory))
	}
	return c, nil
}

type replaceCall struct {
	ws          *workspace.Workspace
	path        string
	abs         string
	old, new    string
	want        Expect
	instruction string

	mu       sync.Mutex
	override *string // a person's version of the whole new content

	basis basis
}

func (c *replaceCall) Describe() string {
	return fmt.Sprintf("Edit %s: %s => %s", c.ws.Rel(c.abs), snippet(c.old), snippet(c.new))
}

// snippet shortens s to its first line, at most 30 characters, for a one-line title.
func snippet(s string) string {
	s = strings.TrimSpace(s)
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = s[:i], true
	}
	if r := []rune(s); len(r) > 30 {
		s, cut = string(r[:30]), true
	}
	if cut {
		s += "..."
	}
	return s
}

func (c *replaceCall) Locations() []tools.Location { return []tools.Location{{Path: c.abs}} }

// Modify makes the call write exactly newContent, a person's edited version of the
// proposed file.
func (c *replaceCall) Modify(newContent string) error {
	s := normalizeNewlines(newContent)
	c.mu.Lock()
	c.override = &s
	c.mu.Unlock()
	return nil
}

// editPlan is the change a call makes to the file as it is now.
type editPlan struct {
	change
	count    int
	flexible bool
	modified bool
	// fuzzy is set when old_string was found only by the fuzzy stage.
	fuzzy *fuzzyMatch
}

// read resolves the path again and reads the file as it is now (nil: it does not
// exist).
func (c *replaceCall) read() (string, *workspace.File, error) {
	abs, err := resolvePath(c.ws, "file_path", c.path)
	if err != nil {
		return "", nil, err
	}
	cur, err := readCurrent(c.ws, abs, "edit")
	if err != nil {
		return "", nil, err
	}
	return abs, cur, nil
}

// plan computes the new text of cur, the file at abs.
func (c *replaceCall) plan(abs string, cur *workspace.File) (*editPlan, error) {
	rel := c.ws.Rel(abs)
	c.mu.Lock()
	override := c.override
	c.mu.Unlock()
	p := &editPlan{change: change{abs: abs, rel: rel, old: cur}, modified: override != nil}
	switch {
	case cur == nil && c.old != "":
		return nil, tools.Errorf(tools.ErrFileNotFound,
			"File not found: %s. Cannot apply the edit: the file does not exist. Check the path (list_directory shows what exists), or use an empty old_string to create a new file.", rel)
	case cur == nil && override != nil:
		p.new = *override
		return p, nil
	case cur == nil:
		if err := checkPlaceholder("new_string", c.new, "", "the new file's complete content"); err != nil {
			return nil, err
		}
		p.new = c.new
		return p, nil
	case c.old == "":
		return nil, tools.Errorf(tools.ErrAttemptToCreateExists,
			"Failed to edit. Attempted to create a file that already exists: %s. To change it, give the text to replace in old_string; to replace all of it, use write_file.", rel)
	}
	if override != nil {
		p.new = cur.Format.WithFinalNewline(*override)
		return p, nil
	}
	if err := checkPlaceholder("new_string", c.new, cur.Text, "the replacement text in full"); err != nil {
		return nil, err
	}
	text, n, flexible, err := Replace(cur.Text, c.old, c.new, c.want)
	var nf *NotFoundError
	if errors.As(err, &nf) && !nf.Escaped && !c.want.All && c.want.Count <= 1 {
		// One replacement was asked for and none found: try the fuzzy stage.
		fm := fuzzyReplace(cur.Text, c.old, c.new)
		if fm.text == "" {
			return nil, c.matchError(rel, err, &fm)
		}
		text, n, p.fuzzy = fm.text, 1, &fm
		err = nil
	}
	if err != nil {
		return nil, c.matchError(rel, err, nil)
	}
	text = cur.Format.WithFinalNewline(text)
	if text == cur.Text {
		return nil, tools.Errorf(tools.ErrEditNoChange, "No changes to apply: replacing old_string with new_string leaves %s unchanged.", rel)
	}
	p.new, p.count, p.flexible = text, n, flexible
	return p, nil
}

// matchError turns an error of Replace into what the model needs to retry; fm is what
// the fuzzy stage found, if it ran.
func (c *replaceCall) matchError(rel string, err error, fm *fuzzyMatch) error {
	var nf *NotFoundError
	var ce *CountError
	switch {
	case errors.As(err, &nf):
		var b strings.Builder
		fmt.Fprintf(&b, "Failed to edit, 0 occurrences found for old_string in %s. No edits made. "+
			"The exact text in old_string was not found, not even ignoring the indentation and trailing whitespace of each line. "+
			"Ensure you're not escaping content incorrectly and check whitespace, indentation, and context. "+
			"Use the read_file tool to read the file's current content, then try again.", rel)
		if nf.WhitespaceLine > 0 {
			fmt.Fprintf(&b, " Note: old_string matches the text starting at line %d if the whitespace inside lines is ignored, so it failed only because of whitespace (spaces or tabs within a line differ); copy that text exactly as read_file shows it.", nf.WhitespaceLine)
		}
		if nf.Escaped {
			b.WriteString(` Note: old_string would match if its backslash escapes (such as \n, \t or \") were unescaped; give old_string and new_string as literal text, not escaped.`)
		}
		if fm != nil && fm.candidates > 1 {
			fmt.Fprintf(&b, " A fuzzy match (%s) found %d places that nearly match, starting at lines %s, so none was edited: copy old_string exactly from the one you mean.",
				fm.kind, fm.candidates, joinInts(fm.lines))
		}
		return &tools.Error{Type: tools.ErrEditNoOccurrence, Message: b.String(), Err: err}
	case errors.As(err, &ce):
		var b strings.Builder
		fmt.Fprintf(&b, "Failed to edit, expected %d %s but found %d for old_string in file: %s.", ce.Expected, plural(ce.Expected, "occurrence", "occurrences"), ce.Found, rel)
		if ce.Flexible {
			b.WriteString(" (old_string does not occur exactly; these occurrences match it when the indentation and trailing whitespace of each line are ignored.)")
		}
		if ce.Expected == 1 && c.want.Count == 0 {
			fmt.Fprintf(&b, " No edits made. Include more surrounding context in old_string so that it matches exactly one place, or set allow_multiple to true to replace all %d.", ce.Found)
		} else {
			fmt.Fprintf(&b, " No edits made. Check the number: set expected_replacements to %d to replace all of them, or make old_string more specific.", ce.Found)
		}
		return &tools.Error{Type: tools.ErrEditOccurrenceCount, Message: b.String(), Err: err}
	}
	return tools.Errorf(tools.ErrExecutionFailed, "editing %s: %w", rel, err)
}

// Confirmation proposes the edit of the file as it is now, and holds Execute to that
// text.
func (c *replaceCall) Confirmation(ctx context.Context) (*confirm.Details, error) {
	abs, cur, err := readToPropose(ctx, c.ws, c.read)
	if err != nil {
		return nil, err
	}
	p, err := c.plan(abs, cur)
	if err != nil {
		return nil, err
	}
	c.basis.record(c.ws, abs, cur)
	return p.details("Confirm Edit"), nil
}

// Execute applies the edit. After a Confirmation it applies it only if the file still
// holds the text the proposal was computed from (else stale_content); the edit is
// planned again on that text so that a person's modification is applied to it.
func (c *replaceCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	abs, cur, err := c.basis.readToApply(ctx, c.ws, c.read)
	if err != nil {
		return nil, err
	}
	p, err := c.plan(abs, cur)
	if err != nil {
		return nil, err
	}
	diff, err := c.basis.commit(ctx, c.ws, p.change, c.Describe())
	if err != nil {
		return nil, err
	}
	res := &tools.Result{Diff: diff}
	switch {
	case p.old == nil:
		lines := countLines(p.new)
		res.Summary = fmt.Sprintf("Created %s (%d %s)", p.rel, lines, plural(lines, "line", "lines"))
		res.Output = fmt.Sprintf("Created new file: %s with provided content.", p.abs)
	case p.modified:
		res.Summary = "Edited " + p.rel
		res.Output = fmt.Sprintf("Successfully modified file: %s.", p.abs)
	default:
		res.Summary = fmt.Sprintf("Edited %s (%d %s)", p.rel, p.count, plural(p.count, "replacement", "replacements"))
		res.Output = fmt.Sprintf("Successfully modified file: %s (%d %s).", p.abs, p.count, plural(p.count, "replacement", "replacements"))
		switch {
		case p.fuzzy != nil:
			res.Output += fmt.Sprintf(" old_string did not occur exactly, nor ignoring whitespace; it was applied by a fuzzy match (%s) to lines %d-%d, the only place that nearly matched, and new_string was re-indented to fit. Check below that this is the change you meant.",
				p.fuzzy.describe(), p.fuzzy.first, p.fuzzy.last)
			res.Summary += " (fuzzy match)"
		case p.flexible:
			res.Output += " old_string did not occur exactly; it was matched ignoring the indentation and trailing whitespace of each line, and new_string was re-indented to fit."
		}
	}
	if p.modified {
		res.Output += " The user modified the proposed change before it was applied."
	}
	if p.old != nil {
		res.Output += "\n\n" + updatedRegion(p.old.Text, p.new)
	}
	return res, nil
}

// joinInts renders ns as "1, 5 and 9".
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// Capabilities implements tools.Invocation.
func (c *replaceCall) Capabilities() tools.Capabilities { return tools.Capabilities{Modify: c.Modify} }
