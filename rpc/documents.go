package rpc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/agentls/agentls/workspace"
)

// Document sync: the editor's open documents feed the workspace overlay, so that every
// tool reads the text the editor holds, saved or not.
//
// The server keeps each document's text exactly as the editor holds it (line endings
// and all), applies incremental changes to that text, in order, with positions in the
// negotiated encoding, and hands the result to the workspace, which keeps it in LF form
// for the tools.
//
// The hand-over is lazy: the workspace decodes and copies the whole text on every
// update, which for a large document costs more than the change itself, and an editor
// sends a change per keystroke. So a change only marks the document dirty, and the
// overlay is brought up to date (syncOverlay) whenever something is about to read it:
// when a tool call starts validating and again when it starts executing (the scheduler
// reports both to the server before the tool reads anything), before an edit is
// written, and before the unsaved files are listed. A tool running while the user types
// sees the text as of its start.

// document is a file open in the editor.
type document struct {
	uri     string // as the editor names it; edits are sent under this URI
	path    string // the overlay key
	version int32
	text    string // as the editor holds it
	lines   lineIndex
	// dirty marks text not yet handed to the workspace overlay.
	dirty bool
	// unreported marks an edit of agentls's that the editor applied but has not
	// reported with didChange yet (see editwriter.go): text and version are older than
	// what the editor holds, and the overlay holds the edited text.
	unreported bool
}

// documents are the editor's open documents, by URI and by overlay path, and the files
// the server put in the overlay itself (see editwriter.go).
type documents struct {
	mu     sync.Mutex
	byURI  map[string]*document
	byPath map[string]*document
	// held are files edited through applyEdit while the editor had not opened them:
	// the editor holds them as modified buffers, so the overlay holds the edited text
	// until the editor opens (or the server forgets) them.
	held map[string]string // path → URI
	// active is the path of the document last opened or changed: the one the user is
	// most likely looking at.
	active string
}

func newDocuments() *documents {
	return &documents{byURI: map[string]*document{}, byPath: map[string]*document{}, held: map[string]string{}}
}

// docState is what the edit writer needs of an open document.
type docState struct {
	uri     string
	version int32
	// held marks a file the editor has not opened but holds as edited by agentls: its
	// edits are sent with a null version.
	held bool
	// unreported marks an applied edit the editor has not reported yet: the editor's
	// version is unknown, and the next edit is sent with a null version too.
	unreported bool
	// bomUnits is the width of a byte-order mark at the start of the editor's text, in
	// the negotiated encoding: the overlay's text has none, the editor counts it.
	bomUnits uint32
}

// lookup returns what an edit of path needs to know, if the editor has it open or holds
// it for agentls.
func (d *documents) lookup(path string, enc workspace.PositionEncoding) (docState, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lookupLocked(path, enc)
}

// snapshot returns, consistent with each other, the editor's state of the document at
// path and the overlay's copy of it; ok is false if the editor neither has it open nor
// holds it for agentls.
func (d *documents) snapshot(path string, enc workspace.PositionEncoding, ws *workspace.Workspace) (docState, workspace.Document, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc, ok := d.byPath[path]; ok {
		doc.sync(ws)
	}
	st, ok := d.lookupLocked(path, enc)
	if !ok {
		return docState{}, workspace.Document{}, false
	}
	cur, ok := ws.Document(path)
	if !ok {
		return docState{}, workspace.Document{}, false
	}
	return st, cur, true
}

func (d *documents) lookupLocked(path string, enc workspace.PositionEncoding) (docState, bool) {
	if doc, ok := d.byPath[path]; ok {
		st := docState{uri: doc.uri, version: doc.version, unreported: doc.unreported}
		if len(doc.text) >= 3 && doc.text[:3] == "\uFEFF" {
			st.bomUnits = workspace.OffsetToPosition(doc.text, 3, enc).Character
		}
		return st, true
	}
	if u, ok := d.held[path]; ok {
		return docState{uri: u, held: true}, true
	}
	return docState{}, false
}

// sync hands the document's text to the workspace overlay if it changed since; d.mu
// is held.
func (doc *document) sync(ws *workspace.Workspace) {
	if doc.dirty {
		ws.Update(doc.path, doc.version, doc.text)
		doc.dirty = false
	}
}

// syncOverlay brings the workspace overlay up to date with every open document.
func (s *Server) syncOverlay() {
	_, _, tb, _ := s.state()
	if tb == nil {
		return
	}
	d := s.docs
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, doc := range d.byPath {
		doc.sync(tb.Workspace)
	}
}

// holdOpen records that the editor holds path, which it has not opened, with an edit
// of agentls's, and calls open to put the edited text in the overlay; unless the editor
// opened the file meanwhile, in which case its didOpen is the truth.
func (d *documents) holdOpen(path, uri string, open func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, opened := d.byPath[path]; opened {
		return
	}
	d.held[path] = uri
	open()
}

