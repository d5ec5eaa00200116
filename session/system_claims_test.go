package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/builtin"
	"github.com/agentls/agentls/tools/web"
)

// claimEnv is what the checks of TestBasePromptClaims run in: the built-in tools over a
// workspace, and a directory outside it.
type claimEnv struct {
	root, outside string
	set           *builtin.Set
}

// call runs the built-in tool name with args, as a scheduler does, minus consent.
func (e *claimEnv) call(t *testing.T, name string, args map[string]any) (*tools.Result, error) {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range e.set.Tools() {
		if tl.Info().Name == name {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return testutil.Call(ctx, t, tl, string(b), io.Discard)
		}
	}
	t.Fatalf("no built-in tool %s", name)
	return nil, nil
}

func (e *claimEnv) mustCall(t *testing.T, name string, args map[string]any) *tools.Result {
	t.Helper()
	res, err := e.call(t, name, args)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

func (e *claimEnv) mustFail(t *testing.T, want tools.ErrorType, name string, args map[string]any) {
	t.Helper()
	res, err := e.call(t, name, args)
	if got := testutil.ErrorType(err); got != want {
		t.Errorf("%s %v: error %v (type %q, result %+v), want type %q", name, args, err, got, res, want)
	}
}

// fakeMCPTool is a tool from an MCP server, as the scheduler sees one.
type fakeMCPTool struct{}

func (fakeMCPTool) Info() tools.Info {
	return tools.Info{Name: "srv__echo", Kind: tools.KindOther, Source: tools.SourceMCP, Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (fakeMCPTool) Build(json.RawMessage) (tools.Invocation, error) { return fakeMCPCall{}, nil }

type fakeMCPCall struct{ tools.NoCapabilities }

func (fakeMCPCall) Describe() string                                       { return "echo" }
func (fakeMCPCall) Locations() []tools.Location                            { return nil }
func (fakeMCPCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }
func (fakeMCPCall) Execute(context.Context, io.Writer) (*tools.Result, error) {
	return &tools.Result{Output: "the server's answer"}, nil
}

// decliner answers every question with "no".
type decliner struct{}

func (decliner) Ask(context.Context, confirm.Request) (confirm.Answer, error) {
	return confirm.Answer{Outcome: confirm.Cancel}, nil
}

// TestBasePromptClaims keeps what the system instruction tells the model about the tools
// true: each statement is checked against the tools themselves, every tool it names
// must exist, and a line of it that speaks of what tools do must be one of the checked
// statements.
func TestBasePromptClaims(t *testing.T) {
	t.Parallel()
	ws, root := testutil.Workspace(t, map[string]string{
		"dir/a.txt": "alpha\n",
		"kept.go":   "package p\n\n// rest of code ...\nfunc f() {}\n",
	})
	outside := t.TempDir()
	testutil.WriteFiles(t, outside, map[string]string{"secret.txt": "secret\n"})
	set := builtin.New(builtin.Options{Workspace: ws, ConfigDir: t.TempDir(), Web: web.Options{AllowPrivate: true}})
	t.Cleanup(func() { set.Close() })
	env := &claimEnv{root: root, outside: outside, set: set}

	claims := []struct {
		statement string
		check     func(t *testing.T)
	}{
		{
			statement: "File tools take absolute paths or paths relative to the first workspace folder.",
			check: func(t *testing.T) {
				for _, p := range []string{"dir/a.txt", filepath.Join(root, "dir/a.txt")} {
					if res := env.mustCall(t, "read_file", map[string]any{"file_path": p}); !strings.Contains(res.Output, "alpha") {
						t.Errorf("read_file %s: %q", p, res.Output)
					}
				}
				env.mustCall(t, "write_file", map[string]any{"file_path": "dir/new.txt", "content": "new\n"})
				env.mustCall(t, "replace", map[string]any{"file_path": "dir/new.txt", "old_string": "new", "new_string": "newer"})
				if res := env.mustCall(t, "read_file", map[string]any{"file_path": filepath.Join(root, "dir/new.txt")}); !strings.Contains(res.Output, "newer") {
					t.Errorf("a relative write did not land in the first workspace folder: %q", res.Output)
				}
				env.mustCall(t, "list_directory", map[string]any{"dir_path": "dir"})
				env.mustCall(t, "glob", map[string]any{"pattern": "*.txt", "dir_path": "dir"})
				env.mustCall(t, "grep_search", map[string]any{"pattern": "alpha", "dir_path": "dir"})
			},
		},
		{
			statement: "Paths outside the workspace folders are refused.",
			check: func(t *testing.T) {
				secret := filepath.Join(outside, "secret.txt")
				env.mustFail(t, tools.ErrPathNotInWorkspace, "read_file", map[string]any{"file_path": secret})
				env.mustFail(t, tools.ErrPathNotInWorkspace, "read_file", map[string]any{"file_path": "../" + filepath.Base(outside) + "/secret.txt"})
				env.mustFail(t, tools.ErrPathNotInWorkspace, "write_file", map[string]any{"file_path": secret, "content": "x"})
				env.mustFail(t, tools.ErrPathNotInWorkspace, "replace", map[string]any{"file_path": secret, "old_string": "secret", "new_string": "x"})
				env.mustFail(t, tools.ErrPathNotInWorkspace, "list_directory", map[string]any{"dir_path": outside})
				env.mustFail(t, tools.ErrPathNotInWorkspace, "grep_search", map[string]any{"pattern": "secret", "dir_path": outside})
			},
		},
		{
			statement: `write_file and replace refuse content with an omission placeholder such as "// rest of code ..." that the file does not already have.`,
			check: func(t *testing.T) {
				env.mustFail(t, tools.ErrInvalidParams, "write_file", map[string]any{"file_path": "dir/a.txt", "content": "alpha\n// rest of code ...\n"})
				env.mustFail(t, tools.ErrInvalidParams, "replace", map[string]any{"file_path": "dir/a.txt", "old_string": "alpha", "new_string": "// rest of code ..."})
				// The file's own line is kept.
				env.mustCall(t, "replace", map[string]any{"file_path": "kept.go", "old_string": "func f() {}", "new_string": "func f() { return }"})
			},
		},
		{
			statement: "The results of run_shell_command, the pages of web_fetch and the results of MCP tools come wrapped in <untrusted_context> tags",
			check: func(t *testing.T) {
				wrapped := func(what, out string) {
					t.Helper()
					if !strings.Contains(out, "<untrusted_context>\n") || !strings.HasSuffix(strings.TrimSpace(out), "</untrusted_context>") {
						t.Errorf("%s is not wrapped in <untrusted_context>: %q", what, out)
					}
				}
				wrapped("run_shell_command", env.mustCall(t, "run_shell_command", map[string]any{"command": "echo hi"}).Output)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/plain")
					fmt.Fprint(w, "page text")
				}))
				defer srv.Close()
				wrapped("web_fetch", env.mustCall(t, "web_fetch", map[string]any{"prompt": "read " + srv.URL + "/p"}).Output)
				reg := tools.NewRegistry(nil, tools.Filter{})
				reg.Register(fakeMCPTool{})
				policy, err := confirm.NewPolicy(confirm.ModeYolo, nil, ws.Roots)
				if err != nil {
					t.Fatal(err)
				}
				sched := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, OutputDir: t.TempDir()})
				r := sched.RunOne(context.Background(), tools.Request{Name: "srv__echo", Args: json.RawMessage(`{}`)})
				wrapped("an MCP tool's result", r.Output)
			},
		},
		{
			statement: "its standard input is empty",
			check: func(t *testing.T) {
				// cat reads its standard input to the end: at once, and nothing.
				res := env.mustCall(t, "run_shell_command", map[string]any{"command": "cat; echo done"})
				if !strings.Contains(res.Output, "\nOutput: done\n") {
					t.Errorf("cat read something: %q", res.Output)
				}
			},
		},
		{
			statement: "A tool call may be declined by the user",
			check: func(t *testing.T) {
				reg := tools.NewRegistry(nil, tools.Filter{})
				for _, tl := range set.Tools() {
					reg.Register(tl)
				}
				policy, err := confirm.NewPolicy(confirm.ModeDefault, nil, ws.Roots)
				if err != nil {
					t.Fatal(err)
				}
				sched := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: decliner{}, OutputDir: t.TempDir()})
				args, _ := json.Marshal(map[string]string{"file_path": "declined.txt", "content": "x"})
				r := sched.RunOne(context.Background(), tools.Request{Name: "write_file", Args: args})
				if r.Status == tools.StatusSuccess {
					t.Errorf("a declined call ran: %+v", r)
				}
				if _, err := env.call(t, "read_file", map[string]any{"file_path": "declined.txt"}); testutil.ErrorType(err) != tools.ErrFileNotFound {
					t.Errorf("a declined write_file wrote: %v", err)
				}
			},
		},
	}
	claims = append(claims, struct {
		statement string
		check     func(t *testing.T)
	}{
		statement: "The tool calls of one turn run in parallel; a call that sets wait_for_previous to true starts only after the earlier calls of the turn have finished.",
		check: func(t *testing.T) {
			reg := tools.NewRegistry(nil, tools.Filter{})
			for _, tl := range set.Tools() {
				reg.Register(tl)
			}
			policy, err := confirm.NewPolicy(confirm.ModeYolo, nil, ws.Roots)
			if err != nil {
				t.Fatal(err)
			}
			sched := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, OutputDir: t.TempDir()})
			// The read depends on the write: with wait_for_previous it sees it.
			res := sched.Run(context.Background(), []tools.Request{
				{Name: "write_file", Args: json.RawMessage(`{"file_path":"seq.txt","content":"written first\n"}`)},
				{Name: "read_file", Args: json.RawMessage(`{"file_path":"seq.txt","wait_for_previous":true}`)},
			})
			if res[0].Status != tools.StatusSuccess || res[1].Status != tools.StatusSuccess || !strings.Contains(res[1].Output, "written first") {
				t.Errorf("the read that waited did not see the write: %+v", res)
			}
			// Every declaration offers the parameter.
			for _, d := range reg.Declarations() {
				if !strings.Contains(string(d.Parameters), `"wait_for_previous"`) {
					t.Errorf("%s's declaration has no wait_for_previous", d.Name)
				}
			}
		},
	})
	for _, c := range claims {
		if !strings.Contains(basePrompt, c.statement) {
			t.Errorf("the system instruction no longer says %q: update this test with it", c.statement)
			continue
		}
		t.Run(c.statement, c.check)
	}

	// Every tool the instruction names is a built-in tool of that name.
	var names []string
	for _, tl := range set.Tools() {
		names = append(names, tl.Info().Name)
	}
	// (The <untrusted_context> tag is a tag, and wait_for_previous a parameter of every
	// tool, not tools.)
	named := regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`).FindAllString(strings.NewReplacer("<untrusted_context>", "", "wait_for_previous", "").Replace(basePrompt), -1)
	if len(named) == 0 {
		t.Fatal("the system instruction names no tool")
	}
	for _, n := range named {
		if !slices.Contains(names, n) {
			t.Errorf("the system instruction names %s, which is no built-in tool", n)
		}
	}

	// A line that names a tool or says what tools refuse, wrap or take must hold a
	// checked statement.
	speaks := regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b|(?i)\b(refuse[sd]?|paths?|untrusted|declined|standard input|cannot be)\b`)
	for _, line := range strings.Split(basePrompt, "\n") {
		if !speaks.MatchString(line) {
			continue
		}
		covered := false
		for _, c := range claims {
			covered = covered || strings.Contains(line, c.statement)
		}
		// The advice to search and read first names tools without a claim about them
		// beyond their existence, checked above.
		if !covered && !strings.HasPrefix(line, "- Understand before you act.") {
			t.Errorf("this line of the system instruction speaks of the tools without a check in this test:\n%s", line)
		}
	}
}
