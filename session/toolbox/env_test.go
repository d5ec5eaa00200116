package toolbox

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools/shell"
)

func TestHiddenVars(t *testing.T) {
	keys := []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"}
	tests := []struct {
		name     string
		settings string
		want     []string
	}{
		{"model keys", `{}`, keys},
		{"MCP headers", `{"mcpServers": {
			"a": {"url": "http://a.invalid", "headers": {"Authorization": "Bearer ${A_TOKEN}", "X-Two": "$B_KEY:$A_TOKEN"}},
			"b": {"url": "http://b.invalid", "headers": {"X-User": "$USER", "X-Odd": "$1 $* ${} $", "X-Home": "${HOME}/x"}},
			"c": {"command": "server", "env": {"TOKEN": "$C_TOKEN", "PATH": "$PATH"}}}}`,
			[]string{"A_TOKEN", "B_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"}},
		{"passEnv", `{"tools": {"shell": {"passEnv": ["GEMINI_API_KEY", "A_TOKEN", "NOT_A_SECRET"]}},
			"mcpServers": {"a": {"url": "http://a.invalid", "headers": {"Authorization": "Bearer $A_TOKEN"}}}}`,
			[]string{"GOOGLE_API_KEY", "OPENAI_API_KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hiddenVars(parse(t, tt.settings)); !slices.Equal(got, tt.want) {
				t.Errorf("hiddenVars = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSecretsKeptFromCommands runs env through the toolbox's run_shell_command and
// through a discovered tool: GEMINI_API_KEY and a variable an MCP header names are not
// in their environment unless the user's tools.shell.passEnv lists them; an untrusted
// workspace's passEnv does not count.
func TestSecretsKeptFromCommands(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "marker-secret")
	t.Setenv("MCP_TOKEN", "marker-token")
	t.Setenv("AGENTLS_TEST_OTHER", "marker-other")
	const tools = `"discoveryCommand": "sh discover.sh", "callCommand": "sh call.sh"`
	const mcp = `"mcpServers": {"remote": {"url": "http://remote.invalid/mcp", "headers": {"Authorization": "Bearer ${MCP_TOKEN}"}}}`
	tests := []struct {
		name      string
		user      string
		workspace string // .agentls/settings.json of the untrusted workspace
		seen      []string
		unseen    []string
	}{
		{"hidden", `{"tools": {` + tools + `}, ` + mcp + `}`, "",
			[]string{"AGENTLS_TEST_OTHER=marker-other"}, []string{"marker-secret", "marker-token"}},
		{"passed", `{"tools": {` + tools + `, "shell": {"passEnv": ["GEMINI_API_KEY"]}}, ` + mcp + `}`, "",
			[]string{"GEMINI_API_KEY=marker-secret", "AGENTLS_TEST_OTHER=marker-other"}, []string{"marker-token"}},
		{"passed by an untrusted workspace", `{"tools": {` + tools + `}, ` + mcp + `}`,
			`{"tools": {"shell": {"passEnv": ["GEMINI_API_KEY", "MCP_TOKEN"]}}}`,
			[]string{"AGENTLS_TEST_OTHER=marker-other"}, []string{"marker-secret", "marker-token"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{
				"discover.sh": "#!/bin/sh\necho '[{\"name\": \"show_env\", \"description\": \"Prints its environment.\"}]'\n",
				"call.sh":     "#!/bin/sh\nenv\n",
			}
			if tt.workspace != "" {
				files[".agentls/settings.json"] = tt.workspace
			}
			root, config := testutil.Dirs(t, files, tt.user)
			tb, err := New(Options{Roots: []string{root}, ConfigDir: config, GeminiDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if _, err := tb.Discover(context.Background()); err != nil {
				t.Fatal(err)
			}
			for name, args := range map[string]string{shell.RunToolName: `{"command": "env"}`, "show_env": `{}`} {
				tool, ok := tb.Config().Registry.Get(name)
				if !ok {
					t.Fatalf("no tool %s", name)
				}
				res, err := testutil.Call(context.Background(), t, tool, args, nil)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for _, s := range tt.seen {
					if !strings.Contains(res.Output, s) {
						t.Errorf("%s: %s missing from the environment:\n%s", name, s, res.Output)
					}
				}
				for _, s := range tt.unseen {
					if strings.Contains(res.Output, s) {
						t.Errorf("%s: %s in the environment:\n%s", name, s, res.Output)
					}
				}
			}
		})
	}
}
