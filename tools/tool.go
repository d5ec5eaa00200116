// Package tools is the tool system of agentls: the contract every tool implements, the
// registry that holds built-in, discovered and MCP tools, and the scheduler that runs
// every call — from the model or from the editor — through validation, policy,
// confirmation and execution.
//
// Tools never speak LSP: they read and write through package workspace and ask for
// consent through package confirm; front ends observe a call through Events.
package tools

import (
	"context"
	"encoding/json"
	"io"

	"github.com/agentls/agentls/confirm"
)

// Kind classifies what a tool does, following the Agent Client Protocol. Front ends pick
// icons by it; plan mode runs only the read-only kinds.
type Kind string

// The tool kinds.
const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindDelete  Kind = "delete"
	KindMove    Kind = "move"
	KindSearch  Kind = "search"
	KindExecute Kind = "execute"
	KindThink   Kind = "think"
	KindFetch   Kind = "fetch"
	KindOther   Kind = "other"
)

// ReadOnly reports whether tools of this kind leave the workspace and the world as they
// found them.
func (k Kind) ReadOnly() bool {
	return k == KindRead || k == KindSearch || k == KindThink
}

// Writes reports whether tools of this kind change the files their locations name.
func (k Kind) Writes() bool {
	return k == KindEdit || k == KindDelete || k == KindMove
}

// Source says where a tool came from. Listings order tools by it.
type Source string

// The tool sources, in listing order.
const (
	SourceBuiltin    Source = "builtin"
	SourceDiscovered Source = "discovered"
	SourceMCP        Source = "mcp"
)

// Info is what a tool is: everything about it that does not depend on a call. Its JSON
// form is the ToolInfo of the editor protocol.
type Info struct {
	// Name is what the model calls; it follows Gemini CLI for built-in tools.
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
	// Description is written for the model.
	Description string `json:"description"`
	Kind        Kind   `json:"kind"`
	Source      Source `json:"source"`
	// Server names the MCP server of an MCP tool.
	Server string `json:"server,omitempty"`
	// Parameters is the JSON Schema of the call's arguments (an object schema).
	Parameters json.RawMessage `json:"parameters"`
	// Markdown reports whether the tool's output is Markdown rather than plain text.
	Markdown bool `json:"markdown,omitempty"`
	// Streams reports whether the tool writes live output while it runs.
	Streams bool `json:"streams,omitempty"`
	// Idempotent reports whether repeating a call has no further effect; only idempotent
	// tools are retried after a retryable failure.
	Idempotent bool `json:"-"`
	// Aliases are other names a model may call the tool by (names it had in earlier
	// Gemini CLI releases). The registry accepts them; the model is told of the tool
	// under Name alone, so that it never sees two tools that are one.
	Aliases []string `json:"-"`
}

// Situation is what a session's tools are declared for, beyond the registry: whether
// some tools can be of any use depends on it.
type Situation struct {
	// Mode is the session's approval mode.
	Mode confirm.Mode
	// CanAsk reports whether a person can be asked: the session's front end has an
	// Asker.
	CanAsk bool
	// Refused reports whether the session's policy refuses every call of the named
	// tool (confirm.Policy.DeniesOutright): such a tool is not declared. Nil refuses
	// none.
	Refused func(name string) bool
}

// Situational is a tool that is of use only in some situations, or states of its own:
// plan mode's switches, questions to a person who may not be there, the companions of
// background commands before there is one. Registry.DeclarationsIn leaves it out of
// the declarations while Offered reports false; it stays registered, so a model that
// calls it anyway gets its usual answer. Offered is called for every model request,
// so it must be cheap.
type Situational interface {
	Tool
	Offered(Situation) bool
}

// Tool is one tool. Implementations must be safe for concurrent use.
type Tool interface {
	Info() Info
	// Build checks arguments that already satisfy Info().Parameters with the tool's own
	// rules and returns a call ready to run. It returns an *Error (invalid_tool_params,
	// path_not_in_workspace, …) for arguments it refuses.
	Build(args json.RawMessage) (Invocation, error)
}

