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
}
