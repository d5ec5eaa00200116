package rpc

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/tools"
)

// Live output (docs/protocol.md, "Streaming output"). A running call of a tool that
// writes live output (Info().Streams) gets, where the client advertises
// window.workDoneProgress, a progress token of its own (window/workDoneProgress/create)
// and $/progress begin, reports and end; the editor may cancel it, which cancels the
// call. A report carries the latest line of output, on one line and shortened, and at
// most ten a second (reportInterval) are sent. Where the client has no progress (or
// refuses the token), the output goes to window/logMessage (type Log) instead, in
// batches of the lines written meanwhile, at the same pace and bounded in size. The end of the
// progress (or the last batch) is sent before the call's result. Rich clients also get
// every chunk in agentls/update (updates.go), whatever this sends.

const (
	// reportInterval spaces progress reports and log batches: at most ten a second.
	reportInterval = 100 * time.Millisecond
	// maxProgressText bounds the title and the message of a progress notification.
	maxProgressText = 160
	// maxLogBatch bounds one window/logMessage of output; the rest of what was written
	// meanwhile is left out, saying how much.
	maxLogBatch = 16 << 10
	// maxPartialLine bounds the unfinished last line kept between chunks.
	maxPartialLine = 4 << 10
	// createTimeout bounds the wait for the client to accept a progress token.
	createTimeout = 5 * time.Second
)

// LSP message type of window/logMessage.
const messageTypeLog = 4

// outputStreams are the output streams of running calls, by call id, and the calls of
// their progress tokens.
type outputStreams struct {
	mu     sync.Mutex
	byCall map[string]*outputStream
	tokens map[string]string // progress token → call id
}

// outputStream is the live output of one running call on its way to the editor.
//
// A goroutine (run) creates the progress token and sends the reports (or log batches)
// as output comes, throttled; the end of the call is sent by end itself, in the
// scheduler's goroutine, so that it reaches the editor before the call's result.
type outputStream struct {
	s      *Server
	callID string
	title  string
	token  string
	wake   chan struct{}

	mu       sync.Mutex
	progress bool            // through $/progress; else window/logMessage
	partial  string          // the unfinished last line
	latest   string          // the latest non-empty line, for a report
	fresh    bool            // latest has not been reported
	batch    strings.Builder // the lines not logged yet
	skipped  int             // bytes left out of the batch
	ended    bool
	outcome  string // how the call ended, for the end of the progress

	// send is held while the stream sends, so that what it sends keeps its order, and
	// guards the fields below.
	send     sync.Mutex
	creating bool // the token is being created: run sends the end, if it comes meanwhile
	begun    bool // begin was sent
	over     bool // the end was sent: nothing more is
}

// streamOutput is the scheduler observer behind live output.
func (s *Server) streamOutput(_ string, ev tools.Event) {
	switch {
	case ev.Status == tools.StatusExecuting:
		reg := s.registry()
		if reg == nil {
			return
		}
		t, ok := reg.Get(ev.Name)
		if !ok || !t.Info().Streams {
			return
		}
		s.startStream(ev)
	case ev.Status == "":
		if st := s.streams.get(ev.CallID); st != nil {
			st.write(ev.Output)
		}
	case ev.Status.Terminal():
		if st := s.streams.remove(ev.CallID); st != nil {
			outcome := map[tools.Status]string{tools.StatusSuccess: "done", tools.StatusError: "failed", tools.StatusCancelled: "cancelled"}[ev.Status]
			if ev.Result != nil && ev.Result.Summary != "" {
				outcome += ": " + ev.Result.Summary
			}
			st.end(outcome)
		}
	}
}

