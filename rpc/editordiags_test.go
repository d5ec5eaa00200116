package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/lsptest"
	"github.com/agentls/agentls/tools"
)

// The editor's diagnostics (docs/protocol.md, "The editor's diagnostics"), over the real
// binary. The test client plays an editor whose language server reports a type error
// on every line that assigns a string to an int, as gopls does (the editor tests run
// gopls itself).

// collectParams are the params of agentls/collectDiagnostics.
type collectParams struct {
	ID     string   `json:"id"`
	URIs   []string `json:"uris"`
	Settle bool     `json:"settle"`
	Reload bool     `json:"reload"`
	WaitMs int64    `json:"waitMs"`
}

// capsDiagnostics is an agentls plugin that reports its editor's diagnostics.
func capsDiagnostics(waitMs int) map[string]any {
	return withCaps(capsEditor, "experimental", map[string]any{"agentls": map[string]any{
		"confirm": true, "updates": true, "diagnostics": map[string]any{"waitMs": waitMs}}})
}

const typeErrorMessage = `cannot use "x" (untyped string constant) as int value in variable declaration`

// typeErrors are the diagnostics of text: an error on each line that declares an int
// with a string.
func typeErrors(text string) []map[string]any {
	out := []map[string]any{}
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, `int = "x"`) {
			out = append(out, map[string]any{
				"range":    map[string]any{"start": map[string]any{"line": i, "character": 13}, "end": map[string]any{"line": i, "character": 16}},
				"severity": 1, "source": "compiler", "code": "IncompatibleAssign", "message": typeErrorMessage,
			})
		}
	}
	return out
}

// reporter answers agentls/collectDiagnostics as an editor would, from the text its
// documents hold (reply decides, and may delay), until the test ends.
type reporter struct {
	c     *lsptest.Client
	mu    sync.Mutex
	asked []collectParams
}

// inOrder makes the editor apply an edit only once the reporter took in every
// agentls/collectDiagnostics sent before it, as an editor that handles the server's
// messages in order does: the report of the state before an edit is of that state.
func (r *reporter) inOrder() {
	r.c.Handle("workspace/applyEdit", func(ctx context.Context, params json.RawMessage) (any, error) {
		for len(r.collected()) < len(r.c.Received("agentls/collectDiagnostics")) {
			time.Sleep(time.Millisecond)
		}
		return r.c.Editor().ApplyEdit(ctx, params)
	})
}

func (r *reporter) collected() []collectParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.asked)
}

func startReporter(t *testing.T, c *lsptest.Client, reply func(p collectParams) (files []map[string]any, delay time.Duration)) *reporter {
	r := &reporter{c: c}
	r.inOrder()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		seen := map[string]bool{}
		for {
			m, err := c.WaitFor(ctx, "agentls/collectDiagnostics", func(m lsptest.Message) bool {
				var p collectParams
				json.Unmarshal(m.Params, &p)
				return !seen[p.ID]
			})
			if err != nil {
				return
			}
			var p collectParams
			json.Unmarshal(m.Params, &p)
			seen[p.ID] = true
			files, delay := reply(p)
			r.mu.Lock()
			r.asked = append(r.asked, p)
			r.mu.Unlock()
			go func() {
				time.Sleep(delay)
				c.Notify("agentls/diagnostics", map[string]any{"id": p.ID, "files": files})
			}()
		}
	}()
	return r
}

// fromEditor reports the type errors of the documents asked about, as the editor holds
// them.
func fromEditor(c *lsptest.Client) func(p collectParams) ([]map[string]any, time.Duration) {
	return func(p collectParams) ([]map[string]any, time.Duration) {
		files := []map[string]any{}
		for _, u := range p.URIs {
			d, _ := c.Editor().Doc(u)
			files = append(files, map[string]any{"uri": u, "diagnostics": typeErrors(d.Text)})
		}
		return files, 0
	}
}

