package rpc

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Diagnostics: what agentls shows among the editor's diagnostics (docs/protocol.md,
// "Tool locations"), to clients that advertise textDocument.publishDiagnostics. Four
// kinds, each owned by what made it:
//
//   - the locations of pending and running tool calls (source agentls, Information),
//     shown once a call has been pending or running for locationDelay, so that the
//     many calls that take a millisecond neither flicker nor cost traffic, and cleared
//     when the call ends;
//   - for clients without agentls/update, the locations of failed calls (agentls,
//     Error), until the next turn of their session or a cancel: for the calls the
//     editor runs itself, the next agentls.runTool (rich clients show a failure with
//     its call instead);
//   - pending confirmations of clients that have no way to ask (agentls, Warning; see
//     confirm.go), which stand in for the call's location diagnostic while they wait;
//   - the problems a call's result reports (tools.ProblemReport: run_shell_command's
//     compiler-style lines that point into the workspace), source agentls/shell,
//     replaced by those of the next report.
//
// A document's diagnostics are published as the union of all of them, and published
// again whenever that union changes; a document left with none is sent an empty list.

const (
	sourceAgentls = "agentls"
	sourceShell   = "agentls/shell"
	// locationDelay is how long a call must be pending or running before its locations
	// are shown.
	locationDelay = 200 * time.Millisecond
	// maxDiagnosticMessage bounds a message taken from a tool's output or error.
	maxDiagnosticMessage = 500
)

// LSP diagnostic severities.
const (
	severityError       = 1
	severityWarning     = 2
	severityInformation = 3
	severityHint        = 4
)

// diagnostic is an LSP Diagnostic.
type diagnostic struct {
	Range    protocol.Range  `json:"range"`
	Severity int             `json:"severity"`
	Source   string          `json:"source"`
	Message  string          `json:"message"`
	Data     *diagnosticData `json:"data,omitempty"`
}

// diagnosticData ties a diagnostic to the call (and confirmation) it is about.
type diagnosticData struct {
	ToolCallID   string `json:"toolCallId,omitempty"`
	Confirmation string `json:"confirmation,omitempty"`
}

// mark is a diagnostic of the file at path.
type mark struct {
	path string
	diag diagnostic
}

type publishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Diagnostics []diagnostic `json:"diagnostics"`
}

// diagnosticSet holds agentls's diagnostics and what the editor was last sent.
type diagnosticSet struct {
	mu       sync.Mutex
	seq      uint64
	calls    map[string]*markedCall    // pending and running calls with locations
	confirms map[string]*markedConfirm // by tool call id
	failures map[string][]mark         // by session
	problems []mark                    // of the last problem report
	sent     map[string][]diagnostic   // by URI
}

// markedCall is a pending or running call with locations.
type markedCall struct {
	seq         uint64
	name, title string
	locations   []tools.Location
	status      tools.Status
	timer       *time.Timer
	// shown is set once locationDelay has passed; where are then the places shown.
	shown bool
	where []mark
}

// markedConfirm is a pending confirmation shown as a diagnostic.
type markedConfirm struct {
	seq     uint64
	id      string
	details confirm.Details
	mark    mark
}

