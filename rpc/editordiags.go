package rpc

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
)

// The editor's diagnostics (docs/protocol.md, "The editor's diagnostics"): a client
// that declares experimental.agentls.diagnostics reports the diagnostics its own
// language servers (and linters) publish for the files an agent's call touched, so
// that the model learns what its edit broke or fixed without agentls running a
// language server of its own.
//
// This is the other direction from diagnostics.go, which publishes agentls's own
// diagnostics to the editor. Here the server asks (agentls/collectDiagnostics, a
// notification) and the client answers (agentls/diagnostics, a notification): first
// "now", before the call writes anything, then "once settled", after the edit was
// applied, at the latest after the wait the client declared (2 s by default). The
// server compares the two and appends to the call's result, for the model, the errors
// and warnings the call introduced and the count of those it resolved.
//
// Clients that do not declare the capability are never asked and never waited for:
// their results say nothing about diagnostics.

const (
	methodCollectDiagnostics = "agentls/collectDiagnostics"
	methodDiagnostics        = "agentls/diagnostics"

	// defaultDiagnosticsWait is how long the server waits for a settled report unless
	// the client declares another wait.
	defaultDiagnosticsWait = 2 * time.Second
	// maxDiagnosticsWait bounds the wait a client may declare.
	maxDiagnosticsWait = 10 * time.Second
	// maxReportedDiagnostics is how many diagnostics a result lists; the rest are
	// counted.
	maxReportedDiagnostics = 10
	// beforeGrace is how long a settled report waits for the report of the state
	// before the edit, which the client sends at once and so should have arrived.
	beforeGrace = 50 * time.Millisecond
)

// DiagnosticsWait reports whether the client reports its editor's diagnostics
// (experimental.agentls.diagnostics: true, or an object) and how long the server may
// wait for a settled report: the object's waitMs, else 2 s, at most 10 s.
func (c ClientCapabilities) DiagnosticsWait() (time.Duration, bool) {
	switch v := c.Lookup("experimental", "agentls", "diagnostics").(type) {
	case bool:
		return defaultDiagnosticsWait, v
	case map[string]any:
		ms, ok := v["waitMs"].(float64)
		if !ok || ms < 0 {
			return defaultDiagnosticsWait, true
		}
		return min(time.Duration(ms)*time.Millisecond, maxDiagnosticsWait), true
	}
	return 0, false
}

// collectParams are the params of agentls/collectDiagnostics.
type collectParams struct {
	ID string `json:"id"`
	// URIs are the documents to report; empty means every file of the workspace the
	// editor has diagnostics for (the get_diagnostics tool).
	URIs []string `json:"uris"`
	// Settle asks for the diagnostics once the editor's sources have settled after an
	// edit; without it, for those the editor holds now.
	Settle bool `json:"settle"`
	// Reload asks the client to re-read from disk the documents that changed there
	// (after a shell command) before it waits.
	Reload bool `json:"reload,omitzero"`
	// WaitMs is how long the server waits for the report after sending this.
	WaitMs int64 `json:"waitMs"`
}

// editorDiagnostic is a diagnostic as the client reports it: an LSP Diagnostic, of
// which the server reads these fields.
type editorDiagnostic struct {
	Range struct {
		Start struct {
			Line int `json:"line"`
		} `json:"start"`
	} `json:"range"`
	Severity int             `json:"severity"`
	Source   string          `json:"source"`
	Code     json.RawMessage `json:"code"`
	Message  string          `json:"message"`
}

// diagnosticsParams are the params of agentls/diagnostics.
type diagnosticsParams struct {
	ID    string `json:"id"`
	Files []struct {
		URI         string             `json:"uri"`
		Diagnostics []editorDiagnostic `json:"diagnostics"`
	} `json:"files"`
}

// collection is one report the server waits for.
type collection struct {
	// paths are the files asked about; nil means any file of the workspace.
	paths map[string]bool
	done  chan struct{}
	files map[string][]editorDiagnostic // set when done is closed
}

// collections are the reports the server is waiting for, by id.
type collections struct {
	mu      sync.Mutex
	pending map[string]*collection
}

// ask sends agentls/collectDiagnostics for paths (nil: the workspace) and returns the
// collection the answer will fill; forget it with s.diagReports.forget when done.
func (s *Server) askDiagnostics(paths []string, settle, reload bool, wait time.Duration) (string, *collection) {
	id := "d" + strconv.FormatUint(s.seq.Add(1), 10)
	c := &collection{done: make(chan struct{})}
	uris := []string{}
	if paths != nil {
		c.paths = map[string]bool{}
		for _, p := range paths {
			c.paths[p] = true
			uris = append(uris, s.docs.uri(p))
		}
	}
	s.diagReports.mu.Lock()
	if s.diagReports.pending == nil {
		s.diagReports.pending = map[string]*collection{}
	}
	s.diagReports.pending[id] = c
	s.diagReports.mu.Unlock()
	s.send(methodCollectDiagnostics, collectParams{ID: id, URIs: uris, Settle: settle, Reload: reload, WaitMs: wait.Milliseconds()})
	return id, c
}

