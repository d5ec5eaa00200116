package lsptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Position is an LSP position; Character counts units of the editor's encoding.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is an LSP range.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// TextEdit is an LSP text edit, possibly annotated.
type TextEdit struct {
	Range        Range  `json:"range"`
	NewText      string `json:"newText"`
	AnnotationID string `json:"annotationId,omitempty"`
}

// Change is one content change of a didChange: Range nil replaces the whole document.
type Change struct {
	Range *Range `json:"range,omitempty"`
	Text  string `json:"text"`
}

// Doc is a document as the editor holds it.
type Doc struct {
	URI     string
	Version int32
	Text    string
	// Open reports that the server was told with didOpen; a buffer the editor loaded
	// to apply an edit to a file it had not opened is not.
	Open bool
}

// AppliedEdit records a workspace/applyEdit the editor applied.
type AppliedEdit struct {
	Label string
	// URIs are the documents it changed or created, in order.
	URIs []string
	// Annotations are the labels of its change annotations, by id.
	Annotations map[string]string
	// Edits are the text edits per URI, as sent.
	Edits map[string][]TextEdit
	// Deleted are the documents it deleted, with their files.
	Deleted []string
}

// Editor models the documents of an editor: what it opened (and told the server of)
// and the buffers it holds. As the default handler of workspace/applyEdit it applies
// edits as an editor does: it refuses one made for another version of a document, and
// reports an applied change to an open document with didChange before it answers.
type Editor struct {
	c       *Client
	mu      sync.Mutex
	enc     string
	docs    map[string]*Doc
	applied []AppliedEdit
	// late holds back didChange notifications until Flush (see ReportLate); deferred
	// are those held back, in order.
	late     bool
	deferred []map[string]any
}

func newEditor(c *Client) *Editor {
	return &Editor{c: c, enc: "utf-16", docs: map[string]*Doc{}}
}

// SetEncoding sets the position encoding the server negotiated.
func (e *Editor) SetEncoding(enc string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.enc = enc
}

// ReportLate makes the editor report its changes late, as eglot does (it sends didChange
// from an idle timer, never while a request of its own is waiting): from now on, until
// ReportLate(false), every didChange is held back until Flush, edits applied for the
// server included.
func (e *Editor) ReportLate(late bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.late = late
}

// Flush sends the didChange notifications held back, in order.
func (e *Editor) Flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for len(e.deferred) > 0 {
		p := e.deferred[0]
		e.deferred = e.deferred[1:]
		if err := e.c.Notify("textDocument/didChange", p); err != nil {
			return err
		}
	}
	return nil
}

// didChange sends (or, reporting late, holds back) a didChange; e.mu is held, so that
// changes reach the server in order.
func (e *Editor) didChange(uri string, version int32, changes []Change) error {
	p := map[string]any{"textDocument": map[string]any{"uri": uri, "version": version}, "contentChanges": changes}
	if e.late || len(e.deferred) > 0 {
		e.deferred = append(e.deferred, p)
		return nil
	}
	return e.c.Notify("textDocument/didChange", p)
}

// Open opens a document (version 1) and tells the server.
func (e *Editor) Open(uri, text string) error {
	e.mu.Lock()
	e.docs[uri] = &Doc{URI: uri, Version: 1, Text: text, Open: true}
	e.mu.Unlock()
	return e.c.Notify("textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": text},
	})
}

// Change applies changes to an open document, in order, and sends them to the server
// with the next version.
func (e *Editor) Change(uri string, changes ...Change) error {
	e.mu.Lock()
	doc, ok := e.docs[uri]
	if !ok || !doc.Open {
		e.mu.Unlock()
		return fmt.Errorf("%s is not open", uri)
	}
	text := doc.Text
	for i, ch := range changes {
		if ch.Range == nil {
			text = ch.Text
			continue
		}
		start, end := Offset(text, ch.Range.Start, e.enc), Offset(text, ch.Range.End, e.enc)
		if end < start {
			e.mu.Unlock()
			return fmt.Errorf("change %d ends before it starts", i)
		}
		text = text[:start] + ch.Text + text[end:]
	}
	doc.Text = text
	doc.Version++
	version := doc.Version
	defer e.mu.Unlock()
	return e.didChange(uri, version, changes)
}

// Close closes a document and tells the server.
func (e *Editor) Close(uri string) error {
	e.mu.Lock()
	delete(e.docs, uri)
	e.mu.Unlock()
	return e.c.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
}

// Save writes a document to disk and tells the server, if it had it open.
func (e *Editor) Save(uri string) error {
	e.mu.Lock()
	doc, ok := e.docs[uri]
	var text string
	if ok {
		text = doc.Text
	}
	e.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s is not held by the editor", uri)
	}
	path, err := URIPath(uri)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	if !doc.Open {
		return nil
	}
	return e.c.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
}

// Doc returns a copy of the document or buffer the editor holds for uri.
func (e *Editor) Doc(uri string) (Doc, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.docs[uri]
	if !ok {
		return Doc{}, false
	}
	return *d, true
}

