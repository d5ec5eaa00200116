package rpc

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/agentls/agentls/workspace"
)

// Document sync: the editor's open documents are the workspace's (see
// workspace/documents.go), so that every tool reads the text the editor holds, saved or
// not. didOpen, didChange and didClose map straight onto workspace.Open, Change and
// Close; the workspace keeps the text, its version and line endings, and applies
// incremental changes in the negotiated position encoding. What the server keeps is
// the protocol's side of it: the URI under which the editor knows each document, and
// what an edit sent to the editor must say (see editwriter.go).

// document is a file open in the editor.
type document struct {
	uri  string // as the editor names it; edits are sent under this URI
	path string // the workspace's key
	// unreported marks an edit of agentls's that the editor applied but has not
	// reported with didChange yet (see editwriter.go): the workspace's editor text and
	// version are older than what the editor holds, and its tools' text is the edited
	// text.
	unreported bool
	// reported is closed when the editor reports the document again (or closes it):
	// what awaitReports waits on while unreported.
	reported chan struct{}
}

// report ends doc's unreported state, waking whoever waits for it; d.mu is held.
func (doc *document) report() {
	doc.unreported = false
	if doc.reported != nil {
		close(doc.reported)
		doc.reported = nil
	}
}

// documents are the editor's open documents, by URI and by workspace path, and the
// files the server put in the workspace itself (see editwriter.go).
type documents struct {
	mu sync.Mutex
	// ws is the workspace the documents are open in: set by the first didOpen (a
	// document is known here only once it is open there).
	ws     *workspace.Workspace
	byURI  map[string]*document
	byPath map[string]*document
	// held are files edited through applyEdit while the editor had not opened them:
	// the editor holds them as modified buffers, so the workspace holds the edited text
	// until the editor opens (or the server forgets) them.
	held map[string]string // path → URI
	// active is the path of the document last opened or changed: the one the user is
	// most likely looking at.
	active string
	// behind are the edits written to disk behind a plain client (editwriter.go), by
	// path, the latest last: taken back on disk too when the editor's undo takes them
	// back in the buffer, and forgotten when the document is saved or closed.
	behind map[string][]behindEdit
	// opened counts the bytes of text opened since collect last ran (see didOpen).
	opened  int
	collect memoryReleaser
}

func newDocuments() *documents {
	return &documents{byURI: map[string]*document{}, byPath: map[string]*document{}, held: map[string]string{},
		behind: map[string][]behindEdit{}, collect: memoryReleaser{free: runtime.GC}}
}

// behindEdit is an edit the server wrote to disk behind a plain client: the file's
// text before and after (LF), and its format.
type behindEdit struct {
	before, after string
	format        workspace.Format
}

// wroteBehind records an edit written to disk behind the editor.
func (d *documents) wroteBehind(path string, e behindEdit) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.behind[path] = append(d.behind[path], e)
}

// undoneBehind returns, and forgets, the edit written behind the editor that the
// editor's text of path, now text, has taken back; d.mu is held.
func (d *documents) undoneBehind(path, text string) (behindEdit, bool) {
	stack := d.behind[path]
	if len(stack) == 0 || stack[len(stack)-1].before != text {
		return behindEdit{}, false
	}
	e := stack[len(stack)-1]
	if len(stack) == 1 {
		delete(d.behind, path)
	} else {
		d.behind[path] = stack[:len(stack)-1]
	}
	return e, true
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
	// the negotiated encoding: the tools' text has none, the editor counts it.
	bomUnits uint32
}

// lookup returns what an edit of path needs to know, if the editor has it open or holds
// it for agentls.
func (d *documents) lookup(path string, enc workspace.PositionEncoding) (docState, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, _, ok := d.snapshotLocked(path, enc, d.ws)
	return st, ok
}

// snapshot returns, consistent with each other, the editor's state of the document at
// path and the workspace's record of it; ok is false if the editor neither has it open
// nor holds it for agentls.
func (d *documents) snapshot(path string, enc workspace.PositionEncoding, ws *workspace.Workspace) (docState, workspace.Document, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.snapshotLocked(path, enc, ws)
}