// forget stops waiting for the report id: one that arrives later is ignored, and
// logged.
func (cs *collections) forget(id string) {
	cs.mu.Lock()
	delete(cs.pending, id)
	cs.mu.Unlock()
}

// receiveDiagnostics handles agentls/diagnostics, a client's report. A report nobody
// waits for (an unknown id, or one whose wait ended), and the files of a report that
// were not asked about, are ignored with a log line; a malformed report is logged by
// notify.
func (s *Server) receiveDiagnostics(_ context.Context, params jsonrpc2.RawMessage) error {
	var p diagnosticsParams
	if err := decodeParams(methodDiagnostics, params, &p); err != nil {
		return err
	}
	s.diagReports.mu.Lock()
	c, ok := s.diagReports.pending[p.ID]
	delete(s.diagReports.pending, p.ID)
	s.diagReports.mu.Unlock()
	if !ok {
		s.log.Info("ignoring a diagnostics report nobody waits for (unknown id, or its wait ended)", "id", p.ID)
		return nil
	}
	files := map[string][]editorDiagnostic{}
	_, _, tb := s.state()
	for _, f := range p.Files {
		path, err := s.docPath(f.URI)
		if err == nil && tb != nil {
			_, err = tb.Workspace.Resolve(path)
		}
		switch {
		case err != nil:
			s.log.Info("ignoring the diagnostics of a file outside the workspace", "id", p.ID, "uri", f.URI, "error", err)
			continue
		case c.paths != nil && !c.paths[path]:
			s.log.Info("ignoring the diagnostics of a file that was not asked about", "id", p.ID, "uri", f.URI)
			continue
		}
		files[path] = append(files[path], ownless(f.Diagnostics)...)
	}
	c.files = files
	close(c.done)
	return nil
}

// ownless leaves out agentls's own diagnostics, which a client may report with the
// others.
func ownless(ds []editorDiagnostic) []editorDiagnostic {
	return slices.DeleteFunc(ds, func(d editorDiagnostic) bool {
		return d.Source == sourceAgentls || d.Source == sourceShell
	})
}

// wait waits for the collection's report until ctx ends or timer fires; ok is false
// if none came.
func (c *collection) wait(ctx context.Context, timer <-chan time.Time) (map[string][]editorDiagnostic, bool) {
	select {
	case <-c.done:
		return c.files, true
	case <-ctx.Done():
	case <-timer:
	}
	return nil, false
}

// diagnosticTool adapts the tools that change files so that their results carry the
// editor's diagnostics of those files: the tools of a kind that writes, and
// run_shell_command (for the open documents the command changed on disk).
func (s *Server) diagnosticTool(t tools.Tool) tools.Tool {
	info := t.Info()
	if !info.Kind.Writes() && info.Name != "run_shell_command" {
		return t
	}
	return &diagnosedTool{Tool: t, s: s, shell: !info.Kind.Writes()}
}

// diagnosedTool is a tool whose calls report the editor's diagnostics of what they
// changed.
type diagnosedTool struct {
	tools.Tool
	s     *Server
	shell bool
}

func (t *diagnosedTool) Build(args json.RawMessage) (tools.Invocation, error) {
	inv, err := t.Tool.Build(args)
	if err != nil {
		return nil, err
	}
	return &diagnosedCall{Invocation: inv, t: t}, nil
}

type diagnosedCall struct {
	tools.Invocation
	t *diagnosedTool
}

// fileStamp is what a file on disk looked like: enough to tell that a command changed
// it.
type fileStamp struct {
	mod  time.Time
	size int64
}

func stamp(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{fi.ModTime(), fi.Size()}
}

