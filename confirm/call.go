package confirm

import "encoding/json"

// Call is what the policy knows of a tool call when deciding on it.
type Call struct {
	// Tool is the registered tool name, e.g. run_shell_command or myserver__search.
	Tool string
	// ReadOnly reports a tool whose kind leaves everything as it found it; plan mode
	// runs only these.
	ReadOnly bool
	// Server is the MCP server of an MCP tool.
	Server string
	// Args are the call's arguments, matched by rules' argsPattern.
	Args json.RawMessage
	// Details is what a person would be asked; nil when the tool never needs consent.
	Details *Details
}

// Decision is what the policy makes of a call.
type Decision string

// The decisions.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Verdict is a Decision with the reason for it, shown to the model when it is Deny.
type Verdict struct {
	Decision Decision
	Reason   string
	// Details is what to ask the person when Decision is Ask: the call's own Details
	// (for a shell command, with RootCommands filled in), or, when the call has none
	// but an ask rule matched, an info confirmation naming the tool. Nil otherwise.
	Details *Details
}

// Rule is a policy rule from settings. A rule matches a call when its tool name glob
// matches and every condition it sets holds. Among matching rules the highest priority
// wins; at equal priority deny wins over ask, and ask over allow.
type Rule struct {
	// ToolName is a glob over tool names ("run_shell_command", "myserver__*", "*").
	ToolName string   `json:"toolName"`
	Decision Decision `json:"decision"`
	Priority int      `json:"priority,omitempty"`
	// CommandPrefix matches shell calls each of whose commands starts with one of these
	// prefixes, at a word boundary.
	CommandPrefix []string `json:"commandPrefix,omitempty"`
	// CommandRegex matches shell calls whose command line matches this regular expression.
	CommandRegex string `json:"commandRegex,omitempty"`
	// ArgsPattern matches calls whose JSON arguments match this regular expression.
	ArgsPattern string `json:"argsPattern,omitempty"`
	// DenyMessage is added to the reason a deny rule gives the model, as Gemini CLI's
	// policy rules have it.
	DenyMessage string `json:"denyMessage,omitempty"`
	// Source is where the rule was written. It is set by the settings loader, never read
	// from a file: a file cannot claim to be the user's.
	Source Source `json:"-"`
	// Origin names the file of a rule not from a settings file (an extension's policy
	// file), for verdict reasons; set by the settings loader.
	Origin string `json:"-"`
}

// Source says who wrote a rule. A workspace's rules can only tighten what the user's
// rules decide, even when the workspace is trusted: among the rules matching a call,
// the user's winner and the workspace's winner are found separately (by priority), and
// the stricter of the two decides (deny over ask over allow), the user's at equal
// strictness. So no workspace rule outranks a user's deny, and a workspace allow never
// lifts a user's ask.
//
// An extension's rules (Gemini CLI's extension policies, which may deny or ask but
// never allow) rank below the user's, as Gemini CLI's extension tier ranks below its
// user tier: they count on the user's side only when no rule of the user's matches the
// call, and like the user's winner they are then weighed against the workspace's.
//
// The machine's system rules (Gemini CLI's admin tier) rank above all of these: when one
// matches a call, the highest-priority system rule decides it, whatever the others say.
type Source int

// The rule sources: the user's, the workspace's and the extensions', most trusted first,
// then the machine's, which decide over all three (see Source).
const (
	// SourceUser is the user's settings: their file, Gemini CLI's user file, and what
	// the editor passes.
	SourceUser Source = iota
	// SourceWorkspace is a workspace's settings files.
	SourceWorkspace
	// SourceExtension is the policy files of an enabled Gemini CLI extension.
	SourceExtension
	// SourceAdmin is the machine's system policy files (Gemini CLI's admin tier), which
	// the person's own rules cannot override.
	SourceAdmin
)

// String names the source for verdict reasons.
func (s Source) String() string {
	switch s {
	case SourceWorkspace:
		return "workspace"
	case SourceExtension:
		return "extension"
	case SourceAdmin:
		return "admin"
	}
	return "user"
}
