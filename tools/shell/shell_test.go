package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// newShell returns a shell over a fresh workspace holding files, its root, and its
// output directory. The shell is closed when the test ends.
func newShell(t *testing.T, opts Options, files map[string]string) (*Shell, string) {
	t.Helper()
	ws, root := testutil.Workspace(t, files)
	if opts.OutputDir == "" {
		opts.OutputDir = filepath.Join(t.TempDir(), "output")
	}
	s := New(ws, opts)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, root
}

// tool returns the shell's tool called name.
func tool(t testing.TB, s *Shell, name string) tools.Tool {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.Info().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// args renders call arguments as JSON.
func args(t testing.TB, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// run calls run_shell_command with command and the other arguments in extra.
func run(ctx context.Context, t *testing.T, s *Shell, command string, extra map[string]any, out *sink) (*tools.Result, error) {
	t.Helper()
	m := map[string]any{"command": command}
	for k, v := range extra {
		m[k] = v
	}
	var w *sink
	if out != nil {
		w = out
	} else {
		w = &sink{}
	}
	return testutil.Call(ctx, t, tool(t, s, RunToolName), args(t, m), w)
}

// field returns the value of a "Name: value" line of a shell result. Output, which may
// span lines, runs up to the Error line.
func field(t *testing.T, res *tools.Result, name string) string {
	t.Helper()
	if name == "Output" {
		_, rest, ok := strings.Cut(res.Output, "\nOutput: ")
		out, _, ok2 := strings.Cut(rest, "\nError: ")
		if !ok || !ok2 {
			t.Fatalf("no Output in %q", res.Output)
		}
		return out
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `: (.*)$`).FindStringSubmatch(res.Output)
	if m == nil {
		t.Fatalf("no %s in %q", name, res.Output)
	}
	return m[1]
}

// sink is a live-output writer that records the chunks it gets and lets a test act on
// them as they arrive.
type sink struct {
	mu     sync.Mutex
	chunks []string
	on     func(all string) // called after each chunk with everything so far
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.chunks = append(s.chunks, string(p))
	all := strings.Join(s.chunks, "")
	on := s.on
	s.mu.Unlock()
	if on != nil {
		on(all)
	}
	return len(p), nil
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.chunks, "")
}

// alive reports whether process pid exists and is not a zombie. A zombie is dead: here
// orphans are reparented to an init that may never reap them.
func alive(t *testing.T, pid int) bool {
	t.Helper()
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	state, _, ok := parseStat(stat)
	return ok && state != 'Z' && state != 'X'
}

// readPID reads a PID a command wrote to a file.
func readPID(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return pid
}

// killLater kills process pid when the test ends, if it is still there.
func killLater(t *testing.T, pid int) {
	t.Cleanup(func() {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Errorf("killing %d: %v", pid, err)
		}
	})
}

