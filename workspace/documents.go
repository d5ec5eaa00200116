package workspace

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Open documents. The workspace is the one owner of the text of the documents open in
// the editor: an editor front end feeds the editor's didOpen, didChange and didClose
// straight to Open, Change and Close, and every tool reads that text through Document
// and ReadText, with nothing to bring up to date in between.
//
// A document keeps two texts. The editor's text is exactly what the editor reported,
// its line endings and byte-order mark included: incremental changes apply to it, with
// positions in the editor's encoding, and the editor's positions count in it. The
// tools' text is its LF form (see decodeEditorText), derived on the first read after a
// change rather than on every change: an editor sends a change per keystroke, and
// deriving costs a pass over the whole text (a copy where it has CRLF line endings),
// far more than the change itself in a large document. Text that needs no decoding (no
// CR, no byte-order mark: most text) is its own LF form, shared rather than copied, and
// costs nothing to derive.
//
// After Commit writes an edit of an open document, the tools' text is the edited text
// at once, so that the next tool reads it, while the editor's text stays what the
// editor last reported: the editor reports the edit with a change of its own, relative
// to the text it last reported.

// ErrNotOpen reports a change of a document that is not open.
var ErrNotOpen = errors.New("document not open")

// Document is a file open in the editor: its current text (LF line endings) and the
// editor's version of it.
type Document struct {
	Path    string
	Version int32
	Text    string
	// Format is the format the document was opened with; its text is kept in LF form.
	Format Format
	// EditorText is the text as the editor last reported it, line endings and
	// byte-order mark included: the text that the editor's positions count in. After
	// Commit writes an edit of the document it lags Text until the editor reports the
	// edit.
	EditorText string
}

// TextChange is one change of a document as the editor reports it (LSP's
// TextDocumentContentChangeEvent): the text in Range replaced with Text or, without a
// Range, the whole text replaced.
type TextChange struct {
	Range *Range `json:"range"`
	Text  string `json:"text"`
}

// openDocument is the workspace's record of an open document; Workspace.mu guards it.
type openDocument struct {
	path    string
	version int32
	format  Format
	// editor is the text as the editor last reported it, and lines its index.
	editor string
	lines  lineIndex
	// text is the tools' text when current is set: derived from editor, or the text
	// of an edit committed since the editor last reported.
	text    string
	current bool
}

func newOpenDocument(path string, version int32, text string) *openDocument {
	t, f := decodeEditorText(text)
	d := &openDocument{path: path, version: version, format: f, editor: text, text: t, current: true}
	d.lines.reset(text)
	return d
}

// derive makes the tools' text current.
func (d *openDocument) derive() {
	if d.current {
		return
	}
	if !d.lines.cr && !mayStartWithBOM(d.editor) {
		// What decodeEditorText would return, found without reading the text.
		d.text = d.editor
	} else {
		d.text, _ = decodeEditorText(d.editor)
	}
	d.current = true
}

// mayStartWithBOM reports whether text starts with a byte that begins a byte-order
// mark: text that does not, and has no CR, decodes to itself.
func mayStartWithBOM(text string) bool {
	return text != "" && (text[0] == 0xEF || text[0] == 0xFE || text[0] == 0xFF)
}

// document returns a copy of d; its text must be current.
func (d *openDocument) document() Document {
	return Document{Path: d.path, Version: d.version, Text: d.text, Format: d.format, EditorText: d.editor}
}

// Open records a document opened in the editor with its text as the editor holds it,
// replacing any earlier record. Paths are absolute; documents are keyed by their
// cleaned form.
func (w *Workspace) Open(path string, version int32, text string) {
	path = filepath.Clean(path)
	d := newOpenDocument(path, version, text)
	w.mu.Lock()
	w.overlay[path] = d
	w.mu.Unlock()
}

// Update replaces the whole text of an open document with the editor's. It reports
// false if the document is not open.
func (w *Workspace) Update(path string, version int32, text string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.overlay[filepath.Clean(path)]
	if !ok {
		return false
	}
	d.editor, d.version, d.text, d.current = text, version, "", false
	d.lines.reset(text)
	return true
}

// Change applies the changes the editor reports for an open document, in order, each
// to the result of the ones before, as LSP prescribes, with positions in enc; the
// document is then at version. Positions past the end of a line or of the text are
// clamped to it, as LSP prescribes too. A change of a document that is not open is
// ErrNotOpen; when a change cannot be applied, none is.
func (w *Workspace) Change(path string, version int32, changes []TextChange, enc PositionEncoding) error {
	path = filepath.Clean(path)
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.overlay[path]
	if !ok {
		return fmt.Errorf("changing %s: %w", path, ErrNotOpen)
	}
	text, err := d.lines.apply(d.editor, changes, enc)
	if err != nil {
		d.lines.reset(d.editor) // it may describe a text half changed
		return fmt.Errorf("changing %s: %w", path, err)
	}
	// Whatever the change, it is the editor's text from now on, and an edit committed
	// since the last report is in it or was overtaken by it.
	d.editor, d.version, d.text, d.current = text, version, "", false
	return nil
}

