package tools

import (
	"os"
	"slices"
	"strings"
)

// Environ returns agentls's own environment, for a process a tool starts, without the
// variables named by hide (the keys agentls itself uses, which commands the model runs
// must not see unless the user passes them on).
func Environ(hide []string) []string {
	return withoutVars(os.Environ(), hide)
}

// withoutVars removes from env, a list of NAME=value entries, those whose name is
// among names, and returns what is left.
func withoutVars(env, names []string) []string {
	if len(names) == 0 {
		return env
	}
	return slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(names, name)
	})
}
