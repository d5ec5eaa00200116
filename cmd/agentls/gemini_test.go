package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/settings"
)

// What a Gemini CLI user has set up, in Gemini CLI's formats, through the real binary
// and the fake Gemini server. The fixtures are written here.

// writeFiles writes files (slash-separated paths below dir → content).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// userText returns the text of the first user turn of a request.
func userText(r fakegemini.GenerateRequest) string {
	for _, c := range r.Contents {
		if c.Role == "user" {
			var b strings.Builder
			for _, p := range c.Parts {
				b.WriteString(p.Text)
			}
			return b.String()
		}
	}
	return ""
}

// declared returns the declaration called name of a request, or nil.
func declared(r fakegemini.GenerateRequest, name string) *fakegemini.FunctionDeclaration {
	for _, tl := range r.Tools {
		for i, d := range tl.FunctionDeclarations {
			if d.Name == name {
				return &tl.FunctionDeclarations[i]
			}
		}
	}
	return nil
}

// TestCustomCommands: a custom command of ~/.gemini/commands, namespaced by its folder,
// runs through agentls prompt with each injection expanded: {{args}} as typed, @{…}
// the workspace file, !{…} a shell command's output, its {{args}} shell-quoted. Without
// consent the shell command does not run (the marker file stays absent) and no prompt
// is sent; a workspace's commands count only once the workspace is trusted.
func TestCustomCommands(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	writeFiles(t, cfg, map[string]string{
		".gemini/commands/git/commit.toml": `description = "Writes a commit message"
prompt = """
Task for {{args}}.
Notes:
@{notes.txt}
Shell:
!{touch ran-marker; printf 'shell saw %s' {{args}}}
"""
`,
		".gemini/commands/plain.toml": `prompt = "Plain instructions."`,
	})
	writeFiles(t, root, map[string]string{
		"notes.txt":                   "the notes say 42\n",
		".gemini/commands/local.toml": `prompt = "Workspace command for {{args}}."`,
	})
	marker := filepath.Join(root, "ran-marker")
	run := func(env []string, args ...string) (outcome, []fakegemini.GenerateRequest) {
		t.Helper()
		srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Text: "Done."}}})
		defer srv.Close()
		env = append(env, "GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL="+srv.URL, "XDG_STATE_HOME="+filepath.Join(cfg, "state"))
		got := agentlsWith(t, root, cfg, env, append([]string{"prompt"}, args...)...)
		reqs, err := srv.GenerateRequests()
		if err != nil {
			t.Fatal(err)
		}
		return got, reqs
	}

	// No terminal, default mode: the shell command is refused, and the prompt with it.
	got, reqs := run(nil, "/git:commit it's done")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the !{} command ran without consent")
	}
	if got.code == 0 || len(reqs) != 0 || !strings.Contains(got.stderr, "/git:commit") {
		t.Errorf("refused: exit %d, %d model requests\n%s", got.code, len(reqs), got.stderr)
	}

	got, reqs = run(nil, "--approval-mode", "yolo", "/git:commit it's done")
	if got.code != 0 || len(reqs) != 1 {
		t.Fatalf("yolo: exit %d, %d requests\n%s", got.code, len(reqs), got.stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the !{} command did not run: %v", err)
	}
	text := userText(reqs[0])
	for _, want := range []string{"Task for it's done.", "the notes say 42", "shell saw it's done"} {
		if !strings.Contains(text, want) {
			t.Errorf("the prompt sent lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "{{args}}") || strings.Contains(text, "@{") || strings.Contains(text, "!{") {
		t.Errorf("unexpanded template:\n%s", text)
	}

	// No {{args}}: the command line follows the prompt after a blank line.
	_, reqs = run(nil, "/plain with words")
	if len(reqs) != 1 || userText(reqs[0]) != "Plain instructions.\n\n/plain with words" {
		t.Errorf("plain: %q", userText(reqs[0]))
	}

	// The workspace's command: sent as typed while untrusted, expanded once trusted.
	_, reqs = run(nil, "/local x")
	if len(reqs) != 1 || userText(reqs[0]) != "/local x" {
		t.Errorf("an untrusted workspace's command was expanded: %q", userText(reqs[0]))
	}
	_, reqs = run([]string{"AGENTLS_TRUST_WORKSPACE=1"}, "/local x")
	if len(reqs) != 1 || userText(reqs[0]) != "Workspace command for x." {
		t.Errorf("a trusted workspace's command: %q", userText(reqs[0]))
	}
}

// TestSkillActivated: the model sees a user skill's name and description in
// activate_skill's declaration, calls it, and gets the skill's body in its next
// request; a workspace skill is declared only in a trusted workspace, and without
// skills activate_skill is not declared at all.
func TestSkillActivated(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	writeFiles(t, cfg, map[string]string{
		".gemini/skills/release-notes/SKILL.md":           "---\nname: release-notes\ndescription: Writes release notes: use when asked for a changelog.\n---\n\n# Steps\n\nRead scripts/collect.sh, then write NOTES-7731.\n",
		".gemini/skills/release-notes/scripts/collect.sh": "#!/bin/sh\ngit log --oneline\n",
	})
	writeFiles(t, root, map[string]string{
		".gemini/skills/ws-skill/SKILL.md": "---\nname: ws-skill\ndescription: A workspace skill.\n---\nBody.\n",
	})
	script := clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{{Name: "activate_skill", Args: json.RawMessage(`{"name": "release-notes"}`)}}},
		{Text: "Following the skill."},
	}}
	prompt := func(env []string) []fakegemini.GenerateRequest {
		t.Helper()
		srv := fakegemini.Start(script)
		defer srv.Close()
		env = append(env, "GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL="+srv.URL, "XDG_STATE_HOME="+filepath.Join(cfg, "state"))
		got := agentlsWith(t, root, cfg, env, "prompt", "Write the changelog.")
		if got.code != 0 {
			t.Fatalf("exit %d\n%s", got.code, got.stderr)
		}
		reqs, err := srv.GenerateRequests()
		if err != nil || len(reqs) != 2 {
			t.Fatalf("%d requests (%v)", len(reqs), err)
		}
		return reqs
	}
	reqs := prompt(nil)
	d := declared(reqs[0], "activate_skill")
	if d == nil || !strings.Contains(d.Description, "release-notes: Writes release notes: use when asked for a changelog.") ||
		strings.Contains(d.Description, "ws-skill") || !strings.Contains(string(d.ParametersJSONSchema)+string(d.Parameters), `"release-notes"`) {
		t.Fatalf("activate_skill declared as %+v", d)
	}
	last := reqs[1].Contents[len(reqs[1].Contents)-1]
	if len(last.Parts) != 1 || last.Parts[0].FunctionResponse == nil ||
		!strings.Contains(string(last.Parts[0].FunctionResponse.Response), "write NOTES-7731") ||
		!strings.Contains(string(last.Parts[0].FunctionResponse.Response), "scripts/collect.sh") {
		t.Errorf("the skill's body is not in the next request: %+v", last)
	}
	reqs = prompt([]string{"AGENTLS_TRUST_WORKSPACE=1"})
	if d := declared(reqs[0], "activate_skill"); d == nil || !strings.Contains(d.Description, "ws-skill: A workspace skill.") {
		t.Errorf("a trusted workspace's skill is not declared: %+v", d)
	}

	// No skills: no declaration.
	empty := t.TempDir()
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Text: "Hi."}}})
	defer srv.Close()
	agentlsWith(t, root, empty, []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + srv.URL, "XDG_STATE_HOME=" + filepath.Join(empty, "state")}, "prompt", "hi")
	if reqs, err := srv.GenerateRequests(); err != nil || len(reqs) != 1 || declared(reqs[0], "activate_skill") != nil || declared(reqs[0], "read_file") == nil {
		t.Errorf("without skills: %d requests, activate_skill declared %v (%v)", len(reqs), reqs != nil && declared(reqs[0], "activate_skill") != nil, err)
	}
}