// applied records that the editor applied an edit of agentls's to the open document at
// path, sent when the document was at version: unless the editor has reported a change
// since, the edit is unreported until it does.
func (d *documents) applied(path string, version int32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc, ok := d.byPath[path]; ok && doc.version == version {
		doc.unreported = true
	}
}

// docPath returns the overlay path of a document URI: the path as the editor spells it
// when that lies under a workspace root, else its real path when that does (as tools
// name such files), else the path as spelled.
func (s *Server) docPath(docURI string) (string, error) {
	p, err := filePath(docURI)
	if err != nil {
		return "", err
	}
	_, _, tb, _ := s.state()
	if tb != nil {
		if r, err := tb.Workspace.Resolve(p); err == nil {
			return r, nil
		}
	}
	return p, nil
}

// The params of the document notifications are decoded into plain types: a document
// is known by its URI exactly as the editor spells it (a URI type would normalise it),
// and the generated decoders of go.lsp.dev/protocol take several times as long over a
// megabyte of text.

type didOpenParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
		Text    string `json:"text"`
	} `json:"textDocument"`
}

// documentParams are the params of didClose and didSave.
type documentParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
}

func (s *Server) didOpen(_ context.Context, params jsonrpc2.RawMessage) error {
	var p didOpenParams
	if err := decodeParams("textDocument/didOpen", params, &p); err != nil {
		return err
	}
	u := p.TextDocument.URI
	path, err := s.docPath(u)
	if err != nil {
		s.log.Debug("not tracking a document that is not a file", "uri", u, "error", err)
		return nil
	}
	_, _, tb, _ := s.state()
	doc := &document{uri: u, path: path, version: p.TextDocument.Version, text: p.TextDocument.Text}
	doc.lines.reset(doc.text)
	d := s.docs
	d.mu.Lock()
	if old, ok := d.byURI[u]; ok {
		delete(d.byPath, old.path)
	}
	if old, ok := d.byPath[path]; ok && old.uri != u {
		delete(d.byURI, old.uri)
	}
	d.byURI[u], d.byPath[path] = doc, doc
	d.active = path
	delete(d.held, path)
	tb.Workspace.Open(path, doc.version, doc.text)
	d.mu.Unlock()
	return nil
}

type didChangeParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
	} `json:"textDocument"`
	ContentChanges []contentChange `json:"contentChanges"`
}

// contentChange is a TextDocumentContentChangeEvent: a range and its new text, or
// (without a range) the whole new text.
type contentChange struct {
	Range *struct {
		Start workspace.Position `json:"start"`
		End   workspace.Position `json:"end"`
	} `json:"range"`
	Text string `json:"text"`
}

func (s *Server) didChange(_ context.Context, params jsonrpc2.RawMessage) error {
	var p didChangeParams
	if err := decodeParams("textDocument/didChange", params, &p); err != nil {
		return err
	}
	_, enc, _, _ := s.state()
	u := p.TextDocument.URI
	d := s.docs
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.byURI[u]
	if !ok {
		return fmt.Errorf("didChange for %s, which is not open", u)
	}
	text, err := doc.lines.apply(doc.text, p.ContentChanges, enc)
	if err != nil {
		return fmt.Errorf("didChange for %s: %w", u, err)
	}
	if p.TextDocument.Version <= doc.version {
		s.log.Warn("didChange without a newer version", "uri", u, "version", p.TextDocument.Version, "previous", doc.version)
	}
	// Whatever this change is, the editor is reporting: from here on its version is
	// the one to edit against (an edit still unreported in it is refused as stale
	// rather than applied to text nobody has seen).
	doc.text, doc.version, doc.dirty, doc.unreported = text, p.TextDocument.Version, true, false
	d.active = doc.path
	return nil
}

// apply applies the content changes of a didChange to text, in order, each to the
// result of the ones before, as LSP prescribes, and keeps the index current. Positions
// past the end of a line or of the text are clamped to it, as LSP prescribes too.
func (l *lineIndex) apply(text string, changes []contentChange, enc workspace.PositionEncoding) (string, error) {
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
}

func (l *lineIndex) reset(text string) {
	l.line, l.start, l.loneCR = 0, 0, hasLoneCR(text)
}

