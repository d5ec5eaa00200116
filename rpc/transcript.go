package rpc

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/uri"

	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
)

// Transcripts: what clients without agentls/update see of a session. Each session has
// a Markdown file, <state dir>/transcripts/<session>.md, to which every prompt appends
// the prompt (with where the user was), the model's answer as it streams, a line for
// each tool call when it ends (its status, its failure, the places it touched as
// links), the plan of write_todos as a checklist, and how the prompt ended. The file is
// only ever appended to; the answer's text is written in pieces of a few KiB and
// whenever something else is written, so that what the file holds keeps the order of
// what happened.

// maxTranscriptPending is how much of the answer's text is held before it is written.
const maxTranscriptPending = 4 << 10

// transcript is a session's transcript file.
type transcript struct {
	path, session string
	log           *slog.Logger

	mu      sync.Mutex
	pending strings.Builder // the answer's text not written yet
	// newlines counts the line breaks that end what was written, up to two: a block
	// starts after a blank line.
	newlines int
	// afterBlock is set when the last thing written was a block: the answer's text
	// goes on in a paragraph of its own.
	afterBlock bool
	started    bool // something was written by this server
	failed     bool // a write failed: it was logged once
}

func newTranscript(path, session string, log *slog.Logger) *transcript {
	return &transcript{path: path, session: session, log: log}
}

// prompt starts a prompt's part of the transcript.
func (t *transcript) prompt(when time.Time, text string, ec *session.EditorContext, rel func(string) string) {
	var b strings.Builder
	fmt.Fprintf(&b, "## Prompt, %s\n\n", when.Format("2006-01-02 15:04:05"))
	for line := range strings.Lines(strings.TrimRight(text, "\n")) {
		b.WriteString("> " + line)
	}
	b.WriteString("\n")
	if ec != nil {
		var ctx []string
		if ec.Path != "" {
			where := rel(ec.Path)
			anchor := ""
			if ec.StartLine > 0 {
				where += fmt.Sprintf(":%d", ec.StartLine)
				if ec.EndLine > ec.StartLine {
					where += fmt.Sprintf("-%d", ec.EndLine)
				}
				anchor = fmt.Sprintf("#L%d", ec.StartLine)
			}
			ctx = append(ctx, fmt.Sprintf("[%s](%s%s)", escapeLinkText(where), uri.File(ec.Path), anchor))
		}
		if ec.Diagnostic != "" {
			ctx = append(ctx, "about: "+oneLine(ec.Diagnostic, maxDiagnosticMessage))
		}
		if len(ctx) > 0 {
			b.WriteString("\nContext: " + strings.Join(ctx, ", ") + "\n")
		}
	}
	b.WriteString("\n### Answer\n")
	t.mu.Lock()
	defer t.mu.Unlock()
	t.blockLocked(b.String())
}

// answer appends a chunk of the model's answer.
func (t *transcript) answer(text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.afterBlock && text != "" {
		t.separateLocked()
		t.afterBlock = false
	}
	t.pending.WriteString(text)
	if t.pending.Len() >= maxTranscriptPending {
		t.flushLocked()
	}
}