// TestExtensions: an extension of ~/.gemini/extensions brings an MCP server (the npm
// server-everything), a command, a skill and a context file; one that Gemini CLI's
// enablement file disables for the workspace brings nothing; agentls extensions list
// shows both with what they bring.
func TestExtensions(t *testing.T) {
	entry := testutil.NPMServer(t, "server-everything")
	root, cfg := workspaceDir(t), t.TempDir()
	manifest := func(name, server string) string {
		m := map[string]any{"name": name, "version": "1.2.0", "description": "The " + name + " extension",
			"mcpServers":   map[string]any{server: map[string]any{"command": "node", "args": []string{entry, "stdio"}, "cwd": "${extensionPath}"}},
			"excludeTools": []string{"web_fetch"}}
		data, _ := json.Marshal(m)
		return string(data)
	}
	writeFiles(t, cfg, map[string]string{
		".gemini/extensions/demo/gemini-extension.json": manifest("demo", "demo-everything"),
		".gemini/extensions/demo/commands/deploy/now.toml": `description = "Deploys"
prompt = "Deploy {{args}} now."`,
		".gemini/extensions/demo/skills/ship/SKILL.md": "---\nname: ship\ndescription: Ships things.\n---\nShip it.\n",
		".gemini/extensions/demo/GEMINI.md":            "Extension context 5521.\n",
		".gemini/extensions/demo/hooks/hooks.json":     `{"hooks": {}}`,
		".gemini/extensions/off/gemini-extension.json": manifest("off", "off-everything"),
		".gemini/extensions/off/commands/offcmd.toml":  `prompt = "Should not load."`,
		".gemini/extensions/extension-enablement.json": `{"off": {"overrides": ["!` + filepath.ToSlash(filepath.Dir(root)) + `/*"]}}`,
	})

	// A workspace's own extension counts only once the workspace is trusted.
	writeFiles(t, root, map[string]string{".gemini/extensions/wsext/gemini-extension.json": manifest("wsext", "ws-everything")})

	got := agentlsWith(t, root, cfg, nil, "extensions", "list", "--json")
	var exts []settings.Extension
	if err := json.Unmarshal([]byte(got.stdout), &exts); err != nil || got.code != 0 {
		t.Fatalf("extensions list --json: exit %d, %v\n%s%s", got.code, err, got.stdout, got.stderr)
	}
	if len(exts) != 2 || exts[0].Name != "demo" || exts[0].Disabled || exts[1].Name != "off" || !exts[1].Disabled ||
		strings.Join(exts[0].MCPServers, ",") != "demo-everything" || strings.Join(exts[0].Commands, ",") != "deploy:now" ||
		strings.Join(exts[0].Skills, ",") != "ship" || len(exts[0].ContextFiles) != 1 || exts[0].Hooks == "" {
		t.Errorf("extensions: %+v", exts)
	}
	if !strings.Contains(got.stderr, "extensions ignored") {
		t.Errorf("the untrusted workspace's extensions are not reported skipped: %s", got.stderr)
	}
	got = agentlsWith(t, root, cfg, []string{"AGENTLS_TRUST_WORKSPACE=1"}, "extensions", "list", "--json")
	if err := json.Unmarshal([]byte(got.stdout), &exts); err != nil || len(exts) != 3 || exts[2].Name != "wsext" {
		t.Errorf("trusted: %+v (%v)", exts, err)
	}
	got = agentlsWith(t, root, cfg, nil, "extensions", "list")
	for _, want := range []string{"demo 1.2.0  enabled", "MCP servers: demo-everything", "commands: /deploy:now", "skills: ship", "off 1.2.0  disabled"} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("extensions list lacks %q:\n%s", want, got.stdout)
		}
	}

	got = agentlsWith(t, root, cfg, nil, "tools")
	if got.code != 0 || !strings.Contains(got.stdout, "demo-everything__echo") || strings.Contains(got.stdout, "off-everything") ||
		strings.Contains(got.stdout, "ws-everything") ||
		strings.Contains(got.stdout, "web_fetch") {
		t.Errorf("agentls tools: the extension's server, the disabled one's, its excludeTools:\n%s\n%s", got.stdout, got.stderr)
	}

	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{{Text: "Deployed."}}})
	defer srv.Close()
	env := []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + srv.URL, "XDG_STATE_HOME=" + filepath.Join(cfg, "state")}
	got = agentlsWith(t, root, cfg, env, "prompt", "/deploy:now staging")
	reqs, err := srv.GenerateRequests()
	if err != nil || len(reqs) != 1 || got.code != 0 {
		t.Fatalf("prompt: exit %d, %d requests (%v)\n%s", got.code, len(reqs), err, got.stderr)
	}
	if text := userText(reqs[0]); text != "Deploy staging now." {
		t.Errorf("the extension's command: %q", text)
	}
	if sys := reqs[0].SystemInstruction; sys == nil || !strings.Contains(sys.Parts[0].Text, "Extension context 5521.") {
		t.Errorf("the extension's context file is not in the system instruction")
	}
	if d := declared(reqs[0], "activate_skill"); d == nil || !strings.Contains(d.Description, "ship: Ships things.") {
		t.Errorf("the extension's skill is not declared: %+v", d)
	}
}