// functionResponses returns the text of every function response the model received,
// in order.
func functionResponses(t *testing.T, fake *fakegemini.Server) []string {
	t.Helper()
	reqs, err := fake.GenerateRequests()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range reqs {
		for _, c := range r.Contents {
			for _, p := range c.Parts {
				if p.FunctionResponse != nil && !seen[p.FunctionResponse.ID+string(p.FunctionResponse.Response)] {
					seen[p.FunctionResponse.ID+string(p.FunctionResponse.Response)] = true
					var r struct{ Output, Error string }
					if err := json.Unmarshal(p.FunctionResponse.Response, &r); err != nil {
						t.Fatal(err)
					}
					out = append(out, r.Output+r.Error)
				}
			}
		}
	}
	return out
}

const goSource = "package main\n\nfunc main() {\n\tvar n int = 1\n\t_ = n\n}\n"

// TestEditorDiagnosticsReachTheModel: an edit that introduces a type error gives the
// model, in its next request, the editor's message for that line; the edit that fixes
// it tells the model the error was resolved; the tool that reads the diagnostics is
// declared to the model, and answers from the editor.
func TestEditorDiagnosticsReachTheModel(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"main.go": goSource})
	file := filepath.Join(root, "main.go")
	fake := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{call("read_file", map[string]any{"file_path": file}, "read")}},
		{Calls: []clients.ScriptCall{call("replace", map[string]any{"file_path": file, "old_string": "var n int = 1", "new_string": `var n int = "x"`}, "break")}},
		{Calls: []clients.ScriptCall{call("replace", map[string]any{"file_path": file, "old_string": `var n int = "x"`, "new_string": "var n int = 2"}, "fix")}},
		{Calls: []clients.ScriptCall{call("get_diagnostics", map[string]any{}, "look")}},
		{Text: "Fixed."},
	}})
	t.Cleanup(fake.Close)
	c := startEnv(t, root, []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + fake.URL})
	answerConfirmations(c)
	if _, err := c.Initialize(ctx, initParams(root, capsDiagnostics(2000), nil)); err != nil {
		t.Fatal(err)
	}
	uri := lsptest.FileURI(file)
	if err := c.Editor().Open(uri, goSource); err != nil {
		t.Fatal(err)
	}
	rep := startReporter(t, c, fromEditor(c))
	var res promptResult
	if err := command(ctx, c, "agentls.prompt", map[string]any{"prompt": "break it, then fix it"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "end_turn" {
		t.Fatalf("prompt: %+v", res)
	}
	got := functionResponses(t, fake)[1:] // after read_file's
	if len(got) != 3 {
		t.Fatalf("function responses: %q", got)
	}
	want := fmt.Sprintf("main.go:4: error: %s (compiler)", typeErrorMessage)
	if !strings.Contains(got[0], want) || !strings.Contains(got[0], "1 new error(s)") {
		t.Errorf("after the edit that breaks: %s\nwant it to contain %q", got[0], want)
	}
	if !strings.Contains(got[1], "1 error(s) or warning(s) reported before this change are resolved") || strings.Contains(got[1], typeErrorMessage) {
		t.Errorf("after the edit that fixes: %s", got[1])
	}
	if !strings.Contains(got[2], "no errors or warnings") {
		t.Errorf("get_diagnostics: %s", got[2])
	}
	// Each edit asked for the state before it, then for the settled state after it.
	var asked []string
	for _, p := range rep.collected() {
		asked = append(asked, fmt.Sprintf("%v %v %d", p.Settle, p.URIs, p.WaitMs))
	}
	want2 := []string{fmt.Sprintf("false [%s] 2000", uri), fmt.Sprintf("true [%s] 2000", uri),
		fmt.Sprintf("false [%s] 2000", uri), fmt.Sprintf("true [%s] 2000", uri), "false [] 2000"}
	if !slices.Equal(asked, want2) {
		t.Errorf("collectDiagnostics sent:\n%q\nwant\n%q", asked, want2)
	}
	reqs, err := fake.GenerateRequests()
	if err != nil {
		t.Fatal(err)
	}
	if !declares(reqs[0], "get_diagnostics") {
		t.Error("get_diagnostics is not declared to a client that reports diagnostics")
	}
}

func declares(r fakegemini.GenerateRequest, name string) bool {
	for _, tl := range r.Tools {
		for _, d := range tl.FunctionDeclarations {
			if d.Name == name {
				return true
			}
		}
	}
	return false
}

// TestEditorDiagnosticsWithoutCapability: a client that does not declare the
// capability is never asked, the model's results say nothing of diagnostics, the edit
// is not held up, and get_diagnostics is not declared.
func TestEditorDiagnosticsWithoutCapability(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"main.go": goSource})
	file := filepath.Join(root, "main.go")
	fake := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{call("read_file", map[string]any{"file_path": file}, "read")}},
		{Calls: []clients.ScriptCall{call("replace", map[string]any{"file_path": file, "old_string": "var n int = 1", "new_string": `var n int = "x"`}, "break")}},
		{Text: "Done."},
	}})
	t.Cleanup(fake.Close)
	c := startEnv(t, root, []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + fake.URL})
	answerConfirmations(c)
	if _, err := c.Initialize(ctx, initParams(root, capsRich, nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.Editor().Open(lsptest.FileURI(file), goSource); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var res promptResult
	if err := command(ctx, c, "agentls.prompt", map[string]any{"prompt": "break it"}, &res); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("the prompt took %s: something waited", took)
	}
	if n := len(c.Received("agentls/collectDiagnostics")); n != 0 {
		t.Errorf("%d agentls/collectDiagnostics sent to a client without the capability", n)
	}
	got := functionResponses(t, fake)
	if len(got) != 2 || !strings.Contains(got[1], "main.go") || strings.Contains(got[1], "diagnostics") {
		t.Errorf("function responses: %q", got)
	}
	reqs, _ := fake.GenerateRequests()
	if declares(reqs[0], "get_diagnostics") {
		t.Error("get_diagnostics declared to a client that cannot report diagnostics")
	}
}

