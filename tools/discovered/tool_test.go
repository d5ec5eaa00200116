package discovered

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// callTool discovers one tool called name whose call command is a script with body,
// and returns it with the workspace root.
func callTool(t *testing.T, name, body string, opts Options) (tools.Tool, string) {
	t.Helper()
	bin := t.TempDir()
	call := script(t, bin, "call", body)
	if opts.CallCommand == "" {
		opts.CallCommand = call
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	opts.DiscoveryCommand = script(t, bin, "discover", printing(`[{"name": "`+name+`", "description": "A test tool.", "parametersJsonSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]`))
	got, err := Discover(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("tools %q, want one", names(got))
	}
	return got[0], opts.Dir
}

func TestCallEchoesArguments(t *testing.T) {
	t.Parallel()
	// The tool prints its arguments, the JSON read from standard input, its directory
	// and the name it was called with.
	tool, dir := callTool(t, "echo", `printf 'args=%s\n' "$*"; printf 'pwd=%s\n' "$PWD"; printf 'stdin='; cat`, Options{})
	res, err := testutil.Call(context.Background(), t, tool, `{"text": "héllo \"world\"\n", "extra": [1, 2.50]}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(res.Output, "\n", 3)
	if lines[0] != "args=echo" || lines[1] != "pwd="+dir {
		t.Errorf("output:\n%s\nwant the tool name as the only argument and %s as the directory", res.Output, dir)
	}
	stdin := strings.TrimPrefix(lines[2], "stdin=")
	var got map[string]any
	if err := json.Unmarshal([]byte(stdin), &got); err != nil {
		t.Fatalf("standard input %q is not JSON: %v", stdin, err)
	}
	want := map[string]any{"text": "héllo \"world\"\n", "extra": []any{1.0, 2.5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("standard input %s, want %v", stdin, want)
	}
	if res.Summary != "Exit code 0" || res.Display != "" {
		t.Errorf("summary %q, display %q", res.Summary, res.Display)
	}
}

func TestCallEmptyArguments(t *testing.T) {
	t.Parallel()
	tool, _ := callTool(t, "t", "cat\n", Options{})
	for _, args := range []string{"", "null", "{}", "  {}  "} {
		inv, err := tool.Build(json.RawMessage(args))
		if err != nil {
			t.Fatalf("Build(%q): %v", args, err)
		}
		res, err := inv.Execute(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Output != "{}" {
			t.Errorf("arguments %q reached the command as %q, want {}", args, res.Output)
		}
	}
	for _, args := range []string{"[]", `"x"`, "{", "1"} {
		if _, err := tool.Build(json.RawMessage(args)); testutil.ErrorType(err) != tools.ErrInvalidParams {
			t.Errorf("Build(%q): %v, want invalid_tool_params", args, err)
		}
	}
}

func TestCallQuoting(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "my tools")
	script(t, bin, "my tool", `for a in "$@"; do printf '<%s>' "$a"; done`)
	tool, _ := callTool(t, "it's mine", "", Options{CallCommand: `"` + bin + `/my tool" --flag 'a b' c\ d`})
	res, err := testutil.Call(context.Background(), t, tool, `{}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "<--flag><a b><c d><it's mine>"; res.Output != want {
		t.Errorf("arguments %s, want %s", res.Output, want)
	}
	if d := tool.Info().Description; !strings.Contains(d, "`\""+bin+"/my tool\" --flag 'a b' c\\ d \"it's mine\"`") {
		t.Errorf("description does not show the call command line:\n%s", d)
	}
}

func TestCallFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []string
	}{
		{
			"exit 3",
			"echo 'partial result'\necho 'something broke' >&2\nexit 3\n",
			[]string{"t failed.", "Stdout: partial result\n", "Stderr: something broke\n", "Error: (none)", "Exit Code: 3\n", "Signal: (none)"},
		},
		{
			"exit 1 silently",
			"exit 1\n",
			[]string{"Stdout: (empty)", "Stderr: (empty)", "Exit Code: 1"},
		},
		{
			"killed by a signal",
			"echo before\nkill -KILL $$\n",
			[]string{"Stdout: before\n", "Exit Code: (none)", "Signal: 9 (SIGKILL)"},
		},
		{
			"terminated",
			"kill -TERM $$\n",
			[]string{"Exit Code: (none)", "Signal: 15 (SIGTERM)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool, dir := callTool(t, "t", tt.body, Options{})
			_, err := testutil.Call(context.Background(), t, tool, `{}`, nil)
			typ, msg := errorType(err)
			if typ != tools.ErrExecutionFailed {
				t.Fatalf("error %v, want execution_failed", err)
			}
			for _, w := range append(tt.want, "Directory: "+dir) {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not contain %q:\n%s", w, msg)
				}
			}
		})
	}
}

