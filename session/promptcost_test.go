package session

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
)

// The budgets of what every model request repeats (issue 27), in bytes of the request's
// JSON as the fake Gemini server receives it. Growth past them is a decision: raise a
// budget in the same change that needs it, and say why. For scale, Gemini CLI 0.61's
// first request on the same workspace (`gemini -p hi --approval-mode yolo -m
// gemini-2.5-flash`, bench/agent.sh's harness) is 48,056 bytes, 23,531 of them tool
// declarations (BENCHMARKS.md, "Prompt cost").
const (
	// declarationsBudget bounds the tool declarations of a session.
	declarationsBudget = 15_000
	// firstRequestBudget bounds a session's first request: the declarations, the system
	// instruction (over a workspace of five files) and the prompt.
	firstRequestBudget = 24_000
)

// TestPromptCost measures the first request of a session on bench/agent's fixture
// project, the prompt "hi", as the fake Gemini server records it: it logs each tool
// declaration's size (go test -v -run TestPromptCost ./session) and fails when the
// declarations or the request pass their budgets. It also checks which tools are
// declared where: one declaration per tool (no alias), ask_user and the plan mode
// switches only where a person can be asked, each switch only in the mode it leaves,
// the background process tools only once a background command ran.
func TestPromptCost(t *testing.T) {
	var asker confirm.Asker = yesAsker{}
	tests := []struct {
		name  string
		mode  string
		asker confirm.Asker
		// background runs a background command in the session before the prompt.
		background bool
		want       []string // declared besides the tools every session has
	}{
		{name: "agentls prompt, yolo, nobody to ask", mode: "yolo"},
		{name: "agentls prompt, default mode, nobody to ask", mode: "default"},
		{name: "editor, default mode", mode: "default", asker: asker, want: []string{"ask_user", "enter_plan_mode"}},
		{name: "editor, plan mode", mode: "plan", asker: asker, want: []string{"ask_user", "exit_plan_mode"}},
		{name: "editor, a background command ran", mode: "yolo", asker: asker, background: true,
			want: []string{"ask_user", "enter_plan_mode", "list_background_processes", "read_background_output"}},
	}
	always := []string{"glob", "google_web_search", "grep_search", "invoke_agent", "list_directory", "notebook_edit",
		"read_file", "read_many_files", "replace", "run_shell_command", "save_memory", "think", "web_fetch",
		"write_file", "write_todos"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.CopyFS(root, os.DirFS(benchFixture)); err != nil {
				t.Fatal(err)
			}
			m := newModelWith(t, clients.Script{Turns: []clients.Turn{{Text: "Hello."}}}, fakegemini.Options{})
			h, err := NewHost(HostOptions{
				Toolbox:   toolbox.Options{Roots: []string{root}, ConfigDir: t.TempDir(), GeminiDir: t.TempDir(), Mode: tt.mode},
				Store:     NewStore(t.TempDir()),
				NewClient: func(context.Context, settings.Settings) (clients.Client, error) { return m, nil },
				Asker:     tt.asker,
				Logger:    discard(),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			l, err := h.Open(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			if tt.background {
				r := h.RunTool(context.Background(), "editor", tools.Request{CallID: "bg", Name: "run_shell_command",
					Args: json.RawMessage(`{"command": "sleep 30", "is_background": true, "delay_ms": 0}`)})
				if r.Status != tools.StatusSuccess {
					t.Fatalf("the background command: %+v", r)
				}
			}
			if _, err := l.Prompt(context.Background(), "hi", nil); err != nil {
				t.Fatal(err)
			}
			body := firstRequest(t, m.(geminiModel).srv)

			var req struct {
				SystemInstruction json.RawMessage
				Tools             json.RawMessage
				Contents          json.RawMessage
			}
			var decls struct {
				Tools []struct {
					FunctionDeclarations []json.RawMessage
				}
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(body, &decls); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range decls.Tools {
				for _, d := range tl.FunctionDeclarations {
					var named struct{ Name string }
					if err := json.Unmarshal(d, &named); err != nil {
						t.Fatal(err)
					}
					t.Logf("%-26s %6d bytes", named.Name, len(d))
					names = append(names, named.Name)
				}
			}
			t.Logf("%d declarations: %d bytes (budget %d); system instruction %d bytes; request %d bytes (budget %d)",
				len(names), len(req.Tools), declarationsBudget, len(req.SystemInstruction), len(body), firstRequestBudget)

			want := slices.Sorted(slices.Values(append(slices.Clone(always), tt.want...)))
			slices.Sort(names)
			if !slices.Equal(names, want) {
				t.Errorf("declared %v,\nwant      %v", names, want)
			}
			if len(req.Tools) > declarationsBudget {
				t.Errorf("the declarations take %d bytes, over their budget of %d", len(req.Tools), declarationsBudget)
			}
			if len(body) > firstRequestBudget {
				t.Errorf("the first request takes %d bytes, over its budget of %d", len(body), firstRequestBudget)
			}
		})
	}
}

// yesAsker allows every call once.
type yesAsker struct{}

func (yesAsker) Ask(context.Context, confirm.Request) (confirm.Answer, error) {
	return confirm.Answer{Outcome: confirm.ProceedOnce}, nil
}

// firstRequest returns the body of the first generate call the server received.
func firstRequest(t *testing.T, srv *fakegemini.Server) []byte {
	t.Helper()
	for _, r := range srv.Requests() {
		if r.Turn == 1 {
			return r.Body
		}
	}
	t.Fatalf("no request consumed the script's first turn: %d requests", len(srv.Requests()))
	return nil
}

// TestPromptCostNoRepeats: what the system instruction says of the tools, a tool's
// declaration does not say again. The phrases are those of the instruction's
// statements that a description used to repeat.
func TestPromptCostNoRepeats(t *testing.T) {
	hh := newHostHarness(t, "default", clients.Script{}, func(o *HostOptions) { o.Asker = yesAsker{} })
	l, err := hh.host.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range l.registry().Declarations() {
		text := strings.ToLower(d.Description + string(d.Parameters))
		for _, phrase := range []string{"untrusted_context", "rest of code", "either absolute or relative", "previously requested tools", "standard input"} {
			if strings.Contains(text, phrase) {
				t.Errorf("%s's declaration repeats the system instruction (%q)", d.Name, phrase)
			}
		}
	}
}