// Applied returns the edits applied so far.
func (e *Editor) Applied() []AppliedEdit {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.applied)
}

// ApplyParams are the params of workspace/applyEdit.
type ApplyParams struct {
	Label string `json:"label"`
	Edit  struct {
		Changes           map[string][]TextEdit `json:"changes"`
		DocumentChanges   []json.RawMessage     `json:"documentChanges"`
		ChangeAnnotations map[string]struct {
			Label             string `json:"label"`
			NeedsConfirmation bool   `json:"needsConfirmation"`
		} `json:"changeAnnotations"`
	} `json:"edit"`
}

// ApplyResult is the result of workspace/applyEdit.
type ApplyResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
}

// ApplyEdit is the editor's workspace/applyEdit handler; a test's own handler may call
// it to apply an edit after inspecting it.
func (e *Editor) ApplyEdit(_ context.Context, params json.RawMessage) (any, error) {
	var p ApplyParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &ResponseError{Code: CodeInvalidParams, Message: err.Error()}
	}
	res, err := e.apply(p)
	if err != nil {
		return ApplyResult{Applied: false, FailureReason: err.Error()}, nil
	}
	return res, nil
}

type docEdit struct {
	uri     string
	version *int32
	create  bool
	delete  bool
	edits   []TextEdit
}

func (e *Editor) apply(p ApplyParams) (ApplyResult, error) {
	var ops []docEdit
	for u, edits := range p.Edit.Changes {
		ops = append(ops, docEdit{uri: u, edits: edits})
	}
	for i, raw := range p.Edit.DocumentChanges {
		var dc struct {
			Kind         string `json:"kind"`
			URI          string `json:"uri"`
			TextDocument *struct {
				URI     string `json:"uri"`
				Version *int32 `json:"version"`
			} `json:"textDocument"`
			Edits []TextEdit `json:"edits"`
		}
		if err := json.Unmarshal(raw, &dc); err != nil {
			return ApplyResult{}, fmt.Errorf("documentChanges[%d]: %v", i, err)
		}
		switch {
		case dc.Kind == "create":
			ops = append(ops, docEdit{uri: dc.URI, create: true})
		case dc.Kind == "delete":
			ops = append(ops, docEdit{uri: dc.URI, delete: true})
		case dc.Kind != "":
			return ApplyResult{}, fmt.Errorf("documentChanges[%d]: unsupported resource operation %q", i, dc.Kind)
		case dc.TextDocument == nil:
			return ApplyResult{}, fmt.Errorf("documentChanges[%d] has no textDocument", i)
		default:
			ops = append(ops, docEdit{uri: dc.TextDocument.URI, version: dc.TextDocument.Version, edits: dc.Edits})
		}
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	// Work out every new text first: an edit applies whole or not at all.
	type result struct {
		doc     *Doc
		text    string
		created bool
		deleted bool
	}
	results := map[string]*result{}
	var order []string
	for _, op := range ops {
		r, seen := results[op.uri]
		if !seen {
			r = &result{}
			if d, ok := e.docs[op.uri]; ok {
				cp := *d
				r.doc, r.text = &cp, d.Text
			}
			results[op.uri] = r
			order = append(order, op.uri)
		}
		if op.delete {
			// A file is deleted with its buffer, as editors do.
			path, err := URIPath(op.uri)
			if err != nil {
				return ApplyResult{}, err
			}
			if _, err := os.Stat(path); err != nil && r.doc == nil {
				return ApplyResult{}, fmt.Errorf("cannot delete %s: %v", op.uri, err)
			}
			r.deleted = true
			continue
		}
		if op.create {
			path, err := URIPath(op.uri)
			if err != nil {
				return ApplyResult{}, err
			}
			if _, err := os.Stat(path); err == nil || r.doc != nil {
				return ApplyResult{}, fmt.Errorf("cannot create %s: it exists", op.uri)
			}
			r.doc, r.text, r.created = &Doc{URI: op.uri}, "", true
			continue
		}
		if r.doc == nil {
			// A file the editor has not opened: load it into a buffer.
			path, err := URIPath(op.uri)
			if err != nil {
				return ApplyResult{}, err
			}
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return ApplyResult{}, fmt.Errorf("%s does not exist", op.uri)
			} else if err != nil {
				return ApplyResult{}, err
			}
			r.doc, r.text = &Doc{URI: op.uri}, string(data)
		}
		if op.version != nil && (!r.doc.Open || r.doc.Version != *op.version) {
			return ApplyResult{}, fmt.Errorf("version mismatch: %s is at version %d, the edit is for version %d", op.uri, r.doc.Version, *op.version)
		}
		text, err := applyEdits(r.text, op.edits, e.enc)
		if err != nil {
			return ApplyResult{}, fmt.Errorf("%s: %v", op.uri, err)
		}
		r.text = text
	}

	rec := AppliedEdit{Label: p.Label, Annotations: map[string]string{}, Edits: map[string][]TextEdit{}}
	for id, a := range p.Edit.ChangeAnnotations {
		rec.Annotations[id] = a.Label
	}
	for _, op := range ops {
		if !op.create && !op.delete {
			rec.Edits[op.uri] = append(rec.Edits[op.uri], op.edits...)
		}
	}
	for _, u := range order {
		r := results[u]
		rec.URIs = append(rec.URIs, u)
		if r.deleted {
			rec.Deleted = append(rec.Deleted, u)
			path, _ := URIPath(u)
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return ApplyResult{}, err
			}
			if doc, ok := e.docs[u]; ok {
				delete(e.docs, u)
				if doc.Open {
					if err := e.c.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": u}}); err != nil {
						return ApplyResult{}, err
					}
				}
			}
			continue
		}
		doc, ok := e.docs[u]
		if !ok {
			doc = &Doc{URI: u}
			e.docs[u] = doc
		}
		old := doc.Text
		doc.Text = r.text
		if doc.Open && old != r.text {
			// Report the edits as they were applied: from the end of the document
			// backwards, each change is valid against the text the previous left.
			var changes []Change
			for _, te := range sortedDesc(rec.Edits[u]) {
				rg := te.Range
				changes = append(changes, Change{Range: &rg, Text: te.NewText})
			}
			doc.Version++
			if err := e.didChange(u, doc.Version, changes); err != nil {
				return ApplyResult{}, err
			}
		}
	}
	e.applied = append(e.applied, rec)
	return ApplyResult{Applied: true}, nil
}