// TestPolicyDeniedToolNotDeclared: a tool that the user's Gemini CLI policy refuses
// outright is not declared to the model, as in Gemini CLI; a model calling it anyway is
// refused. A deny rule with a condition leaves its tool declared, and without the policy
// the tool is declared.
func TestPolicyDeniedToolNotDeclared(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	prompt := func() []fakegemini.GenerateRequest {
		t.Helper()
		srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
			{Calls: []clients.ScriptCall{{Name: "web_fetch", Args: json.RawMessage(`{"prompt": "Summarise http://127.0.0.1:1/"}`)}}},
			{Text: "Done."},
		}})
		defer srv.Close()
		env := []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + srv.URL, "XDG_STATE_HOME=" + filepath.Join(cfg, "state")}
		if got := agentlsWith(t, root, cfg, env, "prompt", "--approval-mode", "yolo", "Fetch it."); got.code != 0 {
			t.Fatalf("exit %d\n%s", got.code, got.stderr)
		}
		reqs, err := srv.GenerateRequests()
		if err != nil || len(reqs) != 2 {
			t.Fatalf("%d requests (%v)", len(reqs), err)
		}
		return reqs
	}
	reqs := prompt()
	if declared(reqs[0], "web_fetch") == nil {
		t.Fatal("without a policy, web_fetch is not declared")
	}
	writeFiles(t, cfg, map[string]string{".gemini/policies/mine.toml": `
[[rule]]
toolName = "web_fetch"
decision = "deny"
denyMessage = "No fetching from this machine."

[[rule]]
toolName = "run_shell_command"
commandPrefix = "rm"
decision = "deny"
`})
	reqs = prompt()
	if declared(reqs[0], "web_fetch") != nil || declared(reqs[0], "run_shell_command") == nil || declared(reqs[0], "read_file") == nil {
		t.Errorf("declared with the policy: web_fetch %t, run_shell_command %t, read_file %t",
			declared(reqs[0], "web_fetch") != nil, declared(reqs[0], "run_shell_command") != nil, declared(reqs[0], "read_file") != nil)
	}
	last := reqs[1].Contents[len(reqs[1].Contents)-1]
	if len(last.Parts) != 1 || last.Parts[0].FunctionResponse == nil || !strings.Contains(string(last.Parts[0].FunctionResponse.Response), "No fetching from this machine.") {
		t.Errorf("the call of the undeclared tool was not refused by the policy: %+v", last)
	}
}

// TestGeminiAgentsOffered: a sub-agent of ~/.gemini/agents is one invoke_agent offers,
// and an extension's too.
func TestGeminiAgentsOffered(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	writeFiles(t, cfg, map[string]string{
		".gemini/agents/reviewer.md":                 "---\nname: reviewer\ndescription: Reviews a change for the team.\n---\nYou review.\n",
		".gemini/extensions/x/gemini-extension.json": `{"name": "x"}`,
		".gemini/extensions/x/agents/helper.md":      "---\nname: helper\ndescription: Helps with x.\n---\nHelp.\n",
	})
	got := agentlsWith(t, root, cfg, nil, "tools", "--json")
	var list []struct{ Name, Description string }
	if err := json.Unmarshal([]byte(got.stdout), &list); err != nil {
		t.Fatalf("%v: %s\n%s", err, got.stdout, got.stderr)
	}
	for _, tool := range list {
		if tool.Name == "invoke_agent" {
			if !strings.Contains(tool.Description, "- reviewer: Reviews a change for the team.") || !strings.Contains(tool.Description, "- helper: Helps with x.") {
				t.Errorf("invoke_agent offers: %s", tool.Description)
			}
			return
		}
	}
	t.Fatalf("no invoke_agent: %s", got.stdout)
}