func TestCallStderrWithExitZero(t *testing.T) {
	t.Parallel()
	tool, _ := callTool(t, "t", "echo 'a warning' >&2\necho '{\"ok\": true}'\n", Options{})
	res, err := testutil.Call(context.Background(), t, tool, `{}`, nil)
	if err != nil {
		t.Fatalf("a tool that exits 0 succeeds whatever it writes to standard error: %v", err)
	}
	if res.Output != "{\"ok\": true}\n" {
		t.Errorf("output %q: the model gets standard output only", res.Output)
	}
	if !strings.Contains(res.Display, "a warning") || !strings.Contains(res.Summary, "standard error") {
		t.Errorf("people are not shown standard error: summary %q, display %q", res.Summary, res.Display)
	}
}

func TestCallMissingProgram(t *testing.T) {
	t.Parallel()
	tool, _ := callTool(t, "t", "", Options{CallCommand: filepath.Join(t.TempDir(), "gone")})
	_, err := testutil.Call(context.Background(), t, tool, `{}`, nil)
	if typ, msg := errorType(err); typ != tools.ErrExecutionFailed || !strings.Contains(msg, "gone") {
		t.Fatalf("error %v, want execution_failed naming the program", err)
	}
}

func TestCallOutputCap(t *testing.T) {
	t.Parallel()
	// Far more than the cap on both streams: the call must neither block nor keep it.
	tool, _ := callTool(t, "t", "head -c 100000 /dev/zero | tr '\\0' e >&2\nhead -c 100000 /dev/zero | tr '\\0' o\n", Options{MaxOutput: 1000})
	res, err := testutil.Call(context.Background(), t, tool, `{}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	head, note, ok := strings.Cut(res.Output, "\n")
	if !ok || head != strings.Repeat("o", 1000) || !strings.Contains(note, "100000 bytes") || !strings.Contains(note, "first 1000") {
		t.Errorf("output %.100q… (%d bytes), want the first 1000 bytes and a note", res.Output, len(res.Output))
	}
	if !strings.Contains(res.Display, "99000 more bytes not kept") {
		t.Errorf("display does not say standard error was cut: %.200q", res.Display)
	}
}

func TestCallReportClipsLongStreams(t *testing.T) {
	t.Parallel()
	tool, _ := callTool(t, "t", "i=0; while [ $i -lt 5000 ]; do echo \"line $i\" >&2; i=$((i+1)); done; exit 2\n", Options{})
	_, err := testutil.Call(context.Background(), t, tool, `{}`, nil)
	_, msg := errorType(err)
	if !strings.Contains(msg, "Stderr: line 0\n") || !strings.Contains(msg, "line 4999\nError:") || !strings.Contains(msg, "characters left out here") {
		t.Fatalf("error does not hold the beginning and the end of standard error:\n%.300s…", msg)
	}
	if len(msg) > tools.MaxOutputChars {
		t.Errorf("error is %d bytes long", len(msg))
	}
}

func TestCallCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile, childFile := filepath.Join(dir, "pid"), filepath.Join(dir, "child")
	tool, _ := callTool(t, "t", "echo started\nsleep 1000 &\necho $! > "+childFile+"\necho $$ > "+pidFile+"\nwait\n", Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := testutil.Call(ctx, t, tool, `{}`, nil)
		done <- err
	}()
	pid := readPID(t, pidFile)
	child := readPID(t, childFile)
	cancel()
	err := <-done
	typ, msg := errorType(err)
	if typ != tools.ErrCancelled || !strings.Contains(msg, "Stdout: started") || !strings.Contains(msg, "SIGTERM") {
		t.Fatalf("error %v, want cancelled with the output so far", err)
	}
	waitGone(t, pid)
	waitGone(t, child)
}

func TestCallTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	tool, _ := callTool(t, "t", "echo $$ > "+pidFile+"\nexec sleep 1000\n", Options{Timeout: 200 * time.Millisecond})
	_, err := testutil.Call(context.Background(), t, tool, `{}`, nil)
	typ, msg := errorType(err)
	if typ != tools.ErrTimeout || !strings.Contains(msg, "did not finish within 200ms") {
		t.Fatalf("error %v, want a timeout", err)
	}
	waitGone(t, readPID(t, pidFile))
}

func TestCallIgnoringSIGTERMIsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	opts := Options{Timeout: 100 * time.Millisecond, grace: 100 * time.Millisecond}
	tool, _ := callTool(t, "t", "trap '' TERM\necho $$ > "+pidFile+"\nwhile :; do sleep 1; done\n", opts)
	_, err := testutil.Call(context.Background(), t, tool, `{}`, nil)
	typ, msg := errorType(err)
	if typ != tools.ErrTimeout || !strings.Contains(msg, "Signal: 9 (SIGKILL)") {
		t.Fatalf("error %v, want a timeout ended by SIGKILL", err)
	}
	waitGone(t, readPID(t, pidFile))
}

func TestCallLeftoversAreKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	childFile := filepath.Join(dir, "child")
	// The background process keeps standard output open; the call must not wait for it.
	tool, _ := callTool(t, "t", "sleep 1000 &\necho $! > "+childFile+"\necho done\n", Options{})
	res, err := testutil.Call(context.Background(), t, tool, `{}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "done\n" {
		t.Errorf("output %q", res.Output)
	}
	waitGone(t, readPID(t, childFile))
}

func TestConfirmation(t *testing.T) {
	t.Parallel()
	tool, dir := callTool(t, "read_file", "cat\n", Options{
		CallCommand: "python3 tools.py call",
		Builtin:     func(n string) bool { return n == "read_file" },
	})
	inv, err := testutil.Build(t, tool, `{"text": "x"}`)
	if err != nil {
		t.Fatal(err)
	}
	d, err := inv.Confirmation(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Type != confirm.TypeInfo || d.Title != "Confirm Discovered Tool: discovered_read_file" {
		t.Errorf("details type %q, title %q", d.Type, d.Title)
	}
	for _, w := range []string{"`python3 tools.py call read_file`", dir, "\"text\": \"x\""} {
		if !strings.Contains(d.Prompt, w) {
			t.Errorf("prompt does not contain %q:\n%s", w, d.Prompt)
		}
	}
	if d.Command != "" || len(d.RootCommands) != 0 {
		t.Errorf("details carry a shell command: %+v", d)
	}
	if got := inv.Describe(); got != `discovered_read_file {"text":"x"}` {
		t.Errorf("Describe() = %q", got)
	}
}

// TestAllowAlwaysStaysWithTheTool checks, with the real policy, that allowing a
// discovered tool for the session allows that tool only, and that allowing its call
// command's program for the shell does not allow the tool.
func TestAllowAlwaysStaysWithTheTool(t *testing.T) {
	t.Parallel()
	tool, dir := callTool(t, "lint", "cat\n", Options{CallCommand: "python3 tools.py call"})
	inv, err := testutil.Build(t, tool, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	d, err := inv.Confirmation(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	shell := func(command string) confirm.Call {
		return confirm.Call{Tool: "run_shell_command", Args: json.RawMessage(`{}`), Details: &confirm.Details{
			Type: confirm.TypeExecute, Title: "Confirm Shell Command", Command: command, Directory: dir}}
	}
	discovered := confirm.Call{Tool: "lint", Args: json.RawMessage(`{}`), Details: d}

	p, err := confirm.NewPolicy(confirm.ModeDefault, nil, func() []string { return []string{dir} })
	if err != nil {
		t.Fatal(err)
	}
	if v := p.Decide(discovered); v.Decision != confirm.Ask {
		t.Fatalf("a discovered tool runs unasked: %+v", v)
	}
	p.Remember(discovered, confirm.ProceedAlways)
	if v := p.Decide(discovered); v.Decision != confirm.Allow {
		t.Errorf("after Allow always the tool is still asked about: %+v", v)
	}
	if v := p.Decide(shell("python3 -c 'print(1)'")); v.Decision != confirm.Ask {
		t.Errorf("allowing the discovered tool allowed python3 in the shell: %+v", v)
	}

	p2, err := confirm.NewPolicy(confirm.ModeDefault, nil, func() []string { return []string{dir} })
	if err != nil {
		t.Fatal(err)
	}
	p2.Remember(shell("python3 x.py"), confirm.ProceedAlways)
	if v := p2.Decide(shell("python3 y.py")); v.Decision != confirm.Allow {
		t.Fatalf("the shell allowlist does not work as this test assumes: %+v", v)
	}
	if v := p2.Decide(discovered); v.Decision != confirm.Ask {
		t.Errorf("allowing python3 in the shell allowed the discovered tool: %+v", v)
	}
}

func TestCallDirIsWorkspaceRoot(t *testing.T) {
	t.Parallel()
	// Relative call commands are found from the workspace root, as in Gemini CLI.
	root := t.TempDir()
	script(t, root, "bin/call", "echo \"called $1\"\n")
	tool, _ := callTool(t, "t", "", Options{CallCommand: "./bin/call", Dir: root})
	res, err := testutil.Call(context.Background(), t, tool, `{}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "called t\n" {
		t.Errorf("output %q", res.Output)
	}
}

// TestHideEnv: the variables HideEnv names are in the environment of neither the
// discovery command nor a call; the others are.
func TestHideEnv(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "marker-secret")
	t.Setenv("AGENTLS_TEST_OTHER", "marker-other")
	tests := []struct {
		name   string
		hide   []string
		secret bool // whether the secret is to be seen
	}{
		{"nothing hidden", nil, true},
		{"key hidden", []string{"GEMINI_API_KEY", "UNSET_VARIABLE"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			// The discovery command names its tool after what it sees of the secret.
			disc := script(t, bin, "discover", `printf '[{"name": "seen_%s"}]' "${GEMINI_API_KEY:-none}"`+"\n")
			call := script(t, bin, "call", "env\n")
			got, err := Discover(context.Background(), Options{DiscoveryCommand: disc, CallCommand: call,
				Dir: t.TempDir(), HideEnv: func() []string { return tt.hide }})
			if err != nil {
				t.Fatal(err)
			}
			wantName := "seen_none"
			if tt.secret {
				wantName = "seen_marker-secret"
			}
			if len(got) != 1 || got[0].Info().Name != wantName {
				t.Fatalf("tools %q, want %s", names(got), wantName)
			}
			res, err := testutil.Call(context.Background(), t, got[0], `{}`, nil)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(res.Output, "\n")
			if slices.Contains(lines, "GEMINI_API_KEY=marker-secret") != tt.secret {
				t.Errorf("call environment has the secret: %v, want %v:\n%s", !tt.secret, tt.secret, res.Output)
			}
			for _, want := range []string{"AGENTLS_TEST_OTHER=marker-other", "AGENTLS=1"} {
				if !slices.Contains(lines, want) {
					t.Errorf("call environment lacks %s:\n%s", want, res.Output)
				}
			}
		})
	}
}
