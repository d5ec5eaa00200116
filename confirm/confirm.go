// Package confirm holds the consent model of agentls: what a person is shown before a
// tool call runs (Details), what they can answer (Outcome), the approval modes, and the
// Policy that decides, from settings rules, the mode and the session allowlist, whether a
// call runs, is refused, or must be asked about.
//
// The package knows nothing of editors or terminals: a front end provides an Asker.
package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentls/agentls/workspace"
)

// Type says what kind of consent a call needs, which decides how it is shown.
type Type string

// The confirmation types of the editor protocol.
const (
	TypeEdit    Type = "edit"
	TypeExecute Type = "execute"
	TypeMCP     Type = "mcp"
	TypeInfo    Type = "info"
	// TypeAsk is not a call to approve but questions for the person (ask_user): the
	// answer carries their Answers. Front ends that cannot put the questions refuse.
	TypeAsk Type = "ask_user"
)

// Details is what a person is shown when asked to approve a call. Which fields are set
// depends on Type; the others stay zero.
type Details struct {
	Type  Type   `json:"type"`
	Title string `json:"title"`

	// Edit: the file, the unified diff, and the content before (nil for a new file) and after.
	Path            string  `json:"path,omitempty"`
	Diff            string  `json:"diff,omitempty"`
	OriginalContent *string `json:"originalContent,omitempty"`
	NewContent      string  `json:"newContent,omitempty"`
	// Hunks are the hunks of Diff in order, for a front end that lets a person accept
	// some of them (Answer.AcceptedHunks). Only set when the call can apply a part of
	// its proposal.
	Hunks []Hunk `json:"hunks,omitempty"`

	// Execute: the command line, the commands it runs (see Analyze) and where it runs.
	Command      string   `json:"command,omitempty"`
	RootCommands []string `json:"rootCommands,omitempty"`
	Directory    string   `json:"directory,omitempty"`
	// Sandbox says where the command would run: SandboxContained, SandboxOutside (the
	// model asked to leave the sandbox, for the reason in Justification), or "" where
	// commands are not contained.
	Sandbox       string `json:"sandbox,omitempty"`
	Justification string `json:"justification,omitempty"`

	// MCP: the server, the tool's name on that server and the arguments of the call.
	Server    string          `json:"server,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`

	// Info: a free-form question, and the URLs the call would reach.
	Prompt string   `json:"prompt,omitempty"`
	URLs   []string `json:"urls,omitempty"`

	// Ask: the questions, in Gemini CLI's ask_user form.
	Questions []Question `json:"questions,omitempty"`

	// Choices are the answers the person is offered, in the order to show them. The
	// policy fills them in for every question it asks (see Policy.Offer); a question
	// that is not "may this call run?" (such as whether to trust a folder) brings its
	// own. Front ends show exactly these and answer with the chosen one's ID.
	Choices []Choice `json:"choices,omitempty"`

	// NoAlways makes the answer hold for this call only: the question is asked in every
	// mode (yolo and auto_edit included) and whatever was allowed for the session, and
	// an "always" answer to it is not remembered. For calls whose effect reaches beyond
	// the project, such as a fact saved to the user's own memory file.
	NoAlways bool `json:"noAlways,omitempty"`
	// PersonOnly lets the call run only on a person's answer to this very question: no
	// allow rule (the user's, a workspace's, a wildcard), approval mode or earlier
	// answer runs it, and where nobody can be asked it is refused; a deny rule still
	// refuses it. It implies NoAlways. A call that changes what the person consented to
	// (the session's approval mode) or that needs their words (ask_user) is one: a
	// rule that would run it without them would let a model, or a repository's
	// settings, decide in the person's place.
	PersonOnly bool `json:"-"`
}

// The values of Details.Sandbox.
const (
	// SandboxContained is a command that will run in the OS sandbox.
	SandboxContained = "contained"
	// SandboxOutside is a command the model asked to run outside the sandbox, which
	// is asked about every time in the default and auto_edit modes and refused in
	// plan mode.
	SandboxOutside = "outside"
)

// Hunk is one hunk of an edit's diff, as workspace.DiffHunks numbers it; an answer
// names the hunks it accepts by their Index.
type Hunk = workspace.Hunk