func sortedDesc(edits []TextEdit) []TextEdit {
	out := slices.Clone(edits)
	slices.SortStableFunc(out, func(a, b TextEdit) int { return -comparePos(a.Range.Start, b.Range.Start) })
	return out
}

func comparePos(a, b Position) int {
	switch {
	case a.Line != b.Line:
		return int(a.Line) - int(b.Line)
	default:
		return int(a.Character) - int(b.Character)
	}
}

// applyEdits applies simultaneous, non-overlapping edits to text.
func applyEdits(text string, edits []TextEdit, enc string) (string, error) {
	type span struct {
		start, end int
		text       string
	}
	spans := make([]span, len(edits))
	for i, e := range edits {
		start, okS := exactOffset(text, e.Range.Start, enc)
		end, okE := exactOffset(text, e.Range.End, enc)
		if !okS || !okE {
			return "", fmt.Errorf("edit %d: range %v is not in the document", i, e.Range)
		}
		if end < start {
			return "", fmt.Errorf("edit %d ends before it starts", i)
		}
		spans[i] = span{start, end, e.NewText}
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	last := 0
	for _, s := range spans {
		if s.start < last {
			return "", errors.New("edits overlap")
		}
		b.WriteString(text[last:s.start])
		b.WriteString(s.text)
		last = s.end
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// Offset returns the byte offset of pos in text, counting characters in enc
// ("utf-8", "utf-16" or "utf-32"), clamped as LSP prescribes: past the end of a line
// is its end, past the last line is the end of the text, inside a character is its
// start.
func Offset(text string, pos Position, enc string) int {
	off, _ := exactOffset(text, pos, enc)
	return off
}

// exactOffset is Offset that also reports whether pos named a place in text exactly.
func exactOffset(text string, pos Position, enc string) (int, bool) {
	off := 0
	for line := uint32(0); line < pos.Line; line++ {
		i := strings.IndexAny(text[off:], "\r\n")
		if i < 0 {
			return len(text), false
		}
		off += i
		if strings.HasPrefix(text[off:], "\r\n") {
			off += 2
		} else {
			off++
		}
	}
	end := len(text)
	if i := strings.IndexAny(text[off:], "\r\n"); i >= 0 {
		end = off + i
	}
	var units uint32
	for off < end && units < pos.Character {
		r, size := utf8.DecodeRuneInString(text[off:end])
		w := unitsOf(r, size, enc)
		if units+w > pos.Character {
			return off, false // inside a character: its start
		}
		units += w
		off += size
	}
	return off, units == pos.Character
}

func unitsOf(r rune, size int, enc string) uint32 {
	switch enc {
	case "utf-8":
		return uint32(size)
	case "utf-32":
		return 1
	}
	if r > 0xFFFF {
		return 2
	}
	return 1
}

// PositionOf returns the position of the byte offset in text.
func PositionOf(text string, offset int, enc string) Position {
	var p Position
	lineStart := 0
	for i := 0; i < offset; i++ {
		switch text[i] {
		case '\n':
			p.Line++
			lineStart = i + 1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				continue
			}
			p.Line++
			lineStart = i + 1
		}
	}
	for _, r := range text[lineStart:offset] {
		p.Character += unitsOf(r, utf8.RuneLen(r), enc)
	}
	return p
}

// URIPath returns the file path of a file URI.
func URIPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("%q is not a file URI", uri)
	}
	return u.Path, nil
}

// FileURI returns the file URI of an absolute path.
func FileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: path}).String()
}