// TestEditorDiagnosticsBadReports: reports of files nobody asked about, reports after
// the wait ended, reports nobody waits for and malformed ones are ignored with a log
// line; the calls go on.
func TestEditorDiagnosticsBadReports(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"main.go": goSource, "other.go": "package main\n"})
	file := filepath.Join(root, "main.go")
	other := lsptest.FileURI(filepath.Join(root, "other.go"))
	c := start(t, root)
	answerConfirmations(c)
	if _, err := c.Initialize(ctx, initParams(root, capsDiagnostics(400), nil)); err != nil {
		t.Fatal(err)
	}
	uri := lsptest.FileURI(file)
	if err := c.Editor().Open(uri, goSource); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	late := false
	startReporter(t, c, func(p collectParams) ([]map[string]any, time.Duration) {
		files, _ := fromEditor(c)(p)
		// Every report also speaks of a file nobody asked about.
		files = append(files, map[string]any{"uri": other, "diagnostics": []map[string]any{
			{"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 1}},
				"severity": 1, "message": "untouched file's error"}}})
		mu.Lock()
		defer mu.Unlock()
		if late && p.Settle {
			return files, time.Duration(p.WaitMs)*time.Millisecond + 300*time.Millisecond
		}
		return files, 0
	})
	// Malformed, and nobody's.
	c.Notify("agentls/diagnostics", map[string]any{"id": 7, "files": "none"})
	c.Notify("agentls/diagnostics", map[string]any{"id": "nobody", "files": []any{}})

	res := runTool(ctx, t, c, "replace", map[string]any{"file_path": file, "old_string": "var n int = 1", "new_string": `var n int = "x"`})
	if res.Status != tools.StatusSuccess || !strings.Contains(res.Output, typeErrorMessage) || strings.Contains(res.Output, "untouched") {
		t.Errorf("with a report that names another file too: %s", res.Output)
	}
	mu.Lock()
	late = true
	mu.Unlock()
	start := time.Now()
	res = runTool(ctx, t, c, "replace", map[string]any{"file_path": file, "old_string": `var n int = "x"`, "new_string": "var n int = 2"})
	took := time.Since(start)
	if res.Status != tools.StatusSuccess || strings.Contains(res.Output, "diagnostics") {
		t.Errorf("with a report after the wait: %s", res.Output)
	}
	if took > 2*time.Second {
		t.Errorf("the call took %s with a wait of 400ms", took)
	}
	time.Sleep(time.Second) // the late report arrives
	if _, err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	log := c.Stderr()
	for _, want := range []string{
		`"bad notification" method=agentls/diagnostics`,
		`ignoring a diagnostics report nobody waits for (unknown id, or its wait ended)" id=nobody`,
		"ignoring the diagnostics of a file that was not asked about",
		"no settled diagnostics report in time",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if strings.Count(log, "ignoring a diagnostics report nobody waits for") < 2 {
		t.Errorf("the late report was not logged:\n%s", log)
	}
}