// Question is one question of an ask_user call, as Gemini CLI's ask_user takes it.
type Question struct {
	Question string `json:"question"`
	// Header is a very short label for the question, shown as a tag.
	Header string `json:"header"`
	// Type is QuestionChoice, QuestionText or QuestionYesNo.
	Type        QuestionType `json:"type"`
	Options     []Option     `json:"options,omitempty"`
	MultiSelect bool         `json:"multiSelect,omitempty"`
	// Placeholder is the hint shown in the field of a free-form answer.
	Placeholder string `json:"placeholder,omitempty"`
}

// QuestionType says how a Question is answered.
type QuestionType string

// The question types of Gemini CLI's ask_user.
const (
	// QuestionChoice offers Options; an answer outside them ("Other") is free text.
	QuestionChoice QuestionType = "choice"
	QuestionText   QuestionType = "text"
	QuestionYesNo  QuestionType = "yesno"
)

// The answers of a QuestionYesNo, as Gemini CLI words them.
const (
	AnswerYes = "Yes"
	AnswerNo  = "No"
)

// Choices returns the answers q offers to choose from: its options' labels, or
// AnswerYes and AnswerNo; none for a question that wants free text. (A choice or yes/no
// question also takes words of the person's own.)
func (q Question) Choices() []string {
	switch q.Type {
	case QuestionYesNo:
		return []string{AnswerYes, AnswerNo}
	case QuestionChoice, "":
		out := make([]string, len(q.Options))
		for i, o := range q.Options {
			out[i] = o.Label
		}
		return out
	}
	return nil
}

// Option is one choice offered for a Question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// Choice is one answer offered for a question: what it is called, the outcome it
// stands for, and, for an "always" answer, what it covers and where it is saved.
type Choice struct {
	// ID names the choice in an answer (Answer.Choice): one of the Choice… constants
	// for the answers the policy offers, the outcome for a question's own choices.
	ID      string  `json:"id"`
	Outcome Outcome `json:"outcome"`
	Label   string  `json:"label"`
	// Covers says, for an "always" or "reject always" choice, what it holds for in
	// the rest of the session: the programs of a shell command ("git, go"), a tool,
	// an MCP server's tool or every tool of a server, or every edit.
	Covers string `json:"covers,omitempty"`
	// Persist, when set, saves the approval as a rule in that settings file too.
	Persist Scope `json:"persist,omitempty"`
}

// The IDs of the choices the policy offers (see Policy.Offer).
const (
	ChoiceOnce         = "once"
	ChoiceAlways       = "always"
	ChoiceAlwaysServer = "always_server"
	ChoiceAlwaysSave   = "always_save"
	ChoiceReject       = "reject"
	ChoiceRejectAlways = "reject_always"
)

// Outcome is a person's answer to a confirmation.
type Outcome string

// The outcomes of the editor protocol.
const (
	ProceedOnce         Outcome = "proceed_once"
	ProceedAlways       Outcome = "proceed_always"
	ProceedAlwaysServer Outcome = "proceed_always_server"
	ProceedAlwaysTool   Outcome = "proceed_always_tool"
	ModifyWithEditor    Outcome = "modify_with_editor"
	Cancel              Outcome = "cancel"
	// RejectAlways refuses the call and, for the rest of the session, every call
	// like it without asking (see Policy.RememberIn).
	RejectAlways Outcome = "reject_always"
)

// Valid reports whether o is one of the known outcomes.
func (o Outcome) Valid() bool {
	switch o {
	case ProceedOnce, ProceedAlways, ProceedAlwaysServer, ProceedAlwaysTool, ModifyWithEditor, Cancel, RejectAlways:
		return true
	}
	return false
}

// Proceeds reports whether the outcome lets the call run.
func (o Outcome) Proceeds() bool { return o.Valid() && o != Cancel && o != RejectAlways }

// Always reports whether the outcome allows calls like this one for the session.
func (o Outcome) Always() bool {
	return o == ProceedAlways || o == ProceedAlwaysServer || o == ProceedAlwaysTool
}

// Scope names the settings file an approval is saved in (Answer.Persist).
type Scope string

// The scopes of a saved approval.
const (
	// ScopeUser is the user's own settings file.
	ScopeUser Scope = "user"
	// ScopeWorkspace is the workspace's settings file; only a trusted workspace's is
	// written.
	ScopeWorkspace Scope = "workspace"
)