func TestInfo(t *testing.T) {
	s, _ := newShell(t, Options{}, nil)
	want := map[string]struct {
		kind       tools.Kind
		streams    bool
		idempotent bool
	}{
		RunToolName:  {tools.KindExecute, true, false},
		ListToolName: {tools.KindRead, false, true},
		ReadToolName: {tools.KindRead, false, true},
	}
	got := s.Tools()
	if len(got) != len(want) {
		t.Fatalf("%d tools, want %d", len(got), len(want))
	}
	for _, tl := range got {
		info := tl.Info()
		w, ok := want[info.Name]
		if !ok {
			t.Errorf("unexpected tool %s", info.Name)
			continue
		}
		if info.Kind != w.kind || info.Streams != w.streams || info.Idempotent != w.idempotent || info.Source != tools.SourceBuiltin {
			t.Errorf("%s: kind %s streams %v idempotent %v source %s", info.Name, info.Kind, info.Streams, info.Idempotent, info.Source)
		}
		if _, err := tools.NewValidator(info.Parameters); err != nil {
			t.Errorf("%s: schema: %v", info.Name, err)
		}
	}
	desc := tool(t, s, RunToolName).Info().Description
	for _, phrase := range []string{"bash -c <command>", "`&`", "is_background", "delay_ms", "kill -- -PGID", ReadToolName} {
		if !strings.Contains(desc, phrase) {
			t.Errorf("description lacks %q", phrase)
		}
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		command string
		want    map[string]string // field → value
	}{
		{
			name:    "success",
			command: "echo hello",
			want:    map[string]string{"Output": "hello", "Exit Code": "0", "Signal": "(none)", "Error": "(none)", "Background PIDs": "(none)", "Directory": "(root)"},
		},
		{
			name:    "exit code",
			command: "echo failing; exit 3",
			want:    map[string]string{"Output": "failing", "Exit Code": "3", "Signal": "(none)"},
		},
		{
			name:    "no output",
			command: "true",
			want:    map[string]string{"Output": "(empty)", "Exit Code": "0"},
		},
		{
			name:    "stderr merged in order",
			command: "echo out1; echo err1 >&2; echo out2; echo err2 >&2",
			want:    map[string]string{"Output": "out1\nerr1\nout2\nerr2"},
		},
		{
			name:    "killed by a signal",
			command: "echo before; kill -TERM $$; echo after",
			want:    map[string]string{"Output": "before", "Exit Code": "(none)", "Signal": "15 (SIGTERM)"},
		},
		{
			name:    "environment",
			opts:    Options{Env: []string{"EXTRA=from options", "PAGER=less"}},
			command: `echo "$AGENTLS|$PAGER|$GIT_PAGER|$GIT_TERMINAL_PROMPT|$EXTRA|${HOME:+home set}"`,
			want:    map[string]string{"Output": "1|less|cat|0|from options|home set"},
		},
		{
			name:    "stdin is /dev/null",
			command: "cat; readlink /proc/self/fd/0",
			want:    map[string]string{"Output": "/dev/null", "Exit Code": "0"},
		},
		{
			name:    "own process group",
			command: "test $(cut -d' ' -f5 /proc/$$/stat) = $$ && echo leader",
			want:    map[string]string{"Output": "leader"},
		},
		{
			name:    "other shell",
			opts:    Options{Shell: "sh"},
			command: "echo via sh",
			want:    map[string]string{"Output": "via sh"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newShell(t, tt.opts, nil)
			res, err := run(t.Context(), t, s, tt.command, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := field(t, res, "Command"); got != tt.command {
				t.Errorf("Command: %q, want %q", got, tt.command)
			}
			for name, want := range tt.want {
				if got := field(t, res, name); got != want {
					t.Errorf("%s: %q, want %q\n%s", name, got, want, res.Output)
				}
			}
			if pgid := field(t, res, "Process Group PGID"); !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(pgid) {
				t.Errorf("Process Group PGID: %q", pgid)
			}
			if res.OutputFile != "" {
				t.Errorf("OutputFile %q for a short output", res.OutputFile)
			}
		})
	}
}

// TestResultShape pins the whole text the model gets, in Gemini CLI's layout, marked as
// untrusted context.
func TestResultShape(t *testing.T) {
	s, _ := newShell(t, Options{}, map[string]string{"sub/f": ""})
	res, err := run(t.Context(), t, s, "echo one; echo two", map[string]any{"dir_path": "sub"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pgid := field(t, res, "Process Group PGID")
	want := "<untrusted_context>\nCommand: echo one; echo two\nDirectory: sub\nOutput: one\ntwo\nError: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: " + pgid + "\n</untrusted_context>"
	if res.Output != want {
		t.Errorf("Output:\n%s\nwant:\n%s", res.Output, want)
	}
	if res.Display != "one\ntwo" || res.Summary != "Exit code 0" {
		t.Errorf("Display %q, Summary %q", res.Display, res.Summary)
	}
}

// TestStreaming proves output reaches the live writer while the command runs, in
// chunks as they come rather than lines: the command waits, without printing a
// newline, for a file the sink creates when it sees the first chunk.
func TestStreaming(t *testing.T) {
	s, root := newShell(t, Options{}, nil)
	gate := filepath.Join(root, "gate")
	out := &sink{}
	var once sync.Once
	out.on = func(all string) {
		if strings.Contains(all, "first") {
			once.Do(func() {
				if err := os.WriteFile(gate, nil, 0o644); err != nil {
					t.Error(err)
				}
			})
		}
	}
	// If the first chunk were held back until the command ended, it would never end:
	// the deadline turns that into a failure instead of a hang.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := run(ctx, t, s, `printf first; while [ ! -e gate ]; do sleep 0.01; done; printf ' second\n'`, nil, out)
	if err != nil {
		t.Fatalf("the command did not see the first chunk streamed: %v", err)
	}
	if got := out.String(); got != "first second\n" {
		t.Errorf("live output %q", got)
	}
	if out.chunks[0] != "first" {
		t.Errorf("first chunk %q, want %q", out.chunks[0], "first")
	}
	if got := field(t, res, "Output"); got != "first second" {
		t.Errorf("Output %q", got)
	}
}

func TestDirPath(t *testing.T) {
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dir     func(root string) string
		wantDir string // pwd relative to root, when the command runs
		wantErr tools.ErrorType
	}{
		{name: "default", dir: func(string) string { return "" }, wantDir: "."},
		{name: "relative", dir: func(string) string { return "sub" }, wantDir: "sub"},
		{name: "absolute inside", dir: func(root string) string { return filepath.Join(root, "sub") }, wantDir: "sub"},
		{name: "symlink inside", dir: func(string) string { return "link-in" }, wantDir: "link-in"},
		{name: "dotdot", dir: func(string) string { return ".." }, wantErr: tools.ErrPathNotInWorkspace},
		{name: "dotdot below", dir: func(string) string { return "sub/../../x" }, wantErr: tools.ErrPathNotInWorkspace},
		{name: "absolute outside", dir: func(string) string { return outside }, wantErr: tools.ErrPathNotInWorkspace},
		{name: "symlink outside", dir: func(string) string { return "link-out" }, wantErr: tools.ErrPathNotInWorkspace},
		{name: "missing", dir: func(string) string { return "nope" }, wantErr: tools.ErrFileNotFound},
		{name: "a file", dir: func(string) string { return "sub/file" }, wantErr: tools.ErrInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, root := newShell(t, Options{}, map[string]string{"sub/file": "x"})
			if err := os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "link-in")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "link-out")); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(t.TempDir(), "ran")
			extra := map[string]any{}
			if d := tt.dir(root); d != "" {
				extra["dir_path"] = d
			}
			res, err := run(t.Context(), t, s, fmt.Sprintf("touch %q; pwd", marker), extra, nil)
			_, statErr := os.Stat(marker)
			if tt.wantErr != "" {
				if got := testutil.ErrorType(err); got != tt.wantErr {
					t.Fatalf("error %v (type %q), want type %s", err, got, tt.wantErr)
				}
				if !errors.Is(statErr, os.ErrNotExist) {
					t.Errorf("the command ran although the directory was refused")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if statErr != nil {
				t.Errorf("the command did not run: %v", statErr)
			}
			want := filepath.Join(root, tt.wantDir)
			if got := field(t, res, "Output"); got != want {
				t.Errorf("ran in %q, want %q", got, want)
			}
		})
	}
}