// Close forgets an open document; tools read it from disk again. It returns the size
// in bytes of the editor's text it held (0 if the document was not open), for a front
// end to judge whether memory is worth giving back.
func (w *Workspace) Close(path string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	path = filepath.Clean(path)
	d, ok := w.overlay[path]
	if !ok {
		return 0
	}
	delete(w.overlay, path)
	delete(w.edited, path)
	return max(len(d.editor), len(d.text))
}

// Unsaved returns the files Commit edited that are open with a text other than the
// file's on disk, sorted: edits an editor writer made to its buffers that are not
// saved yet, which a program reading the disk (a shell command) does not see. A file
// closed since is not listed: closing saved or discarded the edit.
func (w *Workspace) Unsaved() []string {
	w.mu.Lock()
	edited := slices.Collect(maps.Keys(w.edited))
	w.mu.Unlock()
	slices.Sort(edited)
	var out []string
	for _, p := range edited {
		doc, open := w.Document(p)
		if !open {
			continue
		}
		if data, err := os.ReadFile(p); err == nil {
			if text, _, err := Decode(data); err == nil && text == doc.Text {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// Document returns a copy of the open document at path, if there is one.
func (w *Workspace) Document(path string) (Document, bool) {
	path = filepath.Clean(path)
	w.mu.RLock()
	d, ok := w.overlay[path]
	if !ok || d.current {
		defer w.mu.RUnlock()
		if !ok {
			return Document{}, false
		}
		return d.document(), true
	}
	w.mu.RUnlock()
	// Changed since the last read: derive the tools' text, once for every reader.
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok = w.overlay[path]
	if !ok {
		return Document{}, false
	}
	d.derive()
	return d.document(), true
}

// Documents returns copies of every open document.
func (w *Workspace) Documents() []Document {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Document, 0, len(w.overlay))
	for _, d := range w.overlay {
		d.derive()
		out = append(out, d.document())
	}
	return out
}

// binarySniffLen is how much of a text IsBinary looks at: decodeEditorText passes it
// no more, rather than copy a whole document to bytes.
const binarySniffLen = 8192

// decodeEditorText turns an editor's text into the tools' LF form and the format to
// write it back in, as Decode does for stored bytes.
//
// Text already in that form (UTF-8 without a byte-order mark, no CR: most text) is
// returned as it is rather than through Decode, which would copy it twice, to bytes and
// back. The tools' text then shares the editor's instead of being a copy of its own:
// for a 100 MB document, 100 MB less for as long as it is open, and 200 MB less garbage
// on every update of it.
func decodeEditorText(text string) (string, Format) {
	if !strings.HasPrefix(text, "\uFEFF") && strings.IndexByte(text, '\r') < 0 &&
		!IsBinary([]byte(text[:min(len(text), binarySniffLen)])) && utf8.ValidString(text) {
		return text, Format{Encoding: UTF8, FinalNewline: strings.HasSuffix(text, "\n")}
	}
	t, f, err := Decode([]byte(text))
	if err != nil {
		// Editors hold any text; keep it as it is rather than lose it.
		return text, Format{Encoding: UTF8}
	}
	return t, f
}

// apply applies changes to text, in order, each to the result of the ones before, and
// keeps the index current. Positions past the end of a line or of the text are clamped
// to it.
func (l *lineIndex) apply(text string, changes []TextChange, enc PositionEncoding) (string, error) {
	for i, c := range changes {
		if c.Range == nil {
			text = c.Text
			l.reset(text)
			continue
		}
		sPos, ePos := c.Range.Start, c.Range.End
		start, lineStart, ok := l.offset(text, sPos, enc)
		end, _, _ := l.offset(text, ePos, enc)
		if end < start {
			return "", fmt.Errorf("change %d: the range ends (%d:%d) before it starts (%d:%d)", i,
				ePos.Line, ePos.Character, sPos.Line, sPos.Character)
		}
		text = text[:start] + c.Text + text[end:]
		if !ok {
			sPos.Line, lineStart = 0, 0 // past the last line: remember the first
		}
		l.changed(text, sPos.Line, lineStart, start, len(c.Text))
	}
	return text, nil
}

// lineIndex turns positions into offsets quickly in a large document that changes a
// little at a time: it remembers the start of the line last found, which the next
// change (typing goes on where it was) is usually at or near, and it counts line
// breaks with a byte search while the text has no lone CR (CRLF and LF end lines;
// a lone CR is a line break too in LSP, and sends the index to the general, slower
// conversion).
type lineIndex struct {
	line   uint32 // a line of the text, and
	start  int    // the offset where it starts
	loneCR bool   // the text may hold a CR that is not part of a CRLF
	cr     bool   // the text may hold a CR at all (and so need decoding for the tools)
}

func (l *lineIndex) reset(text string) {
	l.cr = strings.IndexByte(text, '\r') >= 0
	l.line, l.start, l.loneCR = 0, 0, l.cr && hasLoneCR(text)
}

// offset returns the offset of pos in text and the offset of the start of its line;
// ok is false if text has no such line (the offset is then the end of the text).
func (l *lineIndex) offset(text string, pos Position, enc PositionEncoding) (off, lineStart int, ok bool) {
	if l.loneCR {
		off = PositionToOffset(text, pos, enc)
		lineStart = PositionToOffset(text, Position{Line: pos.Line}, enc)
		return off, lineStart, uint32(lineCount(text[:lineStart])) == pos.Line
	}
	ls, ok := l.lineStart(text, pos.Line)
	if !ok {
		return len(text), len(text), false
	}
	// The line's content ends at its LF, or at the CR of its CRLF.
	rest := text[ls:]
	if enc == PositionUTF8 && int(pos.Character) < len(rest) {
		rest = rest[:pos.Character+1] // enough to see a line end within the range
	}
	lineEnd := len(rest)
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		lineEnd = i
		if i > 0 && rest[i-1] == '\r' {
			lineEnd--
		}
	}
	line := rest[:lineEnd]
	if enc == PositionUTF8 {
		n := min(int(pos.Character), len(line))
		for n > 0 && n < len(line) && !utf8.RuneStart(line[n]) {
			n-- // inside a character: its start
		}
		return ls + n, ls, true
	}
	return ls + PositionToOffset(line, Position{Character: pos.Character}, enc), ls, true
}

// lineStart returns the offset of the start of line n, from the remembered line; ok is
// false if the text has fewer lines.
func (l *lineIndex) lineStart(text string, n uint32) (int, bool) {
	line, off := l.line, l.start
	if n < line && line-n > n {
		line, off = 0, 0 // nearer to the top than to the remembered line
	}
	for line < n {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text), false
		}
		off += i + 1
		line++
	}
	for line > n {
		// off starts line; the LF before it ends the previous one.
		off = strings.LastIndexByte(text[:off-1], '\n') + 1
		line--
	}
	l.line, l.start = line, off
	return off, true
}

