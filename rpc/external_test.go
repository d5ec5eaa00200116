package rpc_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tools"
)

// discoveringWorkspace is a workspace whose settings run a discovery command that leaves
// a marker file.
func discoveringWorkspace(t *testing.T) string {
	t.Helper()
	root := workspaceDir(t, map[string]string{
		"discover.sh": "#!/bin/sh\ntouch discovery-ran\n" +
			`echo '[{"name": "project_lint", "description": "Lints.", "parameters": {"type": "object"}}]'` + "\n",
		".agentls/settings.json": `{"tools": {"discoveryCommand": "sh discover.sh", "callCommand": "sh call.sh"}}`,
	})
	return root
}

// TestTrustQuestion: in an untrusted workspace whose settings would run a command, the
// server asks once whether to trust the folder; only a trusting answer runs it.
func TestTrustQuestion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		answer     string
		wantKind   string // the entry written to trusted-folders.json, "" for none
		wantParent bool
	}{
		{answer: "Trust this folder", wantKind: "TRUST_FOLDER"},
		{answer: "Trust the parent folder", wantKind: "TRUST_PARENT", wantParent: true},
		{answer: "Not now"},
	}
	for _, tt := range tests {
		t.Run(tt.answer, func(t *testing.T) {
			ctx := testContext(t)
			root := discoveringWorkspace(t)
			cfg := t.TempDir()
			c := startEnv(t, root, []string{"XDG_CONFIG_HOME=" + cfg})
			asked := make(chan json.RawMessage, 4)
			c.Handle("window/showMessageRequest", func(_ context.Context, params json.RawMessage) (any, error) {
				asked <- params
				return map[string]any{"title": tt.answer}, nil
			})
			if _, err := c.Initialize(ctx, initParams(root, capsEditor, nil)); err != nil {
				t.Fatal(err)
			}
			var p struct {
				Message string
				Actions []struct{ Title string }
			}
			select {
			case raw := <-asked:
				json.Unmarshal(raw, &p)
			case <-ctx.Done():
				t.Fatal("the trust question was never asked")
			}
			var titles []string
			for _, a := range p.Actions {
				titles = append(titles, a.Title)
			}
			if strings.Join(titles, "|") != "Trust this folder|Trust the parent folder|Not now" ||
				!strings.Contains(p.Message, "tools.discoveryCommand") {
				t.Errorf("question %q with %q", p.Message, titles)
			}
			if tt.wantKind != "" {
				// Trusting re-reads the settings and runs the discovery command.
				if _, err := c.WaitFor(ctx, "window/showMessage", func(m lsptest.Message) bool {
					return strings.Contains(string(m.Params), "is trusted")
				}); err != nil {
					t.Fatal(err)
				}
			}
			var list struct {
				Tools []struct{ Name string }
			}
			// The discovery runs on its own goroutine after the answer: poll until it has
			// listed the tool, within the test's context (a command run on a loaded
			// machine may take a while).
			for {
				if err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "agentls.listTools", "arguments": []any{map[string]any{"details": true}}}, &list); err != nil {
					t.Fatal(err)
				}
				if tt.wantKind == "" || strings.Contains(toolNames(list.Tools), "project_lint") || ctx.Err() != nil {
					break
				}
				waitALittle(ctx)
			}
			listed := strings.Contains(toolNames(list.Tools), "project_lint")
			ran := fileExists(filepath.Join(root, "discovery-ran"))
			if trusted := tt.wantKind != ""; listed != trusted || ran != trusted {
				t.Errorf("answer %q: discovered tool listed %v, discovery ran %v", tt.answer, listed, ran)
			}
			data, _ := os.ReadFile(filepath.Join(cfg, "agentls", "trusted-folders.json"))
			want := root
			if tt.wantParent {
				want = filepath.Dir(root)
			}
			if tt.wantKind != "" && (!strings.Contains(string(data), tt.wantKind) || !strings.Contains(string(data), want)) {
				t.Errorf("trusted-folders.json = %s, want %s for %s", data, tt.wantKind, want)
			}
			if tt.wantKind == "" && len(data) > 0 {
				t.Errorf("not now wrote the trust file: %s", data)
			}
			// Asked once per connection, also after the settings are read again.
			c.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agentls": map[string]any{"excludeTools": []string{"glob"}}}})
			var tools []struct{ Name string }
			c.Call(ctx, "agentls/tools", nil, &tools)
			if n := len(c.Received("window/showMessageRequest")); n != 1 {
				t.Errorf("asked %d times", n)
			}
		})
	}
}

func toolNames(ts []struct{ Name string }) string {
	var names []string
	for _, t := range ts {
		names = append(names, t.Name)
	}
	return strings.Join(names, " ")
}

