package rpc

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
)

// agentls/update notifications: what rich clients (experimental.agentls.updates) see of
// tool calls. Scheduler events map onto them as follows:
//
//	scheduled          → tool_call        status pending (title, toolKind, locations, rawInput)
//	awaiting_approval  → tool_call_update status awaiting_approval
//	executing          → tool_call_update status in_progress
//	output chunk       → tool_call_update output (the chunk)
//	success            → tool_call_update status completed, content {diff?, text}
//	error / cancelled  → tool_call_update status failed / cancelled, content {text}, error
//
// A call that ends before it was scheduled (an unknown tool, invalid arguments) is
// announced with a tool_call when it ends.

// updateParams are the params of agentls/update.
type updateParams struct {
	Session string `json:"session"`
	Update  any    `json:"update"`
}

// Update kinds.
const (
	updateToolCall       = "tool_call"
	updateToolCallUpdate = "tool_call_update"
)

// The statuses of tool_call and tool_call_update.
const (
	statusPending          = "pending"
	statusAwaitingApproval = "awaiting_approval"
	statusInProgress       = "in_progress"
	statusCompleted        = "completed"
	statusFailed           = "failed"
	statusCancelled        = "cancelled"
)

// toolCallNotice is a tool_call update. The tool's kind is toolKind, since kind is the
// update's own kind (see docs/protocol.md).
type toolCallNotice struct {
	Kind       string          `json:"kind"`
	ToolCallID string          `json:"toolCallId"`
	Name       string          `json:"name"`
	Title      string          `json:"title"`
	ToolKind   tools.Kind      `json:"toolKind"`
	Status     string          `json:"status"`
	Locations  []location      `json:"locations"`
	RawInput   json.RawMessage `json:"rawInput"`
	// ParentToolCallID is the call this one runs within: a sub-agent's call's
	// invoke_agent call.
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// toolCallUpdateNotice is a tool_call_update.
type toolCallUpdateNotice struct {
	Kind       string `json:"kind"`
	ToolCallID string `json:"toolCallId"`
	// ParentToolCallID is the tool_call's, repeated in every update of the call.
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
	Status           string `json:"status,omitempty"`
	Output           string `json:"output,omitempty"`
	// Summary is a finished call's one line for people, such as a command's
	// "Exit code 3".
	Summary string           `json:"summary,omitempty"`
	Content *updateContent   `json:"content,omitempty"`
	Error   *tools.ErrorInfo `json:"error,omitempty"`
	// Hooks are what the user's hooks decided about the call, one line each; the
	// content's text starts with them too.
	Hooks []string `json:"hooks,omitempty"`
}

type updateContent struct {
	Diff *fileDiff `json:"diff,omitempty"`
	Text string    `json:"text,omitempty"`
}

// fileDiff is the protocol's FileDiff, with the file's URI besides its path.
type fileDiff struct {
	Path            string  `json:"path"`
	URI             string  `json:"uri"`
	Diff            string  `json:"diff"`
	OriginalContent *string `json:"originalContent"`
	NewContent      string  `json:"newContent"`
}

// location is the protocol's Location: a file and, where known, the range of a line.
type location struct {
	URI   string          `json:"uri"`
	Range *protocol.Range `json:"range,omitempty"`
}

func toLocations(locs []tools.Location) []location {
	out := make([]location, 0, len(locs))
	for _, l := range locs {
		loc := location{URI: string(uri.File(l.Path))}
		if l.Line > 0 {
			p := protocol.Position{Line: uint32(l.Line - 1)}
			loc.Range = &protocol.Range{Start: p, End: p}
		}
		out = append(out, loc)
	}
	return out
}

// announced tracks the calls a tool_call was sent for.
type announced struct {
	mu sync.Mutex
	m  map[string]bool
}

// first reports whether id is not announced yet, and marks it announced.
func (a *announced) first(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]bool{}
	}
	if a.m[id] {
		return false
	}
	a.m[id] = true
	return true
}

func (a *announced) forget(id string) {
	a.mu.Lock()
	delete(a.m, id)
	a.mu.Unlock()
}

// sendUpdate is the scheduler observer that sends agentls/update to rich clients.
func (s *Server) sendUpdate(session string, ev tools.Event) {
	if !s.capabilities().RichUpdates() {
		return
	}
	notify := s.notifier(session)
	announce := func(status string) { notify(announcement(ev, status)) }
	update := toolCallUpdateNotice{Kind: updateToolCallUpdate, ToolCallID: ev.CallID, ParentToolCallID: ev.Parent}
	switch ev.Status {
	case "":
		if ev.Output == "" {
			return
		}
		update.Output = ev.Output
	case tools.StatusValidating:
		return
	case tools.StatusScheduled:
		if s.announced.first(ev.CallID) {
			announce(statusPending)
		}
		return
	case tools.StatusAwaitingApproval:
		update.Status = statusAwaitingApproval
	case tools.StatusExecuting:
		update.Status = statusInProgress
		// An "always" answer to the call's question may have changed the mode (an
		// edit's switches default to auto_edit).
		defer s.announceMode()
	case tools.StatusSuccess, tools.StatusError, tools.StatusCancelled:
		update = finalUpdate(ev)
		if s.announced.first(ev.CallID) {
			announce(update.Status)
		}
		s.announced.forget(ev.CallID)
	default:
		return
	}
	notify(update)
}