// TestEditorDiagnosticsAfterShellCommand: a command that changes a file open in the
// editor gets the editor's diagnostics of that file, the client asked to re-read it
// from disk first; a command that changes none is not held up.
func TestEditorDiagnosticsAfterShellCommand(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	root := workspaceDir(t, map[string]string{"main.go": goSource, "b.go": "package main\n", "c.go": "package main\n"})
	file := filepath.Join(root, "main.go")
	c := start(t, root)
	answerConfirmations(c)
	if _, err := c.Initialize(ctx, initParams(root, capsDiagnostics(2000), nil)); err != nil {
		t.Fatal(err)
	}
	uri := lsptest.FileURI(file)
	for _, name := range []string{"main.go", "b.go"} {
		p := filepath.Join(root, name)
		if err := c.Editor().Open(lsptest.FileURI(p), readFile(t, p)); err != nil {
			t.Fatal(err)
		}
	}
	rep := startReporter(t, c, func(p collectParams) ([]map[string]any, time.Duration) {
		files := []map[string]any{}
		uris := p.URIs
		if len(uris) == 0 { // the workspace: what the editor has open
			uris = []string{uri, lsptest.FileURI(filepath.Join(root, "b.go"))}
		}
		for _, u := range uris {
			// As an editor that reloaded the file: the disk's text.
			path := strings.TrimPrefix(u, "file://")
			files = append(files, map[string]any{"uri": u, "diagnostics": typeErrors(readFile(t, path))})
		}
		return files, 0
	})
	res := runTool(ctx, t, c, "run_shell_command", map[string]any{"command": `sed -i 's/int = 1/int = "x"/' main.go`})
	if res.Status != tools.StatusSuccess || !strings.Contains(res.Output, "main.go:4: error: "+typeErrorMessage) {
		t.Errorf("after a command that broke main.go: %s", res.Output)
	}
	asked := rep.collected()
	if len(asked) != 2 || asked[0].Settle || len(asked[0].URIs) != 2 || !asked[1].Settle || !asked[1].Reload || !slices.Equal(asked[1].URIs, []string{uri}) {
		t.Errorf("collectDiagnostics: %+v", asked)
	}
	res = runTool(ctx, t, c, "run_shell_command", map[string]any{"command": "echo nothing changed"})
	if strings.Contains(res.Output, "diagnostics") {
		t.Errorf("after a command that changed nothing: %s", res.Output)
	}
	if n := len(rep.collected()); n != 3 {
		t.Errorf("%d collectDiagnostics after a command that changed nothing; want the one before it only", n-2)
	}
	// get_diagnostics of a file the editor does not have open says so.
	res = runTool(ctx, t, c, "get_diagnostics", map[string]any{"file_path": "c.go"})
	if res.Status != tools.StatusSuccess || !strings.Contains(res.Output, "no errors or warnings in c.go. It does not have the file open") {
		t.Errorf("get_diagnostics of a file not open: %s", res.Output)
	}
	res = runTool(ctx, t, c, "get_diagnostics", map[string]any{})
	if res.Status != tools.StatusSuccess || !strings.Contains(res.Output, "1 error(s), 0 warning(s) in the workspace:\n- main.go:4: error: ") {
		t.Errorf("get_diagnostics of the workspace: %s", res.Output)
	}
}