// waitALittle pauses a polling loop.
func waitALittle(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Millisecond):
	}
}

// TestMCPInTheEditor: an MCP server of the user's settings (npm server-everything over
// stdio) connects after initialized, rich clients hear its status, its calls are
// confirmed as type mcp, and "always for this server" covers its other tools.
func TestMCPInTheEditor(t *testing.T) {
	t.Parallel()
	entry := testutil.NPMServer(t, "server-everything")
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	cfg := t.TempDir()
	settings := `{"mcpServers": {"everything": {"command": "node", "args": [` + strconvQuote(entry) + `, "stdio"]}}}`
	if err := os.MkdirAll(filepath.Join(cfg, "agentls"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "agentls", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startEnv(t, root, []string{"XDG_CONFIG_HOME=" + cfg})
	asked := make(chan json.RawMessage, 8)
	c.Handle("agentls/confirm", func(_ context.Context, params json.RawMessage) (any, error) {
		asked <- params
		return map[string]any{"outcome": "proceed_always_server"}, nil
	})
	if _, err := c.Initialize(ctx, initParams(root, capsRich, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, "agentls/update", func(m lsptest.Message) bool {
		return strings.Contains(string(m.Params), `"mcp_status"`) && strings.Contains(string(m.Params), `"connected"`) &&
			!strings.Contains(string(m.Params), `"tools":0`)
	}); err != nil {
		t.Fatalf("no connected status: %v", err)
	}
	var statuses []struct{ Name, State string }
	if err := c.Call(ctx, "workspace/executeCommand", map[string]any{"command": "agentls.mcpStatus"}, &statuses); err != nil ||
		len(statuses) != 1 || statuses[0].Name != "everything" || statuses[0].State != "connected" {
		t.Fatalf("mcpStatus = %+v, %v", statuses, err)
	}

	res := runTool(ctx, t, c, "everything__echo", map[string]any{"message": "hello"})
	// The model gets the server's text marked as untrusted context; people see it as is.
	if res.Status != "success" || res.Display != "Echo: hello" || res.Output != tools.MarkUntrusted("Echo: hello") {
		t.Fatalf("echo: %+v", res)
	}
	res = runTool(ctx, t, c, "everything__get-sum", map[string]any{"a": 2, "b": 3})
	if res.Status != "success" || !strings.Contains(res.Output, "5") {
		t.Fatalf("get-sum: %+v", res)
	}
	if len(asked) != 1 {
		t.Fatalf("asked %d times, want once (then always for the server)", len(asked))
	}
	first := <-asked
	var d struct{ Type, Server, Tool string }
	json.Unmarshal(first, &d)
	if d.Type != "mcp" || d.Server != "everything" || d.Tool != "echo" {
		t.Errorf("confirmation %s", first)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestTrustRevoke: agentls.trust "revoke" removes the entries that make the workspace
// trusted (its own, and a parent's that covers it), and none that does not: a parent's
// entry that a more specific DO_NOT_TRUST overrides for the workspace still trusts the
// user's other folders, and stays.
func TestTrustRevoke(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	projects := filepath.Join(base, "projects")
	root, other := filepath.Join(projects, "app"), filepath.Join(base, "other")
	for _, d := range []string{root, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name        string
		entries     map[string]string
		wantTrusted bool
		wantKept    map[string]string
	}{
		{
			name:     "trusted by its own entry and a parent's",
			entries:  map[string]string{root: "TRUST_FOLDER", base: "TRUST_PARENT", other: "TRUST_FOLDER"},
			wantKept: map[string]string{other: "TRUST_FOLDER"},
		},
		{
			name:     "already distrusted under a trusted parent",
			entries:  map[string]string{base: "TRUST_PARENT", projects: "DO_NOT_TRUST"},
			wantKept: map[string]string{base: "TRUST_PARENT", projects: "DO_NOT_TRUST"},
		},
		{
			name:     "trusted by its own entry under a distrusted folder under a trusted parent",
			entries:  map[string]string{root: "TRUST_FOLDER", base: "TRUST_PARENT", projects: "DO_NOT_TRUST"},
			wantKept: map[string]string{base: "TRUST_PARENT", projects: "DO_NOT_TRUST"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			cfg := t.TempDir()
			data, _ := json.Marshal(tt.entries)
			file := filepath.Join(cfg, "trusted-folders.json")
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			c := lsptest.Serve(t, func(in io.Reader, out io.Writer) int {
				return rpc.New(rpc.Options{ConfigDir: cfg, StateDir: t.TempDir()}).Serve(context.Background(), in, out)
			})
			if _, err := c.Initialize(ctx, initParams(root, capsEditor, nil)); err != nil {
				t.Fatal(err)
			}
			var res struct {
				Trusted bool
				Message string
			}
			if err := command(ctx, c, "agentls.trust", map[string]any{"scope": "revoke"}, &res); err != nil {
				t.Fatal(err)
			}
			if res.Trusted != tt.wantTrusted {
				t.Errorf("result %+v, want trusted %v", res, tt.wantTrusted)
			}
			var kept map[string]string
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &kept); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(kept, tt.wantKept) {
				t.Errorf("entries after revoke %v, want %v", kept, tt.wantKept)
			}
		})
	}
}

// TestRunPromptContext: agentls.runPrompt sends the MCP prompt its server renders (npm
// server-everything over stdio) to the model, and the editor's context (the files a
// command line mentions) after it, separated by a blank line; without context the
// rendered prompt goes alone.
func TestRunPromptContext(t *testing.T) {
	t.Parallel()
	entry := testutil.NPMServer(t, "server-everything")
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	cfg := t.TempDir()
	settings := `{"mcpServers": {"everything": {"command": "node", "args": [` + strconvQuote(entry) + `, "stdio"]}}}`
	if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, root, "", clients.Turn{Text: "Sunny."}, clients.Turn{Text: "Rainy."})
	c := a.serve(capsRich, nil, rpc.Options{ConfigDir: cfg})
	if _, err := c.WaitFor(ctx, "agentls/update", func(m lsptest.Message) bool {
		return strings.Contains(string(m.Params), `"mcp_status"`) && strings.Contains(string(m.Params), `"connected"`)
	}); err != nil {
		t.Fatalf("no connected status: %v", err)
	}
	const attached = "Contents of notes.txt:\n```text\nbring an umbrella\n```"
	tests := []struct {
		name, context, want string
	}{
		{"with context", "\n\n" + attached, "What's weather in Lisbon?\n\n" + attached},
		{"without", "", "What's weather in Lisbon?"},
	}
	for i, tt := range tests {
		var res promptResult
		arg := map[string]any{"server": "everything", "name": "args-prompt", "arguments": map[string]string{"city": "Lisbon"}}
		if tt.context != "" {
			arg["context"] = tt.context
		}
		if err := command(ctx, c, "agentls.runPrompt", arg, &res); err != nil || res.StopReason != "end_turn" {
			t.Fatalf("%s: runPrompt = %+v, %v", tt.name, res, err)
		}
		reqs, err := a.fake.GenerateRequests()
		if err != nil || len(reqs) != i+1 {
			t.Fatalf("%s: %d model calls (%v), want %d", tt.name, len(reqs), err, i+1)
		}
		contents := reqs[i].Contents
		var text strings.Builder
		for _, p := range contents[len(contents)-1].Parts {
			text.WriteString(p.Text)
		}
		if got := text.String(); got != tt.want {
			t.Errorf("%s: the model got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCustomCommandListed: agentls.listPrompts lists a custom command of the user's
// configuration folder (Gemini CLI's .toml format) with its slash command, and both
// agentls.prompt with that command line and agentls.runPrompt with its name (no
// server) send the model the expanded prompt.
func TestCustomCommandListed(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, nil)
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "commands", "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	toml := "description = \"Writes a commit message\"\nprompt = \"Commit message for {{args}}.\"\n"
	if err := os.WriteFile(filepath.Join(cfg, "commands", "git", "commit.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, root, "", clients.Turn{Text: "One."}, clients.Turn{Text: "Two."})
	c := a.serve(capsRich, nil, rpc.Options{ConfigDir: cfg})
	var list []map[string]any
	if err := command(ctx, c, "agentls.listPrompts", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(p map[string]any) bool { return p["command"] == "/git:commit" })
	if i < 0 || list[i]["name"] != "git:commit" || list[i]["server"] != "" || list[i]["description"] != "Writes a commit message" {
		t.Fatalf("listPrompts: %v", list)
	}
	calls := []struct {
		cmd string
		arg map[string]any
	}{
		{"agentls.prompt", map[string]any{"prompt": "/git:commit the fix"}},
		{"agentls.runPrompt", map[string]any{"server": "", "name": "git:commit", "arguments": map[string]string{"args": "the fix"}}},
	}
	for n, call := range calls {
		var res promptResult
		if err := command(ctx, c, call.cmd, call.arg, &res); err != nil || res.StopReason != "end_turn" {
			t.Fatalf("%s: %+v, %v", call.cmd, res, err)
		}
		reqs, err := a.fake.GenerateRequests()
		if err != nil || len(reqs) != n+1 {
			t.Fatalf("%d model calls (%v)", len(reqs), err)
		}
		contents := reqs[n].Contents
		if got := contents[len(contents)-1].Parts[0].Text; got != "Commit message for the fix." {
			t.Errorf("%s: the model got %q", call.cmd, got)
		}
	}
}