// TestCancel cancels a command that has started children, a grandchild that ignores
// SIGTERM and background jobs of its own, and expects none of them to survive.
func TestCancel(t *testing.T) {
	s, root := newShell(t, Options{}, nil)
	s.grace = 200 * time.Millisecond // the SIGTERM-ignoring process needs SIGKILL
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &sink{on: func(all string) {
		if strings.Contains(all, "ready") {
			cancel()
		}
	}}
	command := `
echo $$ > main
sleep 100 & echo $! > child
bash -c 'echo $$ > grandchild.tmp; mv grandchild.tmp grandchild; exec sleep 100' &
bash -c 'trap "" TERM; sleep 100 & echo $! > stubborn.tmp; mv stubborn.tmp stubborn; wait' &
while [ ! -e grandchild ] || [ ! -e stubborn ]; do sleep 0.01; done
echo ready
wait`
	_, err := run(ctx, t, s, command, nil, out)
	if testutil.ErrorType(err) != tools.ErrCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want a cancelled error", err)
	}
	if !strings.Contains(err.Error(), "ready") {
		t.Errorf("the error lacks the output so far: %v", err)
	}
	for _, name := range []string{"main", "child", "grandchild", "stubborn"} {
		pid := readPID(t, filepath.Join(root, name))
		killLater(t, pid)
		if alive(t, pid) {
			t.Errorf("%s (PID %d) survived the cancellation", name, pid)
		}
	}
}