func (c *diagnosedCall) Execute(ctx context.Context, out io.Writer) (*tools.Result, error) {
	s := c.t.s
	wait, ok := s.capabilities().DiagnosticsWait()
	if !ok {
		return c.Invocation.Execute(ctx, out)
	}
	var paths []string
	var stamps map[string]fileStamp
	if c.t.shell {
		paths = s.docs.openPaths()
		stamps = map[string]fileStamp{}
		for _, p := range paths {
			stamps[p] = stamp(p)
		}
	} else {
		for _, l := range c.Locations() {
			if fi, err := os.Stat(l.Path); err == nil && fi.IsDir() {
				continue
			}
			if !slices.Contains(paths, l.Path) {
				paths = append(paths, l.Path)
			}
		}
	}
	if len(paths) == 0 {
		return c.Invocation.Execute(ctx, out)
	}
	beforeID, before := s.askDiagnostics(paths, false, false, wait)
	defer s.diagReports.forget(beforeID)
	res, err := c.Invocation.Execute(ctx, out)
	if err != nil || res == nil || ctx.Err() != nil {
		return res, err
	}
	if c.t.shell {
		paths = slices.DeleteFunc(paths, func(p string) bool { return stamp(p) == stamps[p] })
		if len(paths) == 0 {
			return res, err
		}
	}
	start := time.Now()
	afterID, after := s.askDiagnostics(paths, true, c.t.shell, wait)
	defer s.diagReports.forget(afterID)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	now, ok := after.wait(ctx, timer.C)
	if !ok {
		s.log.Info("no settled diagnostics report in time; the result says nothing of diagnostics", "id", afterID, "wait", wait)
		return res, err
	}
	grace := time.NewTimer(beforeGrace)
	defer grace.Stop()
	was, hadBefore := before.wait(ctx, grace.C)
	// bench/diagnostics.sh reads settledMs: from the edit applied (or the command
	// ended) to the editor's report.
	s.log.Info("editor diagnostics", "id", afterID, "files", len(now),
		"settledMs", fmt.Sprintf("%.1f", float64(time.Since(start).Microseconds())/1000))
	if note := diagnosticsNote(s.relPath, paths, was, hadBefore, now); note != "" {
		r := *res
		r.Output = strings.TrimRight(r.Output, "\n") + "\n\n" + note
		res = &r
	}
	return res, err
}

// serious reports whether d is an error or a warning (a diagnostic without a severity
// counts as an error, as LSP leaves it to the client).
func serious(d editorDiagnostic) bool {
	return d.Severity == 0 || d.Severity == severityError || d.Severity == severityWarning
}

// diagnosticsNote is the text added to a result: the errors and warnings of paths in
// now that were not in was (by severity, source, code and message), and the count of
// those of was that are not in now. Without hadBefore every one of now is listed as
// reported now. It is empty when paths have none either way.
func diagnosticsNote(rel func(string) string, paths []string, was map[string][]editorDiagnostic, hadBefore bool, now map[string][]editorDiagnostic) string {
	type item struct {
		path string
		d    editorDiagnostic
	}
	var added []item
	resolved := 0
	key := func(d editorDiagnostic) string {
		return fmt.Sprintf("%d\x00%s\x00%s\x00%s", cmp.Or(d.Severity, severityError), d.Source, strings.Trim(string(d.Code), `"`), d.Message)
	}
	for _, p := range paths {
		left := map[string]int{}
		for _, d := range was[p] {
			if serious(d) {
				left[key(d)]++
			}
		}
		for _, d := range now[p] {
			if !serious(d) {
				continue
			}
			if k := key(d); left[k] > 0 {
				left[k]--
				continue
			}
			added = append(added, item{p, d})
		}
		for _, n := range left {
			resolved += n
		}
	}
	if !hadBefore {
		resolved = 0
	}
	var b strings.Builder
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = rel(p)
	}
	files := strings.Join(names, ", ")
	switch {
	case len(added) == 0 && resolved == 0 && hadBefore:
		fmt.Fprintf(&b, "The editor's diagnostics of %s show no new errors or warnings.", files)
		return b.String()
	case len(added) == 0 && resolved == 0:
		fmt.Fprintf(&b, "The editor's diagnostics of %s show no errors or warnings.", files)
		return b.String()
	}
	slices.SortStableFunc(added, func(a, b item) int {
		return cmp.Or(strings.Compare(a.path, b.path), a.d.Range.Start.Line-b.d.Range.Start.Line)
	})
	if len(added) > 0 {
		if hadBefore {
			fmt.Fprintf(&b, "The editor's diagnostics after this change report %d new error(s) or warning(s):\n", len(added))
		} else {
			fmt.Fprintf(&b, "The editor's diagnostics after this change report %d error(s) or warning(s):\n", len(added))
		}
		for i, it := range added {
			if i == maxReportedDiagnostics {
				fmt.Fprintf(&b, "… and %d more.\n", len(added)-i)
				break
			}
			b.WriteString(formatDiagnostic(rel(it.path), it.d) + "\n")
		}
	}
	if resolved > 0 {
		fmt.Fprintf(&b, "%d error(s) or warning(s) reported before this change are resolved.\n", resolved)
	}
	return strings.TrimRight(b.String(), "\n")
}

// formatDiagnostic is one line for the model: file:line: severity: message (source).
func formatDiagnostic(file string, d editorDiagnostic) string {
	sev := "error"
	switch d.Severity {
	case severityWarning:
		sev = "warning"
	case severityInformation:
		sev = "info"
	case severityHint:
		sev = "hint"
	}
	msg := oneLine(d.Message, maxDiagnosticMessage)
	if d.Source != "" {
		msg += " (" + d.Source + ")"
	}
	return fmt.Sprintf("- %s:%d: %s: %s", file, d.Range.Start.Line+1, sev, msg)
}