// Answer is an Outcome with, for ModifyWithEditor, the person's edited version of the
// proposed file content, which replaces the proposal, and for TypeAsk the answers.
type Answer struct {
	Outcome Outcome `json:"outcome"`
	Content string  `json:"content,omitempty"`
	// Answers are the answers to the Questions of a TypeAsk confirmation, by the
	// question's 0-based index in decimal ("0", "1", …), as Gemini CLI keys them; the
	// labels of several chosen options are joined with ", ". A question left
	// unanswered has no entry.
	Answers map[string]string `json:"answers,omitempty"`
	// AcceptedHunks, with ProceedOnce, are the indices of the hunks of an edit's
	// Details.Hunks that the person accepted: only those are applied. Nil means the
	// whole proposal; empty, none of it (a refusal).
	AcceptedHunks []int `json:"acceptedHunks,omitzero"`
	// Persist, with an "always" outcome, also saves the rule the answer stands for
	// in the settings file of that scope.
	Persist Scope `json:"persist,omitempty"`
	// Choice is the ID of the offered choice (Details.Choices) the person took; with
	// it, the choice's outcome and Persist are the answer's (see Resolve).
	Choice string `json:"choice,omitempty"`
}

// Resolve returns a with the outcome and Persist of the choice it names, checked
// against the question d (see Check). An answer that names no choice is checked as
// it is.
func (a Answer) Resolve(d Details) (Answer, error) {
	if a.Choice != "" {
		i := slices.IndexFunc(d.Choices, func(c Choice) bool { return c.ID == a.Choice })
		if i < 0 {
			ids := make([]string, len(d.Choices))
			for j, c := range d.Choices {
				ids[j] = c.ID
			}
			return Answer{}, fmt.Errorf("choice %q was not offered (the choices were %s)", a.Choice, strings.Join(ids, ", "))
		}
		a.Outcome, a.Persist = d.Choices[i].Outcome, d.Choices[i].Persist
	}
	return a, a.Check(d)
}

// Check reports what makes a an invalid answer to a question with details d: an
// unknown outcome, accepted hunks with an outcome other than ProceedOnce, out of
// range or repeated, or a Persist that is not a scope or comes with an outcome that
// is not an "always" one.
func (a Answer) Check(d Details) error {
	if !a.Outcome.Valid() {
		return fmt.Errorf("%q is not an outcome", a.Outcome)
	}
	if a.AcceptedHunks != nil {
		if a.Outcome != ProceedOnce {
			return fmt.Errorf("acceptedHunks come only with proceed_once, not %s", a.Outcome)
		}
		seen := make(map[int]bool, len(a.AcceptedHunks))
		for _, i := range a.AcceptedHunks {
			if i < 0 || i >= len(d.Hunks) {
				return fmt.Errorf("acceptedHunks: hunk %d does not exist (the proposal has %d hunks)", i, len(d.Hunks))
			}
			if seen[i] {
				return fmt.Errorf("acceptedHunks: hunk %d is given twice", i)
			}
			seen[i] = true
		}
	}
	switch a.Persist {
	case "":
	case ScopeUser, ScopeWorkspace:
		if !a.Outcome.Always() {
			return fmt.Errorf("persist comes only with an \"always\" outcome, not %s", a.Outcome)
		}
		if d.NoAlways {
			return errors.New("persist: this question is asked every time, and its answer cannot be saved")
		}
	default:
		return fmt.Errorf("persist %q is not \"user\" or \"workspace\"", a.Persist)
	}
	return nil
}

// Request is one question put to an Asker.
type Request struct {
	// ID identifies this confirmation; front ends use it to answer out of band.
	ID         string  `json:"id"`
	ToolCallID string  `json:"toolCallId"`
	ToolName   string  `json:"toolName"`
	Details    Details `json:"details"`
}

// Asker puts a confirmation to a person. An error, or a cancelled context, means the
// call is not approved: no answer is never consent.
type Asker interface {
	Ask(ctx context.Context, req Request) (Answer, error)
}

// Mode is the approval mode of a session.
type Mode string

// The approval modes.
const (
	// ModeDefault asks before edits, shell commands and untrusted external tools.
	ModeDefault Mode = "default"
	// ModeAutoEdit runs edits without asking; everything else as in ModeDefault.
	ModeAutoEdit Mode = "auto_edit"
	// ModeYolo asks about nothing; deny rules still apply.
	ModeYolo Mode = "yolo"
	// ModePlan runs only read-only tools and refuses the rest.
	ModePlan Mode = "plan"
)

// ParseMode returns the Mode named by s, or an error listing the valid names.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeDefault, ModeAutoEdit, ModeYolo, ModePlan:
		return m, nil
	case "":
		return ModeDefault, nil
	}
	return "", fmt.Errorf("unknown approval mode %q (want default, auto_edit, yolo or plan)", s)
}