// TestNoOutputTimeout stops a command that falls silent.
func TestNoOutputTimeout(t *testing.T) {
	s, root := newShell(t, Options{NoOutputTimeout: 300 * time.Millisecond}, nil)
	start := time.Now()
	_, err := run(t.Context(), t, s, "echo started; echo $$ > pid; sleep 30", nil, nil)
	if testutil.ErrorType(err) != tools.ErrTimeout {
		t.Fatalf("error %v, want a timeout", err)
	}
	if elapsed := time.Since(start); elapsed >= 20*time.Second {
		t.Errorf("returned after %s, not long before the command's 30 s", elapsed)
	}
	if !strings.Contains(err.Error(), "started") {
		t.Errorf("the error lacks the output so far: %v", err)
	}
	pid := readPID(t, filepath.Join(root, "pid"))
	killLater(t, pid)
	if alive(t, pid) {
		t.Errorf("the command (PID %d) survived the timeout", pid)
	}
}

// TestNoOutputTimeoutResets runs a command that prints often but runs longer than the
// timeout: output keeps it alive.
func TestNoOutputTimeoutResets(t *testing.T) {
	s, _ := newShell(t, Options{NoOutputTimeout: time.Second}, nil)
	res, err := run(t.Context(), t, s, "for i in $(seq 80); do echo $i; sleep 0.025; done", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := field(t, res, "Exit Code"); got != "0" {
		t.Errorf("Exit Code %s", got)
	}
}

// TestBackgroundPIDs reports the processes a command leaves running in its group and
// does not wait for them or kill them.
func TestBackgroundPIDs(t *testing.T) {
	s, _ := newShell(t, Options{}, nil)
	res, err := run(t.Context(), t, s, "sleep 100 & echo $!", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(field(t, res, "Output"))
	if err != nil {
		t.Fatal(err)
	}
	killLater(t, pid)
	if got := field(t, res, "Background PIDs"); got != strconv.Itoa(pid) {
		t.Errorf("Background PIDs %q, want %d", got, pid)
	}
	if !alive(t, pid) {
		t.Errorf("the background process %d was killed", pid)
	}
}

// TestHugeOutput checks that a 5 MB output reaches the model as its head and tail and
// is saved whole, byte for byte.
func TestHugeOutput(t *testing.T) {
	s, _ := newShell(t, Options{}, nil)
	const n = 700_000
	var want bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	live := &sink{}
	res, err := run(t.Context(), t, s, fmt.Sprintf("seq 1 %d", n), nil, live)
	if err != nil {
		t.Fatal(err)
	}
	out := field(t, res, "Output")
	if len(out) > 41_000 {
		t.Errorf("Output is %d bytes", len(out))
	}
	if !strings.HasPrefix(out, "1\n2\n3\n4\n5\n") || !strings.HasSuffix(out, "\n699999\n700000") {
		t.Errorf("head or tail missing: %q … %q", out[:40], out[len(out)-40:])
	}
	if res.OutputFile == "" || !strings.Contains(out, res.OutputFile) || !strings.Contains(out, "omitted here") {
		t.Fatalf("Output does not say where the full output is: %q", out)
	}
	got, err := os.ReadFile(res.OutputFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("saved output is %d bytes and differs from the %d expected", len(got), want.Len())
	}
	if live.String() != want.String() {
		t.Errorf("live output is %d bytes and differs from the %d expected", len(live.String()), want.Len())
	}
}

// TestOutputFileOnlyWhenShortened: an output that fits leaves no file behind, even when
// its raw form, with escape sequences, is larger than the limit.
func TestOutputFileOnlyWhenShortened(t *testing.T) {
	s, _ := newShell(t, Options{}, nil)
	res, err := run(t.Context(), t, s, `for i in $(seq 3000); do printf '\033[1;31m%05d\033[0m\n' $i; done`, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputFile != "" {
		t.Errorf("OutputFile %q for an output that was not shortened", res.OutputFile)
	}
	if out := field(t, res, "Output"); !strings.HasPrefix(out, "00001\n") || !strings.HasSuffix(out, "\n03000") || strings.Contains(out, "\x1b") {
		t.Errorf("Output %q…", out[:min(len(out), 40)])
	}
	entries, err := os.ReadDir(s.outputDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("files left in the output directory: %v", entries)
	}
}

func TestANSI(t *testing.T) {
	s, _ := newShell(t, Options{}, nil)
	live := &sink{}
	res, err := run(t.Context(), t, s, `printf '\033[31mred\033[0m plain\n\033]0;title\007after\nprogress 10%%\rprogress 50%%\rprogress 100%%\nab\bc\n'`, nil, live)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := field(t, res, "Output"), "red plain\nafter\nprogress 100%\nac"; got != want {
		t.Errorf("Output %q, want %q", got, want)
	}
	// Live output keeps carriage returns and backspaces for a terminal to apply.
	if got, want := live.String(), "red plain\nafter\nprogress 10%\rprogress 50%\rprogress 100%\nab\bc\n"; got != want {
		t.Errorf("live output %q, want %q", got, want)
	}
}

func TestConfirmation(t *testing.T) {
	s, root := newShell(t, Options{}, map[string]string{"sub/f": ""})
	inv, err := testutil.Build(t, tool(t, s, RunToolName), `{"command":"git status | grep -v foo && sudo make install","dir_path":"sub","description":"check"}`)
	if err != nil {
		t.Fatal(err)
	}
	d, err := inv.Confirmation(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := confirm.Details{
		Type:         confirm.TypeExecute,
		Title:        "Confirm Shell Command",
		Command:      "git status | grep -v foo && sudo make install",
		RootCommands: []string{"git", "grep", "make"},
		Directory:    filepath.Join(root, "sub"),
	}
	if d == nil || d.Type != want.Type || d.Title != want.Title || d.Command != want.Command ||
		strings.Join(d.RootCommands, ",") != strings.Join(want.RootCommands, ",") || d.Directory != want.Directory {
		t.Errorf("Details %+v, want %+v", d, want)
	}
	if got := inv.Capabilities().Command; got != want.Command {
		t.Errorf("Capabilities().Command %q, want %q", got, want.Command)
	}
	if got := inv.Describe(); got != want.Command+" [in sub] (check)" {
		t.Errorf("Describe %q", got)
	}

	inv, err = testutil.Build(t, tool(t, s, RunToolName), `{"command":"echo 'unterminated"}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Confirmation(t.Context()); testutil.ErrorType(err) != tools.ErrInvalidParams {
		t.Errorf("unparsable command: error %v, want invalid_tool_params", err)
	}
}

func TestInvalidArgs(t *testing.T) {
	s, _ := newShell(t, Options{}, nil)
	for _, a := range []string{`{}`, `{"command":""}`, `{"command":"  "}`, `{"command":"ls","directory":"x"}`, `{"command":"ls","is_background":"yes"}`,
		`{"command":"ls","is_background":true,"delay_ms":-1}`, `{"command":"ls","delay_ms":100}`, `{"command":"ls","is_background":true,"delay_ms":"100"}`} {
		if _, err := testutil.Build(t, tool(t, s, RunToolName), a); testutil.ErrorType(err) != tools.ErrInvalidParams {
			t.Errorf("%s: error %v, want invalid_tool_params", a, err)
		}
	}
}

func TestBackgroundJobs(t *testing.T) {
	s, root := newShell(t, Options{}, nil)
	s.grace = 5 * time.Second
	call := func(name, a string) (*tools.Result, error) {
		t.Helper()
		return testutil.Call(t.Context(), t, tool(t, s, name), a, nil)
	}

	// offered reports whether the companions are declared (tools.Situational).
	offered := func() bool {
		t.Helper()
		l, lok := tool(t, s, ListToolName).(tools.Situational)
		r, rok := tool(t, s, ReadToolName).(tools.Situational)
		if !lok || !rok {
			t.Fatal("the background tools are not Situational")
		}
		if l.Offered(tools.Situation{}) != r.Offered(tools.Situation{}) {
			t.Fatal("one background tool is offered without the other")
		}
		return l.Offered(tools.Situation{})
	}

	// No jobs yet: nothing to list or read, so neither is declared.
	if offered() {
		t.Error("the background tools are offered before any background command")
	}
	res, err := call(ListToolName, `{}`)
	if err != nil || res.Output != "No background processes found." {
		t.Fatalf("empty list: %v, %+v", err, res)
	}
	if _, err := call(ReadToolName, `{"pid":1}`); testutil.ErrorType(err) != tools.ErrInvalidParams || !strings.Contains(err.Error(), "no background processes have been started") {
		t.Errorf("read without jobs: %v", err)
	}

	// A server-like job that keeps running.
	res, err = run(t.Context(), t, s, `echo hello; echo oops >&2; touch started; exec sleep 100`, map[string]any{"is_background": true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(field(t, res, "Background PIDs"))
	if err != nil {
		t.Fatal(err)
	}
	killLater(t, pid)
	if !offered() {
		t.Error("the background tools are not offered once a background command started")
	}
	if field(t, res, "Process Group PGID") != strconv.Itoa(pid) || !strings.Contains(res.Output, "job bg1") {
		t.Errorf("start result %q", res.Output)
	}
	waitFor(t, filepath.Join(root, "started"))

	// A job that ends on its own.
	res, err = run(t.Context(), t, s, `for l in a b c; do echo $l; done; exit 3`, map[string]any{"is_background": true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs := s.snapshot()
	if len(jobs) != 2 {
		t.Fatalf("%d jobs", len(jobs))
	}
	<-jobs[1].done

	res, err = call(ListToolName, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(res.Output, "\n")
	if len(lines) != 2 ||
		!strings.HasPrefix(lines[0], fmt.Sprintf("- [PID %d] RUNNING: `echo hello; echo oops >&2; touch started; exec sleep 100` (id: bg1, started ", pid)) ||
		!strings.HasPrefix(lines[1], fmt.Sprintf("- [PID %d] EXITED: `for l in a b c; do echo $l; done; exit 3` (Exit Code: 3) (id: bg2, started ", jobs[1].pgid)) {
		t.Errorf("list:\n%s", res.Output)
	}

	for _, tt := range []struct{ args, want string }{
		// The job's output is marked as untrusted context.
		{fmt.Sprintf(`{"pid":%d}`, pid), "Full output of job bg1 (PID " + strconv.Itoa(pid) + ", running):\n" + tools.MarkUntrusted("hello\noops")},
		{`{"id":"bg1","lines":1}`, "Showing the last 1 lines of the output of job bg1 (PID " + strconv.Itoa(pid) + ", running):\n" + tools.MarkUntrusted("oops")},
		{`{"id":"bg2","lines":2}`, "Showing the last 2 lines of the output of job bg2 (PID " + strconv.Itoa(jobs[1].pgid) + ", exited 3):\n" + tools.MarkUntrusted("b\nc")},
		{`{"id":"bg2","delay_ms":1}`, "Full output of job bg2 (PID " + strconv.Itoa(jobs[1].pgid) + ", exited 3):\n" + tools.MarkUntrusted("a\nb\nc")},
	} {
		res, err := call(ReadToolName, tt.args)
		if err != nil {
			t.Errorf("%s: %v", tt.args, err)
			continue
		}
		if res.Output != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.args, res.Output, tt.want)
		}
	}
	for _, a := range []string{`{"id":"bg9"}`, `{"pid":1}`, fmt.Sprintf(`{"pid":%d,"id":"bg2"}`, pid), `{}`, `{"id":"bg1","lines":0}`} {
		_, err := call(ReadToolName, a)
		if testutil.ErrorType(err) != tools.ErrInvalidParams {
			t.Errorf("%s: error %v, want invalid_tool_params", a, err)
			continue
		}
		if a != `{"id":"bg1","lines":0}` && (!strings.Contains(err.Error(), "bg1 (pid") || !strings.Contains(err.Error(), "bg2 (pid")) {
			t.Errorf("%s: the error does not list the known jobs: %v", a, err)
		}
	}

	// Close stops the running job's whole group.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if alive(t, pid) {
		t.Errorf("job bg1 (PID %d) survived Close", pid)
	}
	if st := jobs[0].status(); st != "killed by SIGTERM" {
		t.Errorf("bg1 status after Close: %s", st)
	}
	if _, err := run(t.Context(), t, s, "true", nil, nil); testutil.ErrorType(err) != tools.ErrExecutionFailed {
		t.Errorf("run after Close: %v", err)
	}
	if _, err := run(t.Context(), t, s, "true", map[string]any{"is_background": true}, nil); testutil.ErrorType(err) != tools.ErrExecutionFailed {
		t.Errorf("background run after Close: %v", err)
	}
}

// TestCloseKillsJobGroup: Close ends what a background job started in its group, even
// after the job's shell has exited, and a job that ignores SIGTERM.
func TestCloseKillsJobGroup(t *testing.T) {
	s, root := newShell(t, Options{}, nil)
	s.grace = 200 * time.Millisecond
	for _, command := range []string{
		`sleep 100 & echo $! > left.tmp; mv left.tmp left`,
		`trap "" TERM; echo $$ > stubborn.tmp; mv stubborn.tmp stubborn; while :; do sleep 1; done`,
	} {
		if _, err := run(t.Context(), t, s, command, map[string]any{"is_background": true}, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, filepath.Join(root, "left"))
	waitFor(t, filepath.Join(root, "stubborn"))
	left, stubborn := readPID(t, filepath.Join(root, "left")), readPID(t, filepath.Join(root, "stubborn"))
	killLater(t, left)
	killLater(t, stubborn)
	<-s.snapshot()[0].done
	res, err := testutil.Call(t.Context(), t, tool(t, s, ListToolName), `{}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "EXITED") || !strings.Contains(res.Output, "1 process(es) of its group still running") {
		t.Errorf("list:\n%s", res.Output)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, pid := range map[string]int{"left behind": left, "stubborn": stubborn} {
		if alive(t, pid) {
			t.Errorf("%s process %d survived Close", name, pid)
		}
	}
}

// waitFor waits until a command has created the file name. It synchronises with the
// command; the limit only turns a broken command into a failure instead of a hang.
func waitFor(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(name); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHideEnv: the variables HideEnv names are not in the environment of commands,
// foreground or background; the others are, and so are Options.Env's entries.
func TestHideEnv(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "marker-secret")
	t.Setenv("AGENTLS_TEST_OTHER", "marker-other")
	tests := []struct {
		name   string
		hide   []string
		env    []string
		want   []string
		absent []string
	}{
		{"nothing hidden", nil, nil, []string{"GEMINI_API_KEY=marker-secret", "AGENTLS_TEST_OTHER=marker-other"}, nil},
		{"key hidden", []string{"GEMINI_API_KEY", "UNSET_VARIABLE"}, nil, []string{"AGENTLS_TEST_OTHER=marker-other", "AGENTLS=1"},
			[]string{"marker-secret"}},
		{"set again through Env", []string{"GEMINI_API_KEY"}, []string{"GEMINI_API_KEY=chosen"}, []string{"GEMINI_API_KEY=chosen"},
			[]string{"marker-secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls int
			s, root := newShell(t, Options{Env: tt.env, HideEnv: func() []string { calls++; return tt.hide }}, nil)
			res, err := run(t.Context(), t, s, "env", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := run(t.Context(), t, s, "env > bg.tmp && mv bg.tmp bg.env", map[string]any{"is_background": true}, nil); err != nil {
				t.Fatal(err)
			}
			waitFor(t, filepath.Join(root, "bg.env"))
			bg, err := os.ReadFile(filepath.Join(root, "bg.env"))
			if err != nil {
				t.Fatal(err)
			}
			for where, out := range map[string]string{"foreground": field(t, res, "Output"), "background": string(bg)} {
				lines := strings.Split(out, "\n")
				for _, w := range tt.want {
					if !slices.Contains(lines, w) {
						t.Errorf("%s: %s missing from the environment:\n%s", where, w, out)
					}
				}
				for _, a := range tt.absent {
					if strings.Contains(out, a) {
						t.Errorf("%s: %s in the environment:\n%s", where, a, out)
					}
				}
			}
			if calls != 2 {
				t.Errorf("HideEnv called %d times for 2 commands", calls)
			}
		})
	}
}