func (d *documents) snapshotLocked(path string, enc workspace.PositionEncoding, ws *workspace.Workspace) (docState, workspace.Document, bool) {
	var st docState
	if doc, ok := d.byPath[path]; ok {
		st = docState{uri: doc.uri, unreported: doc.unreported}
	} else if u, ok := d.held[path]; ok {
		st = docState{uri: u, held: true}
	} else {
		return docState{}, workspace.Document{}, false
	}
	if ws == nil {
		return docState{}, workspace.Document{}, false
	}
	cur, ok := ws.Document(path)
	if !ok {
		return docState{}, workspace.Document{}, false
	}
	if !st.held {
		st.version = cur.Version
		if strings.HasPrefix(cur.EditorText, "\uFEFF") {
			st.bomUnits = workspace.OffsetToPosition(cur.EditorText, 3, enc).Character
		}
	}
	return st, cur, true
}

// holdOpen records that the editor holds path, which it has not opened, with an edit
// of agentls's, and calls open to put the edited text in the workspace; unless the
// editor opened the file meanwhile, in which case its didOpen is the truth.
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
	doc, ok := d.byPath[path]
	if !ok {
		return
	}
	if v, ok := d.ws.Version(path); ok && v == version {
		doc.unreported = true
		if doc.reported == nil {
			doc.reported = make(chan struct{})
		}
	}
}

// reportWait bounds how long an edit or an undo waits for the editor to report
// agentls's earlier edit of a document (see awaitReports).
const reportWait = 3 * time.Second

// awaitReports waits until the editor has reported each of paths (every open document
// when paths is nil) that holds an edit of agentls's the editor applied but has not
// reported, for at most reportWait. Until that report the server cannot know whether
// the person typed into the buffer meanwhile: an edit made against the text it knows
// would be applied, without a version, over typing nobody has seen. Editors report
// within milliseconds unless loaded or busy (eglot reports from an idle timer), so the
// wait is short or none; past its bound the edit goes as before, with a null version,
// and a log line says so.
func (d *documents) awaitReports(ctx context.Context, paths []string, log *slog.Logger) {
	type wait struct {
		doc *document
		ch  chan struct{}
	}
	d.mu.Lock()
	var waits []wait
	add := func(doc *document) {
		if doc != nil && doc.reported != nil { // set only while unreported
			waits = append(waits, wait{doc, doc.reported})
		}
	}
	if paths == nil {
		for _, doc := range d.byPath {
			add(doc)
		}
	}
	for _, p := range paths {
		add(d.byPath[p])
	}
	d.mu.Unlock()
	if len(waits) == 0 {
		return
	}
	timer := time.NewTimer(reportWait)
	defer timer.Stop()
	for i, w := range waits {
		select {
		case <-w.ch:
		case <-ctx.Done():
			return
		case <-timer.C:
			// Given up on these reports: the next edit of the same call or command does
			// not wait for them again; an edit applied later waits for its own.
			var names []string
			d.mu.Lock()
			for _, w := range waits[i:] {
				if w.doc.reported == w.ch {
					close(w.ch)
					w.doc.reported = nil
					names = append(names, w.doc.path)
				}
			}
			d.mu.Unlock()
			if len(names) > 0 {
				log.Warn("the editor has not reported agentls's earlier edit; editing without a version", "paths", names, "waited", reportWait)
			}
			return
		}
	}
}

// docPath returns the workspace path of a document URI: the path as the editor spells
// it when that lies under a workspace root, else its real path when that does (as tools
// name such files), else the path as spelled.
func (s *Server) docPath(docURI string) (string, error) {
	p, err := filePath(docURI)
	if err != nil {
		return "", err
	}
	_, _, tb := s.state()
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
	_, _, tb := s.state()
	// After the documents' lock is let go: the diagnostics' lock comes first.
	defer s.republish(u)
	d := s.docs
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ws = tb.Workspace
	if old, ok := d.byURI[u]; ok && old.path != path {
		// Known under another path before (the roots changed): not open there any more.
		old.report()
		delete(d.byPath, old.path)
		d.ws.Close(old.path)
	}
	if old, ok := d.byPath[path]; ok {
		old.report()
		if old.uri != u {
			delete(d.byURI, old.uri)
		}
	}
	doc := &document{uri: u, path: path}
	d.byURI[u], d.byPath[path] = doc, doc
	d.active = path
	delete(d.held, path)
	d.ws.Open(path, p.TextDocument.Version, p.TextDocument.Text)
	// Decoding a didOpen leaves about twice its text as garbage (the message, the
	// unquoted bytes the text is made of), and the runtime lets garbage grow as large as
	// the live heap before it collects: an editor opening many documents at once would
	// leave agentls resident at about twice their text. A collection every few
	// megabytes of text opened keeps it near the text itself (BenchmarkOpen1000Documents).
	if d.opened += len(p.TextDocument.Text); d.opened >= collectAfterOpening {
		d.opened = 0
		d.collect.release()
	}
	return nil
}