// Location is a place a call reads or writes: an absolute path and, where known, a
// 1-based line.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// Invocation is one validated call of a tool.
type Invocation interface {
	// Describe says in one line, for people, what the call does.
	Describe() string
	// Locations lists the files the call touches. For tools whose Kind writes, these
	// are the files it writes: the scheduler never runs two such calls on one file at
	// once, and runs those of one batch in request order.
	Locations() []Location
	// Confirmation returns what a person must approve before the call runs, or nil if
	// the call needs no consent whatever the approval mode. Whether the question is
	// actually put is the policy's decision. The scheduler calls it once before
	// Execute, after the earlier calls of the batch writing the same files have ended;
	// a call whose proposal no longer fits the files at Execute should fail with
	// stale_content rather than do what nobody saw.
	Confirmation(ctx context.Context) (*confirm.Details, error)
	// Execute runs the call. Live output, if any, goes to out as it is produced. A
	// failure is returned as an error, preferably an *Error; the scheduler turns a
	// cancelled ctx into a cancelled result.
	Execute(ctx context.Context, out io.Writer) (*Result, error)
	// Capabilities says what else the call can do. The scheduler asks after Build and
	// again after a Modify.
	Capabilities() Capabilities
}

// Capabilities are what a call can do beyond the rest of its Invocation. They are part
// of the contract rather than optional interfaces found by type assertion, so that a
// decorator embedding the Invocation it wraps passes them on (or deliberately changes
// them) instead of hiding them.
type Capabilities struct {
	// Command is the shell command line the call runs, so that a registry restriction
	// such as run_shell_command(git status) can be enforced; empty for a call that runs
	// none.
	Command string
	// Reshapes reports that the call may change the shape of the file tree: make, move
	// or remove links or directories, check out or unpack files (see
	// confirm.Analysis.Reshapes). What other calls of its batch were judged by, such
	// as a redirection into a directory it turns into a link, may then name another
	// file; so the scheduler runs it apart from them, as if it set wait_for_previous.
	Reshapes bool
	// Modify, when set, accepts a person's edited version of the call's proposal (the
	// modify_with_editor outcome): it replaces the proposed new content, and the call
	// recomputes its parameters from it. A call without it runs as proposed. Modify
	// must not move the call onto files it did not propose to write.
	Modify func(newContent string) error
	// Answered, when set, receives the person's answer to the call's confirmation once
	// it lets the call run: the answers to the questions of a confirm.TypeAsk
	// confirmation. It is not called when nobody was asked (a rule allowed the call).
	Answered func(confirm.Answer)
}

// NoCapabilities is embedded by invocations that run no command and take no modified
// version.
type NoCapabilities struct{}

// Capabilities implements Invocation.
func (NoCapabilities) Capabilities() Capabilities { return Capabilities{} }

// Part is binary content for the model, such as an image or a PDF.
type Part struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

// FileDiff is the display form of a change to one file.
type FileDiff struct {
	Path string `json:"path"`
	// Diff is a unified diff.
	Diff string `json:"diff"`
	// OriginalContent is nil for a new file.
	OriginalContent *string `json:"originalContent"`
	NewContent      string  `json:"newContent"`
}

// Result is what a successful call produced.
type Result struct {
	// Summary is one line for people.
	Summary string
	// Output is the text the model receives.
	Output string
	// Parts are inline binary parts for the model.
	Parts []Part
	// Display is the text shown to people, when it differs from Output.
	Display string
	// Diff is the display form of a file change.
	Diff *FileDiff
	// OutputFile names a file holding the complete output when Output was shortened.
	OutputFile string
	// Problems, when not nil, report the places in the workspace the output points at
	// as a compiler, linter or test runner does; a tool's report replaces its last one.
	Problems *ProblemReport
}

// ProblemReport is what a call's output says about places in the workspace:
// run_shell_command's "path:line:col: message" lines. Front ends show them where the
// user looks (diagnostics), and a later report of the tool replaces them, so an empty
// report clears what the last one showed.
type ProblemReport struct {
	Problems []Problem `json:"problems"`
}

// Problem is one place a call's output reports.
type Problem struct {
	Path     string   `json:"path"`             // absolute, inside the workspace
	Line     int      `json:"line"`             // 1-based
	Column   int      `json:"column,omitempty"` // 1-based byte column; 0 when not given
	Message  string   `json:"message"`
	Severity Severity `json:"severity"`
}

// Severity is how grave a Problem is, numbered as LSP's DiagnosticSeverity.
type Severity int

// The severities.
const (
	SeverityError       Severity = 1
	SeverityWarning     Severity = 2
	SeverityInformation Severity = 3
	SeverityHint        Severity = 4
)