// diagnose is the scheduler observer behind the diagnostics of tool calls.
func (s *Server) diagnose(session string, ev tools.Event) {
	if ev.Status == "" || ev.Status == tools.StatusValidating || !s.capabilities().Diagnostics() {
		return
	}
	d := &s.diags
	switch {
	case ev.Status == tools.StatusScheduled:
		if len(ev.Locations) == 0 {
			return
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.calls == nil {
			d.calls = map[string]*markedCall{}
		}
		d.seq++
		c := &markedCall{seq: d.seq, name: ev.Name, title: ev.Title, locations: ev.Locations, status: ev.Status}
		d.calls[ev.CallID] = c
		id := ev.CallID
		c.timer = time.AfterFunc(locationDelay, func() { s.showCall(id, c) })
	case ev.Status.Terminal():
		// What the call leaves is worked out first: it reads files.
		var failed, problems []mark
		// Rich clients show a failure with its call (chat, output); the others have
		// nothing but a diagnostic to show it with.
		if ev.Status == tools.StatusError && ev.Result != nil && len(ev.Locations) > 0 && !s.capabilities().RichUpdates() {
			failed = s.failureMarks(ev)
		}
		report := ev.Result != nil && ev.Result.Problems != nil
		if report {
			problems = s.problemMarks(ev.Result.Problems.Problems)
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		changed := len(failed) > 0 || (report && (len(problems) > 0 || len(d.problems) > 0))
		if c, ok := d.calls[ev.CallID]; ok {
			c.timer.Stop()
			delete(d.calls, ev.CallID)
			changed = changed || c.shown
		}
		if len(failed) > 0 {
			if d.failures == nil {
				d.failures = map[string][]mark{}
			}
			d.failures[session] = append(d.failures[session], failed...)
		}
		if report {
			d.problems = problems
		}
		if changed {
			s.publishLocked()
		}
	default:
		d.mu.Lock()
		defer d.mu.Unlock()
		if c, ok := d.calls[ev.CallID]; ok {
			c.status = ev.Status
			if c.shown {
				s.publishLocked()
			}
		}
	}
}

// showCall shows the locations of call id, if it is still pending or running.
func (s *Server) showCall(id string, c *markedCall) {
	where := s.locationMarks(c.locations) // c.locations does not change
	d := &s.diags
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.calls[id] != c || c.shown {
		return
	}
	c.shown, c.where = true, where
	s.publishLocked()
}

// locationMarks returns a mark (range only) for each location that is a file: the line
// a location names, else the file's first line.
func (s *Server) locationMarks(locs []tools.Location) []mark {
	_, enc, _ := s.state()
	var out []mark
	for _, l := range locs {
		if l.Path == "" {
			continue
		}
		if fi, err := os.Stat(l.Path); err == nil && fi.IsDir() {
			continue
		}
		line := uint32(0)
		if l.Line > 0 {
			line = uint32(l.Line - 1)
		}
		out = append(out, mark{path: l.Path, diag: diagnostic{Range: s.docs.lineRange(l.Path, line, enc)}})
	}
	return out
}

// callMessage names a call and says where it is.
func callMessage(id string, c *markedCall) string {
	var state string
	switch c.status {
	case tools.StatusAwaitingApproval:
		state = "waiting for approval"
	case tools.StatusExecuting:
		state = "running"
	default:
		state = "pending"
	}
	return fmt.Sprintf("tool call %s (%s) %s: %s", id, c.name, state, oneLine(c.title, maxDiagnosticMessage))
}

// failureMarks returns the marks of a failed call, kept as errors until its session's
// next turn.
func (s *Server) failureMarks(ev tools.Event) []mark {
	msg := ev.Result.Output
	if e := ev.Result.Error; e != nil {
		msg = e.Message
	}
	text := fmt.Sprintf("tool call %s (%s) failed: %s: %s", ev.CallID, ev.Name, oneLine(ev.Title, 200), oneLine(msg, maxDiagnosticMessage))
	marks := s.locationMarks(ev.Locations)
	for i := range marks {
		m := &marks[i]
		m.diag.Severity, m.diag.Source, m.diag.Message = severityError, sourceAgentls, text
		m.diag.Data = &diagnosticData{ToolCallID: ev.CallID}
	}
	return marks
}

// newTurn starts a turn of session: the failures of its earlier turns are cleared.
func (s *Server) newTurn(session string) { s.clearFailures(session) }

// clearFailures takes down the failure diagnostics of session, or of every session
// when it is empty: a new turn, or a cancel, makes them old news.
func (s *Server) clearFailures(session string) {
	d := &s.diags
	d.mu.Lock()
	defer d.mu.Unlock()
	n := len(d.failures)
	if session == "" {
		clear(d.failures)
	} else {
		delete(d.failures, session)
	}
	if len(d.failures) != n {
		s.publishLocked()
	}
}

// republish sends the diagnostics of uri again: a client may drop those of a file
// it did not show (Emacs's Flymake does) and needs them once it opens it.
func (s *Server) republish(uri string) {
	d := &s.diags
	d.mu.Lock()
	defer d.mu.Unlock()
	if diags := d.sent[uri]; len(diags) > 0 && s.ctx.Err() == nil {
		s.send("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: uri, Diagnostics: diags})
	}
}

// showConfirmation shows a pending confirmation as a diagnostic with the given text at
// path; hide takes it down.
func (s *Server) showConfirmation(req confirm.Request, path, message string) (hide func()) {
	_, enc, _ := s.state()
	d := &s.diags
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.confirms == nil {
		d.confirms = map[string]*markedConfirm{}
	}
	line := uint32(0)
	if c, ok := d.calls[req.ToolCallID]; ok {
		for _, l := range c.locations {
			if l.Path == path && l.Line > 0 {
				line = uint32(l.Line - 1)
				break
			}
		}
	}
	d.seq++
	mc := &markedConfirm{seq: d.seq, id: req.ID, details: req.Details, mark: mark{path: path, diag: diagnostic{
		Range: s.docs.lineRange(path, line, enc), Severity: severityWarning, Source: sourceAgentls, Message: message,
		Data: &diagnosticData{ToolCallID: req.ToolCallID, Confirmation: req.ID},
	}}}
	d.confirms[req.ToolCallID] = mc
	s.publishLocked()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.confirms[req.ToolCallID] == mc {
			delete(d.confirms, req.ToolCallID)
			s.publishLocked()
		}
	}
}

// callLocations returns the locations of a pending or running call, as far as they are
// known (the client takes diagnostics and the call names files).
func (s *Server) callLocations(id string) []tools.Location {
	d := &s.diags
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.calls[id]; ok {
		return c.locations
	}
	return nil
}

// pendingConfirmations returns the confirmations shown as diagnostics.
func (s *Server) pendingConfirmations() []markedConfirm {
	d := &s.diags
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]markedConfirm, 0, len(d.confirms))
	for _, c := range d.confirms {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b markedConfirm) int { return compareUint(a.seq, b.seq) })
	return out
}