// collectAfterOpening is how much text opened calls for a collection (see didOpen).
const collectAfterOpening = 4 << 20

type didChangeParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
	} `json:"textDocument"`
	ContentChanges []workspace.TextChange `json:"contentChanges"`
}

func (s *Server) didChange(_ context.Context, params jsonrpc2.RawMessage) error {
	var p didChangeParams
	if err := decodeParams("textDocument/didChange", params, &p); err != nil {
		return err
	}
	_, enc, _ := s.state()
	u := p.TextDocument.URI
	d := s.docs
	var undo *workspace.Change
	defer func() {
		// After the lock: the disk is no business of the documents' lock.
		if undo != nil {
			s.undoBehind(*undo)
		}
	}()
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.byURI[u]
	if !ok {
		return fmt.Errorf("didChange for %s, which is not open", u)
	}
	if prev, ok := d.ws.Version(doc.path); ok && p.TextDocument.Version <= prev {
		s.log.Warn("didChange without a newer version", "uri", u, "version", p.TextDocument.Version, "previous", prev)
	}
	if err := d.ws.Change(doc.path, p.TextDocument.Version, p.ContentChanges, enc); err != nil {
		return fmt.Errorf("didChange for %s: %w", u, err)
	}
	// Whatever this change is, the editor is reporting: from here on its version is
	// the one to edit against (an edit still unreported in it is refused as stale
	// rather than applied to text nobody has seen).
	doc.report()
	d.active = doc.path
	if len(d.behind[doc.path]) > 0 {
		if now, ok := d.ws.Document(doc.path); ok {
			if e, ok := d.undoneBehind(doc.path, now.Text); ok {
				undo = &workspace.Change{Path: doc.path, Old: &workspace.File{Path: doc.path, Text: e.after, Format: e.format}, New: e.before}
			}
		}
	}
	return nil
}

// undoBehind writes back to disk the text from before an edit that was written behind
// a plain client (editwriter.go) and that the editor's undo has just taken back: the
// editor takes the buffer for saved again, as it was before the edit, and so must the
// file be. Only if the file still holds what the server wrote.
func (s *Server) undoBehind(c workspace.Change) {
	if err := (workspace.DiskWriter{}).Write(s.ctx, c); err != nil {
		s.log.Info("an undone edit was not taken back on disk", "path", c.Path, "err", err)
		return
	}
	s.log.Debug("undone edit taken back on disk", "path", c.Path)
}

func (s *Server) didClose(_ context.Context, params jsonrpc2.RawMessage) error {
	var p documentParams
	if err := decodeParams("textDocument/didClose", params, &p); err != nil {
		return err
	}
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
	delete(d.behind, doc.path)
	doc.report()
	if d.ws.Close(doc.path) >= largeDocument {
		s.memory.release()
	}
	return nil
}

// largeDocument is the size from which closing a document gives its memory back to the
// system (memoryReleaser); below it, what the runtime keeps is not worth a collection.
const largeDocument = 8 << 20

// memoryReleaser gives the memory of a closed large document back to the system.
//
// Dropping the last reference to a document's text (the workspace's editor text and
// tools' text, usually one shared string) frees nothing by itself. The next collection is due when
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

// didSave: the workspace already has the text, and the disk now has it too.
func (s *Server) didSave(_ context.Context, params jsonrpc2.RawMessage) error {
	var p documentParams
	if err := decodeParams("textDocument/didSave", params, &p); err != nil {
		return err
	}
	s.log.Debug("saved", "uri", p.TextDocument.URI)
	// What the editor saved is its own: earlier edits are no longer taken back on disk.
	d := s.docs
	d.mu.Lock()
	if doc, ok := d.byURI[p.TextDocument.URI]; ok {
		delete(d.behind, doc.path)
	}
	d.mu.Unlock()
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
	if _, ok := d.byPath[path]; !ok {
		return r
	}
	end, ok := d.ws.EditorLineEnd(path, line, enc)
	if !ok {
		return r
	}
	r.End.Character = end
	return r
}
