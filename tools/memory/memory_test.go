package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

func TestAddFact(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"empty file", "", "## Agent memories\n- F\n"},
		{"file without the section", "# Notes\n\nBe brief.\n",
			"# Notes\n\nBe brief.\n\n## Agent memories\n- F\n"},
		{"file without the section nor final newline", "# Notes",
			"# Notes\n\n## Agent memories\n- F\n"},
		{"file ending in a blank line", "# Notes\n\n", "# Notes\n\n## Agent memories\n- F\n"},
		{"section at the end", "# Notes\n\n## Agent memories\n- A\n",
			"# Notes\n\n## Agent memories\n- A\n- F\n"},
		{"section at the end without final newline", "## Agent memories\n- A",
			"## Agent memories\n- A\n- F\n"},
		{"empty section", "## Agent memories\n", "## Agent memories\n- F\n"},
		{"header without newline", "## Agent memories", "## Agent memories\n- F\n"},
		{"sections follow", "## Agent memories\n- A\n\n## Other\n- x\n",
			"## Agent memories\n- A\n- F\n\n## Other\n- x\n"},
		{"top-level heading follows", "## Agent memories\n- A\n# Next\n",
			"## Agent memories\n- A\n- F\n# Next\n"},
		{"subsection belongs to the section", "## Agent memories\n- A\n### Sub\n- B\n\n## Other\n",
			"## Agent memories\n- A\n### Sub\n- B\n- F\n\n## Other\n"},
		{"empty section before another", "## Agent memories\n\n## Other\n",
			"## Agent memories\n- F\n\n## Other\n"},
		{"header mentioned in text is not the section", "See ## Agent memories below.\n",
			"See ## Agent memories below.\n\n## Agent memories\n- F\n"},
		{"Gemini CLI's section", "# Notes\n\n## Gemini Added Memories\n- A\n\n## Other\n",
			"# Notes\n\n## Gemini Added Memories\n- A\n- F\n\n## Other\n"},
		{"the first of both sections", "## Gemini Added Memories\n- A\n## Agent memories\n- B\n",
			"## Gemini Added Memories\n- A\n- F\n## Agent memories\n- B\n"},
	}
	for _, tt := range tests {
		if got := addFact(tt.content, "F"); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// setup returns save_memory over a fresh workspace holding files, the workspace, its
// root, and the configuration directory (not created yet) where user facts go.
func setup(t *testing.T, files map[string]string) (tools.Tool, *workspace.Workspace, string, string) {
	t.Helper()
	ws, root := testutil.Workspace(t, files)
	configDir := filepath.Join(t.TempDir(), "config", "agentls")
	return New(ws, configDir), ws, root, configDir
}

// factArgs returns the arguments of a call saving fact in scope ("" for the default).
func factArgs(t testing.TB, fact, scope string) string {
	t.Helper()
	m := map[string]string{"fact": fact}
	if scope != "" {
		m["scope"] = scope
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSaveMemoryUser(t *testing.T) {
	tool, _, root, dir := setup(t, map[string]string{"main.go": "package main\n"})
	before := testutil.Snapshot(t, root)
	ctx := context.Background()
	path := filepath.Join(dir, FileName)

	res, err := testutil.Call(ctx, t, tool, factArgs(t, "The user prefers tabs.", ScopeUser), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary != `Saved memory: "The user prefers tabs."` {
		t.Errorf("Summary = %q", res.Summary)
	}
	if !strings.Contains(res.Output, "The user prefers tabs.") || !strings.Contains(res.Output, "the user's memory file") {
		t.Errorf("Output = %q", res.Output)
	}
	if res.Diff == nil || res.Diff.Path != path || res.Diff.OriginalContent != nil || !strings.Contains(res.Diff.Diff, "+- The user prefers tabs.") {
		t.Errorf("Diff = %+v", res.Diff)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new memory file mode %v, want 0600", fi.Mode().Perm())
	}

	// Facts are sanitised to one bullet line each.
	for _, fact := range []string{
		"Line one\nline two\r\nline three",
		"  - already a bullet  ",
		"-5 °C counts as cold",
	} {
		if _, err := testutil.Call(ctx, t, tool, factArgs(t, fact, ScopeUser), nil); err != nil {
			t.Fatalf("%q: %v", fact, err)
		}
	}
	want := "## Agent memories\n" +
		"- The user prefers tabs.\n" +
		"- Line one line two line three\n" +
		"- already a bullet\n" +
		"- -5 °C counts as cold\n"
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("AGENTS.md:\n%s\nwant:\n%s", got, want)
	}

	// A section the user added after ours stays after it.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n## My own notes\nKeep this.\n")
	f.Close()
	res, err = testutil.Call(ctx, t, tool, factArgs(t, "Last one.", ScopeUser), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !strings.HasSuffix(string(got), "- -5 °C counts as cold\n- Last one.\n\n## My own notes\nKeep this.\n") {
		t.Errorf("AGENTS.md:\n%s", got)
	}
	if res.Diff.OriginalContent == nil {
		t.Error("Diff of an existing file has no original content")
	}
	if after := testutil.Snapshot(t, root); !reflect.DeepEqual(after, before) {
		t.Errorf("user facts changed the workspace: %v", after)
	}
}

func TestSaveMemoryProject(t *testing.T) {
	tool, _, root, dir := setup(t, map[string]string{"main.go": "package main\n"})
	ctx := context.Background()
	path := filepath.Join(root, FileName)

	res, err := testutil.Call(ctx, t, tool, factArgs(t, "Tests run with go test -race.", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Diff == nil || res.Diff.Path != path || res.Diff.OriginalContent != nil ||
		!strings.Contains(res.Diff.Diff, "+- Tests run with go test -race.") || !strings.Contains(res.Diff.Diff, "+++ b/AGENTS.md") {
		t.Errorf("Diff = %+v", res.Diff)
	}
	if !strings.Contains(res.Output, "the project's memory file, AGENTS.md") {
		t.Errorf("Output = %q", res.Output)
	}
	if _, err := testutil.Call(ctx, t, tool, factArgs(t, "Second.", ScopeProject), nil); err != nil {
		t.Fatal(err)
	}
	want := "## Agent memories\n- Tests run with go test -race.\n- Second.\n"
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("AGENTS.md:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("project facts touched the configuration directory: %v", err)
	}
}

// TestProjectFileChoice checks which file of the workspace root a project fact goes to:
// the one sessions read first among those that exist.
func TestProjectFileChoice(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  map[string]string // the root's memory files afterwards
	}{
		{"none", nil, map[string]string{"AGENTS.md": "## Agent memories\n- F\n"}},
		{"AGENTS.md", map[string]string{"AGENTS.md": "# Rules\n"},
			map[string]string{"AGENTS.md": "# Rules\n\n## Agent memories\n- F\n"}},
		{"GEMINI.md with Gemini CLI's section", map[string]string{"GEMINI.md": "## Gemini Added Memories\n- A\n"},
			map[string]string{"GEMINI.md": "## Gemini Added Memories\n- A\n- F\n"}},
		{"both", map[string]string{"AGENTS.md": "a\n", "GEMINI.md": "g\n"},
			map[string]string{"AGENTS.md": "a\n\n## Agent memories\n- F\n", "GEMINI.md": "g\n"}},
		{"only in a subdirectory", map[string]string{"sub/AGENTS.md": "s\n"},
			map[string]string{"AGENTS.md": "## Agent memories\n- F\n", "sub/AGENTS.md": "s\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, _, root, _ := setup(t, tt.files)
			if _, err := testutil.Call(context.Background(), t, tool, factArgs(t, "F", ""), nil); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, name := range []string{"AGENTS.md", "GEMINI.md", "sub/AGENTS.md"} {
				if b, err := os.ReadFile(filepath.Join(root, name)); err == nil {
					got[name] = string(b)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("files = %q, want %q", got, tt.want)
			}
		})
	}
}

// recordingWriter is a workspace writer that records changes and writes nothing, as an
// editor's would until the user saves.
type recordingWriter struct {
	mu      sync.Mutex
	changes []workspace.Change
}

func (w *recordingWriter) Write(_ context.Context, c workspace.Change) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.changes = append(w.changes, c)
	return nil
}

// TestProjectThroughWorkspace checks that a project fact is committed through the
// workspace's writer, to the text the editor holds.
func TestProjectThroughWorkspace(t *testing.T) {
	tool, ws, root, _ := setup(t, map[string]string{"AGENTS.md": "# On disk\n"})
	path := filepath.Join(root, FileName)
	ws.Open(path, 3, "# In the editor\n")
	w := &recordingWriter{}
	ws.SetWriter(w)
	if _, err := testutil.Call(context.Background(), t, tool, factArgs(t, "F", ""), nil); err != nil {
		t.Fatal(err)
	}
	if len(w.changes) != 1 {
		t.Fatalf("%d changes committed, want 1", len(w.changes))
	}
	c := w.changes[0]
	if c.Path != path || c.Old == nil || c.Old.Text != "# In the editor\n" || c.New != "# In the editor\n\n## Agent memories\n- F\n" {
		t.Errorf("change = %+v (old %+v)", c, c.Old)
	}
	if got, _ := os.ReadFile(path); string(got) != "# On disk\n" {
		t.Errorf("the file was written behind the workspace's writer: %q", got)
	}
}

// TestProjectConfined checks that a project memory file that leads out of the
// workspace is refused, and nothing is written there.
func TestProjectConfined(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(outside, []byte("export X=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tool, _, root, _ := setup(t, nil)
	if err := os.Symlink(outside, filepath.Join(root, FileName)); err != nil {
		t.Fatal(err)
	}
	inv, err := testutil.Build(t, tool, factArgs(t, "F", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Confirmation(context.Background()); testutil.ErrorType(err) != tools.ErrPathNotInWorkspace {
		t.Errorf("Confirmation: %v (type %q), want %s", err, testutil.ErrorType(err), tools.ErrPathNotInWorkspace)
	}
	if _, err := inv.Execute(context.Background(), nil); testutil.ErrorType(err) != tools.ErrPathNotInWorkspace {
		t.Errorf("Execute: %v (type %q), want %s", err, testutil.ErrorType(err), tools.ErrPathNotInWorkspace)
	}
	if got, _ := os.ReadFile(outside); string(got) != "export X=1\n" {
		t.Errorf("the file outside the workspace was written: %q", got)
	}
}

func TestSaveMemoryKeepsFormat(t *testing.T) {
	tool, _, _, dir := setup(t, nil)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte("\xEF\xBB\xBF# Mine\r\n\r\n## Agent memories\r\n- A\r\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := testutil.Call(context.Background(), t, tool, factArgs(t, "B", ScopeUser), nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "\xEF\xBB\xBF# Mine\r\n\r\n## Agent memories\r\n- A\r\n- B\r\n" {
		t.Errorf("AGENTS.md = %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
}

func TestSaveMemoryBadInput(t *testing.T) {
	tool, _, root, dir := setup(t, nil)
	for _, args := range []string{
		`{}`,
		`{"fact": ""}`,
		`{"fact": "   \n\t "}`,
		`{"fact": "-"}`,
		`{"fact": 42}`,
		`{"fact": "x", "scope": "global"}`,
		`{"fact": "x", "scope": 1}`,
		`[]`,
	} {
		_, err := testutil.Call(context.Background(), t, tool, args, nil)
		if got := testutil.ErrorType(err); got != tools.ErrInvalidParams {
			t.Errorf("%s: error %v (type %q), want %s", args, err, got, tools.ErrInvalidParams)
		}
	}
	// Build checks the scope itself, for callers that skip the schema.
	if _, err := tool.Build(json.RawMessage(`{"fact": "x", "scope": "global"}`)); testutil.ErrorType(err) != tools.ErrInvalidParams {
		t.Errorf("Build with scope global: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("refused calls wrote %d files in the workspace", len(entries))
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused calls made the configuration directory: %v", err)
	}
}

func TestSaveMemoryErrors(t *testing.T) {
	ctx := context.Background()
	for _, scope := range []string{ScopeProject, ScopeUser} {
		t.Run(scope, func(t *testing.T) {
			tool, _, root, dir := setup(t, nil)
			if scope == ScopeUser {
				root = dir
			}
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			// The memory file is a directory.
			path := filepath.Join(root, FileName)
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
			_, err := testutil.Call(ctx, t, tool, factArgs(t, "x", scope), nil)
			if got := testutil.ErrorType(err); got != tools.ErrTargetIsDirectory {
				t.Errorf("memory file is a directory: %v (type %q)", err, got)
			}
			// A binary memory file is not overwritten.
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("\x00\x01binary"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = testutil.Call(ctx, t, tool, factArgs(t, "x", scope), nil)
			if got := testutil.ErrorType(err); got != tools.ErrReadContentFailure {
				t.Errorf("binary memory file: %v (type %q)", err, got)
			}
			if got, _ := os.ReadFile(path); string(got) != "\x00\x01binary" {
				t.Errorf("binary memory file overwritten: %q", got)
			}
		})
	}

	// No configuration directory, no workspace.
	for _, tt := range []struct {
		tool  tools.Tool
		scope string
	}{
		{New(nil, t.TempDir()), ScopeProject},
		{New(nil, ""), ScopeUser},
	} {
		_, err := testutil.Call(ctx, t, tt.tool, factArgs(t, "x", tt.scope), nil)
		if got := testutil.ErrorType(err); got != tools.ErrExecutionFailed {
			t.Errorf("scope %s with nowhere to save: %v (type %q)", tt.scope, err, got)
		}
	}
}

func TestSaveMemoryConcurrent(t *testing.T) {
	for _, scope := range []string{ScopeProject, ScopeUser} {
		t.Run(scope, func(t *testing.T) {
			tool, _, root, dir := setup(t, nil)
			if scope == ScopeUser {
				root = dir
			}
			const n = 40
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Go(func() {
					if _, err := testutil.Call(context.Background(), t, tool, factArgs(t, fmt.Sprintf("fact %02d", i), scope), nil); err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			got, err := os.ReadFile(filepath.Join(root, FileName))
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if !strings.Contains(string(got), fmt.Sprintf("- fact %02d\n", i)) {
					t.Errorf("fact %02d lost", i)
				}
			}
			if c := strings.Count(string(got), SectionHeader); c != 1 {
				t.Errorf("%d section headers", c)
			}
			if leftovers, _ := filepath.Glob(filepath.Join(root, ".*agentls-*")); len(leftovers) != 0 {
				t.Errorf("temporary files left: %q", leftovers)
			}
		})
	}
}

func TestInvocation(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	ws, root := testutil.Workspace(t, nil)
	tool := New(ws, filepath.Join(home, ".config", "agentls"))
	info := tool.Info()
	if info.Name != "save_memory" || info.Kind != tools.KindOther || info.Kind.ReadOnly() ||
		!strings.Contains(info.Description, "never for secrets") || !strings.Contains(info.Description, "scope project") {
		t.Errorf("Info = %+v", info)
	}
	tests := []struct {
		scope       string
		path        string
		describe    string
		title       string
		prompt      string
		offersAlway bool
	}{
		{ScopeProject, filepath.Join(root, FileName), "Save memory in AGENTS.md", "Confirm Memory Save",
			"the project's memory file, AGENTS.md", true},
		{ScopeUser, filepath.Join(home, ".config", "agentls", FileName), "Save memory in ~/.config/agentls/AGENTS.md",
			"Confirm Memory Save (all projects)", "your own memory file, ~/.config/agentls/AGENTS.md", false},
	}
	for _, tt := range tests {
		t.Run(tt.scope, func(t *testing.T) {
			inv, err := testutil.Build(t, tool, factArgs(t, "The fact.", tt.scope))
			if err != nil {
				t.Fatal(err)
			}
			d, err := inv.Confirmation(context.Background())
			if err != nil || d == nil {
				t.Fatalf("Confirmation = %v, %v; want details", d, err)
			}
			if d.Type != confirm.TypeInfo || d.Title != tt.title || !strings.Contains(d.Prompt, tt.prompt) || !strings.Contains(d.Prompt, "The fact.") {
				t.Errorf("Details = %+v", d)
			}
			always := len(d.Choices) == 0 || slices.ContainsFunc(d.Choices, func(c confirm.Choice) bool {
				return c.Outcome != confirm.ProceedOnce && c.Outcome != confirm.Cancel
			})
			if always != tt.offersAlway {
				t.Errorf("Choices = %+v: offers always %v, want %v", d.Choices, always, tt.offersAlway)
			}
			if locs := inv.Locations(); len(locs) != 1 || locs[0].Path != tt.path {
				t.Errorf("Locations = %+v, want %s", locs, tt.path)
			}
			if got := inv.Describe(); got != tt.describe {
				t.Errorf("Describe = %q, want %q", got, tt.describe)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := inv.Execute(ctx, nil); err == nil {
				t.Error("Execute with a cancelled context succeeded")
			}
			if _, err := os.Stat(tt.path); err == nil {
				t.Error("a cancelled call wrote")
			}
		})
	}
}

// recordingAsker answers every question with outcome and records the questions.
type recordingAsker struct {
	outcome confirm.Outcome
	mu      sync.Mutex
	asked   []confirm.Request
}

func (a *recordingAsker) Ask(_ context.Context, req confirm.Request) (confirm.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	return confirm.Answer{Outcome: a.outcome}, nil
}

func (a *recordingAsker) questions() []confirm.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asked)
}

// scheduler returns a scheduler running tool under a policy in mode, asking asker.
func scheduler(t *testing.T, tool tools.Tool, mode confirm.Mode, asker confirm.Asker) (*tools.Scheduler, *confirm.Policy) {
	t.Helper()
	policy, err := confirm.NewPolicy(mode, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry(nil, tools.Filter{})
	reg.Register(tool)
	return tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: asker, OutputDir: t.TempDir()}), policy
}

// TestConsent runs save_memory through the scheduler and the policy: in default mode
// the person is asked, shown the fact and the file; a refusal writes nothing; plan mode
// refuses without asking. User facts go to the user's file under HOME and
// XDG_CONFIG_HOME, which the test points into a temporary directory.
func TestConsent(t *testing.T) {
	tests := []struct {
		name    string
		mode    confirm.Mode
		scope   string
		answer  confirm.Outcome
		asks    bool
		status  tools.Status
		written string // "project", "user" or "" for nothing
	}{
		{"project, approved", confirm.ModeDefault, "", confirm.ProceedOnce, true, tools.StatusSuccess, "project"},
		{"project, refused", confirm.ModeDefault, "", confirm.Cancel, true, tools.StatusCancelled, ""},
		{"user, approved", confirm.ModeDefault, ScopeUser, confirm.ProceedOnce, true, tools.StatusSuccess, "user"},
		{"user, refused", confirm.ModeDefault, ScopeUser, confirm.Cancel, true, tools.StatusCancelled, ""},
		{"project, auto_edit asks", confirm.ModeAutoEdit, ScopeProject, confirm.ProceedOnce, true, tools.StatusSuccess, "project"},
		{"project, plan", confirm.ModePlan, ScopeProject, confirm.ProceedOnce, false, tools.StatusError, ""},
		{"user, plan", confirm.ModePlan, ScopeUser, confirm.ProceedOnce, false, tools.StatusError, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
			userConfig, err := os.UserConfigDir()
			if err != nil {
				t.Fatal(err)
			}
			configDir := filepath.Join(userConfig, "agentls")
			ws, root := testutil.Workspace(t, map[string]string{"README": "hi\n"})
			projectFile := filepath.Join(root, FileName)
			userFile := filepath.Join(home, "xdg", "agentls", FileName)
			before := testutil.Snapshot(t, root)

			asker := &recordingAsker{outcome: tt.answer}
			s, _ := scheduler(t, New(ws, configDir), tt.mode, asker)
			res := s.RunOne(context.Background(), tools.Request{Name: Name, Args: json.RawMessage(factArgs(t, "Deploys go through make release.", tt.scope))})
			if res.Status != tt.status {
				t.Errorf("status %s (%+v), want %s", res.Status, res.Error, tt.status)
			}
			if tt.mode == confirm.ModePlan && (res.Error == nil || res.Error.Type != tools.ErrPolicyViolation) {
				t.Errorf("plan mode: error %+v, want %s", res.Error, tools.ErrPolicyViolation)
			}

			asked := asker.questions()
			switch {
			case !tt.asks && len(asked) != 0:
				t.Errorf("asked %+v, want no question", asked)
			case tt.asks && len(asked) != 1:
				t.Fatalf("asked %d times, want once", len(asked))
			case tt.asks:
				d := asked[0].Details
				file := "AGENTS.md"
				if tt.scope == ScopeUser {
					file = "~/xdg/agentls/AGENTS.md"
				}
				if d.Type != confirm.TypeInfo || !strings.Contains(d.Prompt, "Deploys go through make release.") || !strings.Contains(d.Prompt, file) {
					t.Errorf("question %+v does not show the fact and %s", d, file)
				}
			}

			project, _ := os.ReadFile(projectFile)
			user, _ := os.ReadFile(userFile)
			const item = "- Deploys go through make release.\n"
			switch tt.written {
			case "project":
				if !strings.Contains(string(project), item) {
					t.Errorf("project file = %q", project)
				}
			case "user":
				if !strings.Contains(string(user), item) {
					t.Errorf("user file = %q", user)
				}
			}
			if tt.written != "project" {
				if after := testutil.Snapshot(t, root); !reflect.DeepEqual(after, before) {
					t.Errorf("workspace changed: %v", after)
				}
			}
			if tt.written != "user" {
				if _, err := os.Stat(filepath.Join(home, "xdg")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the user's configuration directory was made: %v", err)
				}
			}
		})
	}
}

// TestUserScopeAlwaysAsks checks that a fact for the user's own file is asked about
// every time: after "always" for a project fact or for a user fact, and in yolo mode.
func TestUserScopeAlwaysAsks(t *testing.T) {
	tests := []struct {
		name  string
		mode  confirm.Mode
		first string // the scope of a call answered "always" first; "" for none
	}{
		{"after always for a project fact", confirm.ModeDefault, ScopeProject},
		{"after always for a user fact", confirm.ModeDefault, ScopeUser},
		{"yolo", confirm.ModeYolo, ""},
		{"auto_edit", confirm.ModeAutoEdit, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, _, _, _ := setup(t, nil)
			asker := &recordingAsker{outcome: confirm.ProceedAlways}
			s, _ := scheduler(t, tool, tt.mode, asker)
			run := func(scope string) tools.CallResult {
				return s.RunOne(context.Background(), tools.Request{Name: Name, Args: json.RawMessage(factArgs(t, "F", scope))})
			}
			if tt.first != "" {
				if res := run(tt.first); res.Status != tools.StatusSuccess {
					t.Fatalf("first call: %s %+v", res.Status, res.Error)
				}
			}
			n := len(asker.questions())
			if res := run(ScopeUser); res.Status != tools.StatusSuccess {
				t.Fatalf("user call: %s %+v", res.Status, res.Error)
			}
			if got := len(asker.questions()) - n; got != 1 {
				t.Errorf("the user fact was asked about %d times, want once", got)
			}
		})
	}
}
