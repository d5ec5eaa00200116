package tools

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/confirm"
)

// Request asks the scheduler to run one call.
type Request struct {
	// CallID identifies the call; the model's function-call id, or one the front end
	// made. The scheduler makes one when it is empty.
	CallID string          `json:"toolCallId"`
	Name   string          `json:"name"`
	Args   json.RawMessage `json:"args"`
}

// Status is the state of a call in the scheduler.
type Status string

// The states of a call, in the order a call passes through them. Success, Error and
// Cancelled are terminal.
const (
	StatusValidating       Status = "validating"
	StatusScheduled        Status = "scheduled"
	StatusAwaitingApproval Status = "awaiting_approval"
	StatusExecuting        Status = "executing"
	StatusSuccess          Status = "success"
	StatusError            Status = "error"
	StatusCancelled        Status = "cancelled"
)

// Terminal reports whether s ends a call.
func (s Status) Terminal() bool {
	return s == StatusSuccess || s == StatusError || s == StatusCancelled
}

// ErrorInfo is the JSON form of a failure in a CallResult.
type ErrorInfo struct {
	Type    ErrorType `json:"type"`
	Message string    `json:"message"`
}

// CallResult is the outcome of one call. Its JSON form is the ToolResult of the editor
// protocol.
type CallResult struct {
	CallID  string     `json:"toolCallId"`
	Name    string     `json:"name"`
	Status  Status     `json:"status"`
	Summary string     `json:"summary,omitempty"`
	Output  string     `json:"output"`
	Display string     `json:"display,omitempty"`
	Diff    *FileDiff  `json:"diff,omitempty"`
	Error   *ErrorInfo `json:"error,omitempty"`
	// Parts are inline binary parts for the model (base64 in JSON).
	Parts []Part `json:"parts,omitempty"`
	// OutputFile names the file with the complete output when Output was shortened.
	OutputFile string `json:"outputFile,omitempty"`
	// Problems are the places in the workspace the output reports (Result.Problems).
	Problems *ProblemReport `json:"problems,omitempty"`
	// Hooks are what the user's hooks decided about the call, one line each, for
	// people (the call's card shows them).
	Hooks []string `json:"hooks,omitempty"`
	// Stop is set when a hook ended the agent's turn with this call: why.
	Stop string `json:"stop,omitempty"`
}

// Shown is the text people are shown of r: what the hooks decided, then the text for
// people (Display, else Output).
func (r CallResult) Shown() string {
	text := r.Display
	if text == "" {
		text = r.Output
	}
	if len(r.Hooks) == 0 {
		return text
	}
	return strings.Join(r.Hooks, "\n") + "\n\n" + text
}

// Event reports progress of a call to front ends: a state change (Status set) or a
// chunk of live output (Output set).
type Event struct {
	CallID string
	Name   string
	// Status is the call's new state; empty for an output chunk.
	Status Status
	// Title, Kind, Locations and Args describe the call; set from StatusScheduled on.
	Title     string
	Kind      Kind
	Locations []Location
	Args      json.RawMessage
	// Details is what the person is asked; set with StatusAwaitingApproval.
	Details *confirm.Details
	// Output is a chunk of live output.
	Output string
	// Result is set with a terminal Status.
	Result *CallResult
	// Note is a message for the person about the call that is neither its output nor
	// its result, such as where the rule of an "always, and save" answer was saved or
	// why it was not; it comes on an event of its own (no Status, no Output).
	Note *Note
	// Parent is the id of the call this call runs within (a sub-agent's call, the
	// invoke_agent call that started the sub-agent); empty for a call of its own. The
	// scheduler leaves it empty: whoever runs calls within a call sets it.
	Parent string
}

// Note is a message for the person (Event.Note).
type Note struct {
	Text string
	// Warning marks a note that says something did not happen as asked.
	Warning bool
}

// callIDKey carries the id of the call whose Execute runs.
type callIDKey struct{}

// withCallID returns ctx for the execution of the call id.
func withCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID returns the id of the call whose Execute ctx was passed to, or "": a call
// that runs calls of its own (a sub-agent) names itself as their parent with it.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

// Observer receives events. It is called from several goroutines at once and must not
// block for long.
type Observer func(Event)

// Abbreviate shortens s to at most n bytes, at a character boundary, marking the cut
// with "…": for the messages and titles that quote a call's text.
func Abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