// announcement is the tool_call of ev, with status.
func announcement(ev tools.Event, status string) toolCallNotice {
	title, kind, args := ev.Title, ev.Kind, ev.Args
	if title == "" {
		title = ev.Name
	}
	if kind == "" {
		kind = tools.KindOther
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return toolCallNotice{Kind: updateToolCall, ToolCallID: ev.CallID, Name: ev.Name, Title: title,
		ToolKind: kind, Status: status, Locations: toLocations(ev.Locations), RawInput: args, ParentToolCallID: ev.Parent}
}

// finalUpdate is the tool_call_update of ev, a call's end.
func finalUpdate(ev tools.Event) toolCallUpdateNotice {
	update := toolCallUpdateNotice{Kind: updateToolCallUpdate, ToolCallID: ev.CallID, ParentToolCallID: ev.Parent}
	update.Status = map[tools.Status]string{tools.StatusSuccess: statusCompleted,
		tools.StatusError: statusFailed, tools.StatusCancelled: statusCancelled}[ev.Status]
	if r := ev.Result; r != nil {
		update.Content = &updateContent{Text: r.Shown()}
		update.Summary, update.Hooks = r.Summary, r.Hooks
		if d := r.Diff; d != nil {
			update.Content.Diff = &fileDiff{Path: d.Path, URI: string(uri.File(d.Path)), Diff: d.Diff,
				OriginalContent: d.OriginalContent, NewContent: d.NewContent}
		}
		update.Error = r.Error
	}
	return update
}

// The kinds of the updates of prompts.
const (
	updatePlan = "plan"
	updateMode = "current_mode_update"
)

// modeNotice is a current_mode_update (an extension): a call of the session switched
// its approval mode (enter_plan_mode, exit_plan_mode) with the person's consent.
type modeNotice struct {
	Kind string       `json:"kind"`
	Mode confirm.Mode `json:"mode"`
}

// chunkNotice is a message_chunk or thought_chunk.
type chunkNotice struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// turnEndNotice is a turn_end.
type turnEndNotice struct {
	Kind       string             `json:"kind"`
	StopReason session.StopReason `json:"stopReason"`
	Usage      *usage             `json:"usage,omitzero"`
}

// compressionNotice is a compression (an extension): the session's history was
// summarised to fit the model's context window.
type compressionNotice struct {
	Kind         string `json:"kind"`
	Text         string `json:"text"`
	TokensBefore int    `json:"tokensBefore"`
	TokensAfter  int    `json:"tokensAfter"`
}

// planNotice is a plan: the todo list of write_todos.
type planNotice struct {
	Kind    string      `json:"kind"`
	Entries []planEntry `json:"entries"`
}

type planEntry struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

const (
	// chunkDelay is how long a message or thought chunk may wait for more text before
	// it is sent: a fast stream arrives as a few notifications rather than hundreds.
	chunkDelay = 50 * time.Millisecond
	// maxChunkText is sent at once, whatever the delay.
	maxChunkText = 8 << 10
)

// updateStream is how the updates of one session reach a rich client: in order, with
// consecutive chunks of one kind coalesced for at most chunkDelay. Every other update
// sends the text held first, so nothing overtakes what was said before it. For other
// clients it sends nothing.
type updateStream struct {
	s       *Server
	session string
	rich    bool

	mu    sync.Mutex // held while sending, which keeps the order
	kind  string
	text  strings.Builder
	timer *time.Timer
}

// chunk takes a message or thought chunk.
func (u *updateStream) chunk(kind, text string) {
	if u == nil || !u.rich || text == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.kind != kind {
		u.flushLocked()
	}
	u.kind = kind
	u.text.WriteString(text)
	switch {
	case u.text.Len() >= maxChunkText:
		u.flushLocked()
	case u.timer == nil:
		u.timer = time.AfterFunc(chunkDelay, u.flush)
	}
}

// send sends an update after the text held.
func (u *updateStream) send(update any) {
	if u == nil || !u.rich {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.flushLocked()
	u.s.send("agentls/update", updateParams{Session: u.session, Update: update})
}

// flush sends the text held.
func (u *updateStream) flush() {
	if u == nil || !u.rich {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.flushLocked()
}

func (u *updateStream) flushLocked() {
	if u.timer != nil {
		u.timer.Stop()
		u.timer = nil
	}
	if u.text.Len() == 0 {
		return
	}
	u.s.send("agentls/update", updateParams{Session: u.session, Update: chunkNotice{Kind: u.kind, Text: u.text.String()}})
	u.text.Reset()
}

// notifier returns how updates of session are sent: through the session's stream when
// it is live, else directly.
func (s *Server) notifier(session string) func(any) {
	if v := s.views.lookup(session); v != nil {
		return v.updates.send
	}
	return func(u any) { s.send("agentls/update", updateParams{Session: session, Update: u}) }
}

// onMode tells the editor of a session's new approval mode: an update for rich
// clients, a message for others, who would otherwise not know why edits are refused
// (or asked about again).
func (s *Server) onMode(session string, m confirm.Mode) {
	s.log.Info("approval mode", "mode", m, "session", session)
	if s.capabilities().RichUpdates() {
		s.notifier(session)(modeNotice{Kind: updateMode, Mode: m})
		return
	}
	s.send("window/showMessage", protocol.ShowMessageParams{Type: protocol.MessageTypeInfo,
		Message: fmt.Sprintf("agentls: session %s now runs in %s mode", session, m)})
}

// onPlan shows the new plan of a session (the editor's for calls of no session): a plan
// update for rich clients, a checklist in the transcript for others.
func (s *Server) onPlan(session string, plan []session.PlanEntry) {
	entries := make([]planEntry, len(plan))
	for i, e := range plan {
		entries[i] = planEntry{Content: e.Content, Status: e.Status}
	}
	if v := s.views.lookup(session); v != nil && v.transcript != nil {
		v.transcript.plan(entries)
	}
	if s.capabilities().RichUpdates() {
		s.notifier(session)(planNotice{Kind: updatePlan, Entries: entries})
	}
}