// startStream starts the output stream of a call that began executing.
func (s *Server) startStream(ev tools.Event) {
	title := ev.Title
	if title == "" {
		title = ev.Name
	}
	progress := s.capabilities().WorkDoneProgress()
	st := &outputStream{
		s:        s,
		callID:   ev.CallID,
		title:    progressText(title),
		token:    fmt.Sprintf("agentls/%s/%d", ev.CallID, s.seq.Add(1)),
		progress: progress,
		creating: progress,
		wake:     make(chan struct{}, 1),
	}
	s.streams.add(st)
	go st.run()
}

func (o *outputStreams) add(st *outputStream) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byCall == nil {
		o.byCall, o.tokens = map[string]*outputStream{}, map[string]string{}
	}
	o.byCall[st.callID] = st
	o.tokens[st.token] = st.callID
}

func (o *outputStreams) get(callID string) *outputStream {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.byCall[callID]
}

func (o *outputStreams) remove(callID string) *outputStream {
	o.mu.Lock()
	defer o.mu.Unlock()
	st := o.byCall[callID]
	if st != nil {
		delete(o.byCall, callID)
		delete(o.tokens, st.token)
	}
	return st
}

// call returns the call whose progress token is token.
func (o *outputStreams) call(token string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	id, ok := o.tokens[token]
	return id, ok
}

// write takes a chunk of the call's output.
func (st *outputStream) write(chunk string) {
	st.mu.Lock()
	text := st.partial + chunk
	lines := strings.Split(text, "\n")
	st.partial = lines[len(lines)-1]
	for _, line := range lines[:len(lines)-1] {
		st.take(line)
	}
	if len(st.partial) > maxPartialLine {
		// A line without end (a progress bar redrawn with CR, say): its latest part.
		st.take(st.partial)
		st.partial = ""
	} else if line := progressText(st.partial); line != "" {
		st.latest, st.fresh = line, true
	}
	st.mu.Unlock()
	st.poke()
}

// take takes one line of output; st.mu is held.
func (st *outputStream) take(line string) {
	if p := progressText(line); p != "" {
		st.latest, st.fresh = p, true
	}
	// Batched for the log also while progress is the plan: the editor may refuse the
	// progress token.
	line = strings.TrimSuffix(line, "\r")
	if st.batch.Len()+len(line)+1 > maxLogBatch {
		st.skipped += len(line) + 1
		return
	}
	st.batch.WriteString(line)
	st.batch.WriteByte('\n')
}

func (st *outputStream) poke() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// end ends the stream: the call ended with outcome. What is left is sent before it
// returns, unless the token is still being created.
func (st *outputStream) end(outcome string) {
	st.mu.Lock()
	if st.partial != "" {
		st.take(st.partial)
		st.partial = ""
	}
	st.ended, st.outcome = true, outcome
	st.mu.Unlock()
	st.send.Lock()
	if !st.creating {
		st.finishLocked()
	}
	st.send.Unlock()
	st.poke() // run sees it is over
}

// workDoneProgress is the value of a $/progress notification.
type workDoneProgress struct {
	Kind        string `json:"kind"`
	Title       string `json:"title,omitempty"`
	Cancellable *bool  `json:"cancellable,omitempty"`
	Message     string `json:"message,omitempty"`
}

type progressParams struct {
	Token string           `json:"token"`
	Value workDoneProgress `json:"value"`
}

type logMessageParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

