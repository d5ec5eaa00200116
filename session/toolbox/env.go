package toolbox

import (
	"os"
	"slices"

	"github.com/agentls/agentls/settings"
)

// hiddenVars returns the variables of agentls's environment that the commands the model
// has run (run_shell_command, discovered tools) do not inherit under the settings s:
// the secrets agentls itself uses, less those tools.shell.passEnv lists. They are the
// API keys the model clients read (package clients) and the variables that MCP
// servers' headers name as $VAR or ${VAR}: a command the model writes, or a project's
// tool, has no business reading the user's keys, and could send them anywhere.
//
// Left alone, by design:
//   - GOOGLE_APPLICATION_CREDENTIALS names a file, which a command can read whether or
//     not it sees the name, and the Google Cloud tools a project's commands run look
//     for it.
//   - The variables named in MCP servers' env: there the user hands a value to a
//     program on purpose, often a path or a setting ($HOME, $PATH) rather than a key.
//   - The environment of MCP servers themselves, which the user configures explicitly.
func hiddenVars(s settings.Settings) []string {
	names := []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"}
	for _, server := range s.MCPServers {
		for _, value := range server.Headers {
			// The names os.Expand sees are the ones package mcp expands.
			os.Expand(value, func(name string) string {
				if isVarName(name) && !basicVar(name) {
					names = append(names, name)
				}
				return ""
			})
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(s.Tools.Shell.PassEnv, n) })
	slices.Sort(names)
	return slices.Compact(names)
}

// isVarName reports whether name is a variable's name rather than a shell parameter
// such as $1 or $*, which os.Expand also reports.
func isVarName(name string) bool {
	for i, r := range name {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return name != ""
}

// basicVar reports a variable that no command can do without and that holds no
// secret, such as a header naming the user as $USER: it is never hidden.
func basicVar(name string) bool {
	switch name {
	case "HOME", "PATH", "USER", "LOGNAME", "SHELL", "PWD", "TMPDIR", "LANG", "TERM":
		return true
	}
	return false
}

// hiddenEnv returns the variables the commands the model has run do not inherit, under
// the settings in force: a Reconfigure applies from the next command.
func (tb *Toolbox) hiddenEnv() []string {
	return hiddenVars(tb.Config().Settings)
}