// offset returns the offset of pos in text and the offset of the start of its line;
// ok is false if text has no such line (the offset is then the end of the text).
func (l *lineIndex) offset(text string, pos workspace.Position, enc workspace.PositionEncoding) (off, lineStart int, ok bool) {
	if l.loneCR {
		off = workspace.PositionToOffset(text, pos, enc)
		lineStart = workspace.PositionToOffset(text, workspace.Position{Line: pos.Line}, enc)
		return off, lineStart, uint32(lineCount(text[:lineStart])) == pos.Line
	}
	ls, ok := l.lineStart(text, pos.Line)
	if !ok {
		return len(text), len(text), false
	}
	// The line's content ends at its LF, or at the CR of its CRLF.
	rest := text[ls:]
	if enc == workspace.PositionUTF8 && int(pos.Character) < len(rest) {
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
	if enc == workspace.PositionUTF8 {
		n := min(int(pos.Character), len(line))
		for n > 0 && n < len(line) && !utf8.RuneStart(line[n]) {
			n-- // inside a character: its start
		}
		return ls + n, ls, true
	}
	return ls + workspace.PositionToOffset(line, workspace.Position{Character: pos.Character}, enc), ls, true
}

// lineCount counts the line breaks of s as LSP does: LF, CRLF and lone CR.
func lineCount(s string) int {
	return strings.Count(s, "\n") + strings.Count(s, "\r") - strings.Count(s, "\r\n")
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
	if l.loneCR {
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

func (s *Server) didClose(_ context.Context, params jsonrpc2.RawMessage) error {
	var p documentParams
	if err := decodeParams("textDocument/didClose", params, &p); err != nil {
		return err
	}
	_, _, tb, _ := s.state()
	u := p.TextDocument.URI
	d := s.docs
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.byURI[u]
	if !ok {
		return nil
	}
	delete(d.byURI, u)
	delete(d.byPath, doc.path)
	tb.Workspace.Close(doc.path)
	if len(doc.text) >= largeDocument {
		s.memory.release()
	}
	return nil
}

// largeDocument is the size from which closing a document gives its memory back to the
// system (memoryReleaser); below it, what the runtime keeps is not worth a collection.
const largeDocument = 8 << 20

// memoryReleaser gives the memory of a closed large document back to the system.
//
// Dropping the last reference to a document's text (the server's and the overlay's,
// usually one shared string) frees nothing by itself. The next collection is due when
// the heap has doubled since the last one, which counted the document and the garbage
// of decoding its didOpen, so an idle server runs none until the runtime forces one
// after two minutes; and even after a collection the background scavenger returns the
// freed pages only slowly. Measured over pipes (BENCHMARKS.md): after the didClose of a
// 100 MB document, a server left alone was still at 330 MB resident 3 minutes later,
// and one that ran runtime.GC was still at 331 MB 10 s later; with debug.FreeOSMemory
// it is back at its baseline (25 MB) within about 50 ms. That runs on a goroutine of its
// own, as it is a whole collection, which the read loop must not wait for; and only for
// large documents, so that normal traffic never pays for one.
type memoryReleaser struct {
	// free does the work; debug.FreeOSMemory but in tests.
	free func()

	mu sync.Mutex
	// running is set while a goroutine is freeing; again asks it to free once more
	// when it is done, for documents closed while it ran.
	running, again bool
}

// release has the memory that is free now given back to the system, soon and without
// waiting: documents closed in a burst (an editor closing all its buffers) cost one or
// two collections, not one each.
func (m *memoryReleaser) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running {
		m.again = true
		return
	}
	m.running = true
	go m.run()
}

func (m *memoryReleaser) run() {
	for {
		m.free()
		m.mu.Lock()
		if !m.again {
			m.running = false
			m.mu.Unlock()
			return
		}
		m.again = false
		m.mu.Unlock()
	}
}

// didSave needs nothing: the overlay already has the text, and the disk now has it too.
func (s *Server) didSave(_ context.Context, params jsonrpc2.RawMessage) error {
	var p documentParams
	if err := decodeParams("textDocument/didSave", params, &p); err != nil {
		return err
	}
	s.log.Debug("saved", "uri", p.TextDocument.URI)
	return nil
}

// uri returns the URI under which to name path to the editor: the editor's own spelling
// of an open document, else the path's file URI.
func (d *documents) uri(path string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc, ok := d.byPath[path]; ok {
		return doc.uri
	}
	return string(uri.File(path))
}

// isOpen reports whether the editor has the document at path open.
func (d *documents) isOpen(path string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.byPath[path]
	return ok
}

// activePath returns the open document the user most likely looks at: the one last
// opened or changed, else the first by path; ok is false if nothing is open.
func (d *documents) activePath() (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.byPath[d.active]; ok {
		return d.active, true
	}
	var first string
	for p := range d.byPath {
		if first == "" || p < first {
			first = p
		}
	}
	return first, first != ""
}

// lineRange returns the range of line (0-based) of the document at path, from its
// start to its end, as the editor counts; a document the editor has not opened (or a
// line it does not have) gets the empty range at the line's start.
func (d *documents) lineRange(path string, line uint32, enc workspace.PositionEncoding) protocol.Range {
	start := protocol.Position{Line: line}
	r := protocol.Range{Start: start, End: start}
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.byPath[path]
	if !ok {
		return r
	}
	off := 0
	for range line {
		i := strings.IndexByte(doc.text[off:], '\n')
		if i < 0 {
			return r
		}
		off += i + 1
	}
	text := doc.text[off:]
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimSuffix(text, "\r")
	r.End.Character = workspace.OffsetToPosition(text, len(text), enc).Character
	return r
}