// changed updates the index after the text at [start, …) was replaced by n bytes;
// line starts at lineStart, which the change did not move.
func (l *lineIndex) changed(text string, line uint32, lineStart, start, n int) {
	l.line, l.start = line, lineStart
	if !l.cr && strings.IndexByte(text[start:start+n], '\r') >= 0 {
		l.cr = true
	}
	if l.loneCR || !l.cr {
		return
	}
	// Only the replaced stretch and its edges can have made a lone CR.
	from, to := max(start-1, 0), min(start+n+1, len(text))
	l.loneCR = hasLoneCR(text[from:to]) && loneCRAt(text, from, to)
}

func hasLoneCR(s string) bool { return loneCRAt(s, 0, len(s)) }

// loneCRAt reports whether text[from:to] holds a CR not followed (in text) by an LF.
func loneCRAt(text string, from, to int) bool {
	for from < to {
		i := strings.IndexByte(text[from:to], '\r')
		if i < 0 {
			return false
		}
		from += i
		if from+1 >= len(text) || text[from+1] != '\n' {
			return true
		}
		from++
	}
	return false
}

// Version returns the editor's version of the open document at path; ok is false if
// it is not open. Unlike Document it does not derive the tools' text.
func (w *Workspace) Version(path string) (version int32, ok bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	d, ok := w.overlay[filepath.Clean(path)]
	if !ok {
		return 0, false
	}
	return d.version, true
}

// EditorLineEnd returns the position, in enc, of the end of line (0-based) of the open
// document at path as the editor holds it: the width of the line before its line
// break, byte-order mark included. ok is false if the document is not open or has no
// such line.
func (w *Workspace) EditorLineEnd(path string, line uint32, enc PositionEncoding) (uint32, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	d, ok := w.overlay[filepath.Clean(path)]
	if !ok {
		return 0, false
	}
	text := d.editor
	off := 0
	for range line {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return 0, false
		}
		off += i + 1
	}
	text = text[off:]
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimSuffix(text, "\r")
	return OffsetToPosition(text, len(text), enc).Character, true
}