// run creates the progress token, where the client has progress, and sends the
// reports (or the log batches) until the stream is over.
func (st *outputStream) run() {
	s := st.s
	st.send.Lock()
	creating := st.creating
	st.send.Unlock()
	if creating {
		ctx, cancel := context.WithTimeout(s.ctx, createTimeout)
		err := s.call(ctx, "window/workDoneProgress/create", map[string]string{"token": st.token}, nil)
		cancel()
		st.send.Lock()
		st.creating = false
		if err != nil {
			s.log.Info("the editor did not accept a progress token; the output goes to its log", "call", st.callID, "error", err)
			st.mu.Lock()
			st.progress = false
			st.mu.Unlock()
		} else {
			yes := true
			s.send("$/progress", progressParams{Token: st.token, Value: workDoneProgress{Kind: "begin", Title: st.title, Cancellable: &yes}})
			st.begun = true
		}
		if st.isEnded() {
			st.finishLocked()
		}
		st.send.Unlock()
	}
	var last time.Time
	for {
		select {
		case <-st.wake:
		case <-s.ctx.Done():
			return
		}
		// Throttled; the end of the call does not wait.
		for !st.isEnded() {
			wait := reportInterval - time.Since(last)
			if wait <= 0 {
				break
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-st.wake:
				t.Stop()
			case <-s.ctx.Done():
				t.Stop()
				return
			}
		}
		st.send.Lock()
		over := st.over
		if !over {
			st.flushLocked()
		}
		st.send.Unlock()
		if over {
			return
		}
		last = time.Now()
	}
}

func (st *outputStream) isEnded() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ended
}

// flushLocked sends what the stream holds: a report of the latest line, or the batch
// of lines for the log; st.send is held.
func (st *outputStream) flushLocked() {
	s := st.s
	st.mu.Lock()
	progress := st.progress
	var report, batch string
	if progress && st.fresh && !st.ended {
		report, st.fresh = st.latest, false
	}
	if !progress && (st.batch.Len() > 0 || st.skipped > 0) {
		batch = "[" + st.callID + "] " + strings.TrimSuffix(st.batch.String(), "\n")
		if st.skipped > 0 {
			batch += fmt.Sprintf("\n[%s] … %d bytes of output not shown here; the tool's result has them", st.callID, st.skipped)
		}
		st.batch.Reset()
		st.skipped = 0
	}
	st.mu.Unlock()
	switch {
	case report != "":
		s.send("$/progress", progressParams{Token: st.token, Value: workDoneProgress{Kind: "report", Message: report}})
	case batch != "":
		s.send("window/logMessage", logMessageParams{Type: messageTypeLog, Message: batch})
	}
}

// finishLocked sends the rest of the log batch, or the end of the progress, once;
// st.send is held.
func (st *outputStream) finishLocked() {
	if st.over {
		return
	}
	st.over = true
	st.flushLocked()
	st.mu.Lock()
	progress, outcome := st.progress, st.outcome
	st.mu.Unlock()
	if progress && st.begun {
		st.s.send("$/progress", progressParams{Token: st.token, Value: workDoneProgress{Kind: "end", Message: progressText(outcome)}})
	}
}

// ansiEscape matches the terminal escape sequences (colours) a tool's live output may
// hold; run_shell_command's has none left.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\\\-_]")

// progressText returns the text of line fit for a progress message: what follows its
// last carriage return (what a terminal would show), without escape sequences and
// control characters, trimmed and shortened.
func progressText(line string) string {
	line = strings.TrimRight(line, "\r")
	if i := strings.LastIndexByte(line, '\r'); i >= 0 {
		line = line[i+1:]
	}
	line = ansiEscape.ReplaceAllString(line, "")
	line = strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, line)
	return tools.Abbreviate(strings.TrimSpace(line), maxProgressText)
}

// cancelProgress handles window/workDoneProgress/cancel: the call whose progress it
// names is cancelled. A token that names no running call is ignored.
func (s *Server) cancelProgress(_ context.Context, params jsonrpc2.RawMessage) error {
	var p struct {
		Token any `json:"token"`
	}
	if err := decodeParams("window/workDoneProgress/cancel", params, &p); err != nil {
		return err
	}
	token, ok := p.Token.(string)
	if !ok {
		return nil // agentls's tokens are strings
	}
	// The host is set by initialize under s.mu: read it so, as Serve and the
	// commands' deps do, not by relying on the read loop's order.
	s.mu.Lock()
	host := s.host
	s.mu.Unlock()
	if id, ok := s.streams.call(token); ok && host.CancelCall(id) {
		s.log.Info("tool call cancelled from its progress", "call", id)
	}
	return nil
}