// publishLocked sends publishDiagnostics for every document whose diagnostics differ
// from what the editor was last sent; d.mu is held, so that what is sent keeps the
// order of the changes.
func (s *Server) publishLocked() {
	d := &s.diags
	if s.ctx.Err() != nil {
		return
	}
	now := map[string][]diagnostic{}
	add := func(m mark) {
		u := s.docs.uri(m.path)
		now[u] = append(now[u], m.diag)
	}
	confirms := make([]*markedConfirm, 0, len(d.confirms))
	for _, c := range d.confirms {
		confirms = append(confirms, c)
	}
	slices.SortFunc(confirms, func(a, b *markedConfirm) int { return compareUint(a.seq, b.seq) })
	for _, c := range confirms {
		add(c.mark)
	}
	ids := make([]string, 0, len(d.calls))
	for id, c := range d.calls {
		// A call waiting for an answer shown as a diagnostic has that one instead.
		if _, asking := d.confirms[id]; c.shown && !asking {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return compareUint(d.calls[a].seq, d.calls[b].seq) })
	for _, id := range ids {
		c := d.calls[id]
		msg := callMessage(id, c)
		for _, m := range c.where {
			m.diag.Severity, m.diag.Source, m.diag.Message = severityInformation, sourceAgentls, msg
			m.diag.Data = &diagnosticData{ToolCallID: id}
			add(m)
		}
	}
	sessions := make([]string, 0, len(d.failures))
	for session := range d.failures {
		sessions = append(sessions, session)
	}
	slices.Sort(sessions)
	for _, session := range sessions {
		for _, m := range d.failures[session] {
			add(m)
		}
	}
	for _, m := range d.problems {
		add(m)
	}

	uris := make([]string, 0, len(now)+len(d.sent))
	for u := range now {
		uris = append(uris, u)
	}
	for u := range d.sent {
		if _, ok := now[u]; !ok {
			uris = append(uris, u)
		}
	}
	slices.Sort(uris)
	for _, u := range uris {
		diags := now[u]
		if slices.EqualFunc(diags, d.sent[u], equalDiagnostic) {
			continue
		}
		if diags == nil {
			diags = []diagnostic{}
		}
		s.send("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: u, Diagnostics: diags})
	}
	d.sent = now
}

func equalDiagnostic(a, b diagnostic) bool {
	return a.Range == b.Range && a.Severity == b.Severity && a.Source == b.Source && a.Message == b.Message &&
		(a.Data == nil) == (b.Data == nil) && (a.Data == nil || *a.Data == *b.Data)
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// oneLine returns the first non-empty line of s, shortened to about n bytes.
func oneLine(s string, n int) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			return tools.Abbreviate(line, n)
		}
	}
	return ""
}

// compilerRange returns the range a compiler-style line names in text (LF line ends):
// from the column to the end of the word there, or without a column the line's text;
// ok is false if text has no such line.
func compilerRange(text string, line, col int, enc workspace.PositionEncoding) (protocol.Range, bool) {
	off := 0
	for range line - 1 {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return protocol.Range{}, false
		}
		off += i + 1
	}
	if off == len(text) && line > 1 {
		return protocol.Range{}, false // past the last line
	}
	lineText := text[off:]
	if i := strings.IndexByte(lineText, '\n'); i >= 0 {
		lineText = lineText[:i]
	}
	var start, end int
	if col > 0 {
		start = min(col-1, len(lineText))
		for start > 0 && start < len(lineText) && !utf8.RuneStart(lineText[start]) {
			start--
		}
		end = start
		for end < len(lineText) {
			r, size := utf8.DecodeRuneInString(lineText[end:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
				break
			}
			end += size
		}
		if end == start && end < len(lineText) {
			_, size := utf8.DecodeRuneInString(lineText[end:])
			end += size
		}
	} else {
		start = len(lineText) - len(strings.TrimLeft(lineText, " \t"))
		end = len(lineText)
	}
	ch := func(o int) uint32 { return workspace.OffsetToPosition(lineText, o, enc).Character }
	l := uint32(line - 1)
	return protocol.Range{Start: protocol.Position{Line: l, Character: ch(start)}, End: protocol.Position{Line: l, Character: ch(end)}}, true
}

// problemMarks returns the marks of a problem report's places that are lines of
// readable text files.
func (s *Server) problemMarks(problems []tools.Problem) []mark {
	_, enc, tb := s.state()
	texts := map[string]*string{} // nil: not a readable text file
	var marks []mark
	for _, p := range problems {
		text, ok := texts[p.Path]
		if !ok {
			if f, err := tb.Workspace.ReadText(p.Path, maxProblemFile); err == nil {
				text = &f.Text
			}
			texts[p.Path] = text
		}
		if text == nil {
			continue
		}
		r, ok := compilerRange(*text, p.Line, p.Column, enc)
		if !ok {
			continue
		}
		marks = append(marks, mark{path: p.Path, diag: diagnostic{Range: r, Severity: int(p.Severity), Source: sourceShell, Message: p.Message}})
	}
	return marks
}

// maxProblemFile bounds the files read to place the problems of a report.
const maxProblemFile = 10 << 20