// toolCall appends the line of a call that ended.
func (t *transcript) toolCall(ev tools.Event, rel func(string) string) {
	title := oneLine(ev.Title, 200)
	if title == "" {
		title = ev.Name
	}
	status := map[tools.Status]string{tools.StatusSuccess: "completed", tools.StatusError: "failed", tools.StatusCancelled: "cancelled"}[ev.Status]
	line := fmt.Sprintf("- Tool call **%s** `%s`: %s", status, ev.Name, escapeMarkdown(title))
	if r := ev.Result; r != nil && r.Error != nil && ev.Status != tools.StatusSuccess {
		line += ": " + escapeMarkdown(oneLine(r.Error.Message, maxDiagnosticMessage))
	} else if r != nil && r.Summary != "" {
		line += " (" + escapeMarkdown(oneLine(r.Summary, 200)) + ")"
	}
	var links []string
	for _, l := range ev.Locations {
		if l.Path == "" {
			continue
		}
		where, anchor := rel(l.Path), ""
		if l.Line > 0 {
			where += fmt.Sprintf(":%d", l.Line)
			anchor = fmt.Sprintf("#L%d", l.Line)
		}
		links = append(links, fmt.Sprintf("[%s](%s%s)", escapeLinkText(where), uri.File(l.Path), anchor))
	}
	if len(links) > 0 {
		line += " — " + strings.Join(links, ", ")
	}
	if r := ev.Result; r != nil {
		for _, h := range r.Hooks {
			line += "\n  - " + escapeMarkdown(oneLine(h, maxDiagnosticMessage))
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.blockLocked(line + "\n")
}

// plan appends the todo list.
func (t *transcript) plan(entries []planEntry) {
	var b strings.Builder
	b.WriteString("Plan:\n\n")
	if len(entries) == 0 {
		b.WriteString("(cleared)\n")
	}
	for _, e := range entries {
		mark := " "
		switch e.Status {
		case "completed":
			mark = "x"
		case "cancelled":
			mark = "-"
		}
		note := ""
		if e.Status == "in_progress" {
			note = " (in progress)"
		}
		fmt.Fprintf(&b, "- [%s] %s%s\n", mark, escapeMarkdown(oneLine(e.Content, 300)), note)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.blockLocked(b.String())
}

// compression notes that the history was compressed.
func (t *transcript) compression(text string, before, after int) {
	note := fmt.Sprintf("_The conversation was compressed from %d to %d tokens", before, after)
	if text != "" {
		note += ": " + escapeMarkdown(oneLine(text, 300))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.blockLocked(note + "._\n")
}

// end appends how the prompt ended.
func (t *transcript) end(res promptResult) {
	line := fmt.Sprintf("_%s", stopText(res.StopReason))
	if u := res.Usage; u != nil {
		line += fmt.Sprintf("; %d input tokens, %d output tokens", u.InputTokens, u.OutputTokens)
	}
	line += "._\n"
	if res.Error != nil {
		line = "**Error:** " + escapeMarkdown(res.Error.Message) + "\n\n" + line
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.blockLocked(line)
	t.flushLocked()
}

// blockLocked appends text as a block of its own, after a blank line; t.mu is held.
func (t *transcript) blockLocked(text string) {
	t.separateLocked()
	t.pending.WriteString(text)
	t.flushLocked()
	t.afterBlock = true
}

// separateLocked ends what was written and is pending with a blank line, unless
// nothing was; t.mu is held.
func (t *transcript) separateLocked() {
	nl := t.newlines
	if p := t.pending.String(); p != "" {
		nl = trailingNewlines(p, nl)
	} else if !t.started {
		return
	}
	if nl < 2 {
		t.pending.WriteString(strings.Repeat("\n", 2-nl))
	}
}

// trailingNewlines returns the line breaks that end what was written once text follows
// what ended with before of them, up to two.
func trailingNewlines(text string, before int) int {
	n := len(text) - len(strings.TrimRight(text, "\n"))
	if n == len(text) {
		return min(2, before+n)
	}
	return min(2, n)
}

// flushLocked writes the text held; t.mu is held. A write failure is logged once, and
// the text is dropped: the prompt goes on without its transcript.
func (t *transcript) flushLocked() {
	if t.pending.Len() == 0 {
		return
	}
	text := t.pending.String()
	t.pending.Reset()
	if err := t.appendFile(text); err != nil {
		if !t.failed {
			t.failed = true
			t.log.Warn("writing the session's transcript", "path", t.path, "error", err)
		}
		return
	}
	t.started = true
	t.newlines = trailingNewlines(text, t.newlines)
}

// appendFile appends text to the file, which is created (with its heading) if needed.
func (t *transcript) appendFile(text string) error {
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() == 0 {
		text = fmt.Sprintf("# agentls session %s\n\n", t.session) + strings.TrimLeft(text, "\n")
	} else if err == nil && !t.started {
		// A resumed session: this server's first text goes after a blank line.
		text = "\n" + text
	}
	_, werr := f.WriteString(text)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// transcribe is the scheduler observer that writes the calls of sessions with a
// transcript.
func (s *Server) transcribe(session string, ev tools.Event) {
	if !ev.Status.Terminal() {
		return
	}
	if v := s.views.lookup(session); v != nil && v.transcript != nil {
		v.transcript.toolCall(ev, s.relPath)
	}
}

// escapeMarkdown keeps text from being read as Markdown markup.
func escapeMarkdown(s string) string {
	return markdownEscaper.Replace(s)
}

var markdownEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`, "#", `\#`)

// escapeLinkText keeps a path from breaking the link it names.
func escapeLinkText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(s)
}