// getDiagnostics is the get_diagnostics tool: the editor's current diagnostics of a
// file or of the workspace, as the client reports them. It is declared to the model
// only while the client can report them.
type getDiagnostics struct {
	s    *Server
	info tools.Info
}

type getDiagnosticsArgs struct {
	FilePath string `json:"file_path,omitempty" jsonschema:"The file; omit it for the whole workspace."`
}

func newGetDiagnostics(s *Server) *getDiagnostics {
	return &getDiagnostics{s: s, info: tools.Info{
		Name:        "get_diagnostics",
		DisplayName: "GetDiagnostics",
		Description: "The errors and warnings the editor's language servers report now, for one file or the workspace.",
		Kind:        tools.KindRead,
		Source:      tools.SourceBuiltin,
		Idempotent:  true,
		Parameters:  tools.Parameters[getDiagnosticsArgs](false),
	}}
}

func (t *getDiagnostics) Info() tools.Info { return t.info }

// Offered implements tools.Situational: only where the client reports diagnostics.
func (t *getDiagnostics) Offered(tools.Situation) bool {
	_, ok := t.s.capabilities().DiagnosticsWait()
	return ok
}

func (t *getDiagnostics) Build(args json.RawMessage) (tools.Invocation, error) {
	var a getDiagnosticsArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	inv := &getDiagnosticsCall{t: t}
	if a.FilePath != "" {
		_, _, tb := t.s.state()
		if tb == nil {
			return nil, tools.Errorf(tools.ErrExecutionFailed, "the workspace is not ready")
		}
		p, err := tb.Workspace.Resolve(a.FilePath)
		if err != nil {
			return nil, tools.Errorf(tools.ErrPathNotInWorkspace, "file_path: %v", err)
		}
		inv.path = p
	}
	return inv, nil
}

type getDiagnosticsCall struct {
	tools.NoCapabilities
	t    *getDiagnostics
	path string
}

func (c *getDiagnosticsCall) Describe() string {
	if c.path == "" {
		return "Diagnostics of the workspace"
	}
	return "Diagnostics of " + c.t.s.relPath(c.path)
}

func (c *getDiagnosticsCall) Locations() []tools.Location {
	if c.path == "" {
		return nil
	}
	return []tools.Location{{Path: c.path}}
}

func (c *getDiagnosticsCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

func (c *getDiagnosticsCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	s := c.t.s
	wait, ok := s.capabilities().DiagnosticsWait()
	if !ok {
		return nil, tools.Errorf(tools.ErrExecutionFailed, "this editor does not report its diagnostics")
	}
	var paths []string
	if c.path != "" {
		paths = []string{c.path}
	}
	id, col := s.askDiagnostics(paths, false, false, wait)
	defer s.diagReports.forget(id)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	files, ok := col.wait(ctx, timer.C)
	if !ok {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, tools.Errorf(tools.ErrExecutionFailed, "the editor did not report its diagnostics within %s", wait)
	}
	var names []string
	for p := range files {
		names = append(names, p)
	}
	slices.Sort(names)
	var b strings.Builder
	n, errs, warns := 0, 0, 0
	for _, p := range names {
		for _, d := range files[p] {
			if !serious(d) {
				continue
			}
			if d.Severity == severityWarning {
				warns++
			} else {
				errs++
			}
			n++
			if n <= maxReportedDiagnostics*5 {
				b.WriteString(formatDiagnostic(s.relPath(p), d) + "\n")
			}
		}
	}
	what := "the workspace"
	if c.path != "" {
		what = s.relPath(c.path)
	}
	if n == 0 {
		out := fmt.Sprintf("The editor reports no errors or warnings in %s.", what)
		if c.path != "" && !s.docs.isOpen(c.path) {
			out += " It does not have the file open, so its language servers may not have looked at it."
		}
		return &tools.Result{Summary: "No errors or warnings", Output: out}, nil
	}
	if n > maxReportedDiagnostics*5 {
		fmt.Fprintf(&b, "… and %d more.\n", n-maxReportedDiagnostics*5)
	}
	summary := fmt.Sprintf("%d error(s), %d warning(s)", errs, warns)
	return &tools.Result{Summary: summary,
		Output: fmt.Sprintf("The editor reports %s in %s:\n%s", summary, what, strings.TrimRight(b.String(), "\n"))}, nil
}

// openPaths returns the paths of the documents open in the editor.
func (d *documents) openPaths() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.byPath))
	for p := range d.byPath {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

var _ tools.Situational = (*getDiagnostics)(nil)
