package shell

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// TestPersistentShell runs sequences of commands in one session's persistent shell and
// checks what carries from one to the next: the working directory and exported
// variables, not unexported ones; dir_path still names the directory of one call; a
// directory outside the workspace is not kept; without a session nothing carries.
func TestPersistentShell(t *testing.T) {
	type step struct {
		command string
		dirPath string
		// want is the command's output; note, a part of the note after it.
		want, note string
	}
	cases := []struct {
		name       string
		persistent bool
		steps      []step
	}{
		{"cd carries", true, []step{
			{command: "cd sub", note: "working directory is now sub"},
			{command: "pwd", want: "ROOT/sub"},
			{command: "cd deeper && pwd", want: "ROOT/sub/deeper", note: "now sub/deeper"},
			{command: "cat f.txt", want: "deep"},
			{command: "cd ..", note: "now sub"},
			{command: "cd ..", note: "now (root)"},
			{command: "pwd", want: "ROOT"},
		}},
		{"exported variables carry, plain ones do not", true, []step{
			{command: "export GREETING='hello world'; LOCAL=1; export GONE=x"},
			{command: `echo "$GREETING|${LOCAL:-unset}|$GONE"`, want: "hello world|unset|x"},
			{command: "unset GONE; export AGENTLS=changed"},
			{command: `echo "${GONE-unset}|$AGENTLS|$GREETING"`, want: "unset|changed|hello world"},
			{command: "unset AGENTLS"},
			{command: `echo "${AGENTLS-unset}"`, want: "unset"},
		}},
		{"exit and failure still carry", true, []step{
			{command: "cd sub; export A=1; exit 3"},
			{command: `echo "$A $(basename "$PWD")"`, want: "1 sub"},
			{command: "cd deeper; false"},
			{command: "pwd", want: "ROOT/sub/deeper"},
		}},
		{"dir_path runs one call elsewhere, and a cd there carries", true, []step{
			{command: "cd sub"},
			{command: "pwd", dirPath: ".", want: "ROOT"},
			{command: "pwd", want: "ROOT/sub"},
		}},
		{"leaving the workspace resets to the root", true, []step{
			{command: "cd /", note: "outside the workspace, so the shell's working directory was reset to the workspace root"},
			{command: "pwd", want: "ROOT"},
		}},
		{"a directory removed by the command resets to the root", true, []step{
			{command: "mkdir gone && cd gone"},
			{command: "rmdir ../gone", note: "gone, which no longer exists, so the shell's working directory was reset"},
			{command: "pwd", want: "ROOT"},
		}},
		{"a directory removed by another command resets to the root", true, []step{
			{command: "mkdir gone && cd gone"},
			{command: "rmdir gone", dirPath: "."},
			{command: "pwd", want: "ROOT", note: "no longer exists, so the shell went back to the workspace root"},
		}},
		{"not persistent", false, []step{
			{command: "cd sub; export A=1"},
			{command: `echo "$PWD|${A:-unset}"`, want: "ROOT|unset"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, root := newShell(t, Options{}, map[string]string{"sub/deeper/f.txt": "deep\n"})
			ctx := t.Context()
			if tc.persistent {
				ctx = WithSession(ctx, NewSession())
			}
			for i, st := range tc.steps {
				extra := map[string]any{}
				if st.dirPath != "" {
					extra["dir_path"] = st.dirPath
				}
				res, err := run(ctx, t, s, st.command, extra, nil)
				if err != nil {
					t.Fatalf("step %d %q: %v", i, st.command, err)
				}
				if want := strings.ReplaceAll(st.want, "ROOT", root); st.want != "" && res.Display != want {
					t.Errorf("step %d %q: output %q, want %q", i, st.command, res.Display, want)
				}
				if st.note != "" && (!strings.Contains(res.Output, "\n\nNote: ") || !strings.Contains(res.Output, st.note)) {
					t.Errorf("step %d %q: result lacks the note %q:\n%s", i, st.command, st.note, res.Output)
				}
			}
		})
	}
}

// TestPersistentShellRestart checks that a cancelled or silent command leaves no process
// behind, and that the shell starts afresh, saying so with the next result.
func TestPersistentShellRestart(t *testing.T) {
	for _, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			opts := Options{}
			if how == "timeout" {
				opts.NoOutputTimeout = 300 * time.Millisecond
			}
			s, root := newShell(t, opts, map[string]string{"sub/x": ""})
			s.grace = 200 * time.Millisecond
			p := NewSession()
			ctx := WithSession(t.Context(), p)
			if _, err := run(ctx, t, s, "cd sub; export KEPT=1", nil, nil); err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			out := &sink{on: func(all string) {
				if how == "cancel" && strings.Contains(all, "ready") {
					cancel()
				}
			}}
			_, err := run(cctx, t, s, "sleep 100 & echo $! > child; echo ready; wait", nil, out)
			want := map[string]tools.ErrorType{"cancel": tools.ErrCancelled, "timeout": tools.ErrTimeout}[how]
			if got := testutil.ErrorType(err); got != want {
				t.Fatalf("error %v, want %s", err, want)
			}
			pid := readPID(t, filepath.Join(root, "sub", "child"))
			killLater(t, pid)
			if alive(t, pid) {
				t.Errorf("the command's child (PID %d) survived", pid)
			}
			res, err := run(ctx, t, s, `echo "$PWD|${KEPT:-unset}"`, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Display != root+"|unset" {
				t.Errorf("after the restart: %q, want the root and no variables", res.Display)
			}
			if !strings.Contains(res.Output, "Note: The session's shell was restarted because its last command") {
				t.Errorf("no restart note:\n%s", res.Output)
			}
			if res, _ := run(ctx, t, s, "true", nil, nil); strings.Contains(res.Output, "restarted") {
				t.Errorf("the restart note is repeated:\n%s", res.Output)
			}
		})
	}
}

// TestPersistentShellConsent checks that the analysis knows the carried directory and
// variables: a write target resolves against the carried directory, carried variables
// are shown in front of the command (so an "always" for the bare command does not
// cover them), and a command whose shell changed after it was proposed does not run.
func TestPersistentShellConsent(t *testing.T) {
	s, root := newShell(t, Options{}, map[string]string{"sub/x": ""})
	p := NewSession()
	ctx := WithSession(t.Context(), p)
	confirmation := func(command string) *confirm.Details {
		t.Helper()
		inv, err := testutil.Build(t, tool(t, s, RunToolName), args(t, map[string]any{"command": command}))
		if err != nil {
			t.Fatal(err)
		}
		d, err := inv.Confirmation(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := confirmation("echo hi > out.txt"); d.Directory != root || d.Command != "echo hi > out.txt" {
		t.Errorf("fresh shell: directory %q command %q", d.Directory, d.Command)
	}
	if _, err := run(ctx, t, s, "cd sub && export GOFLAGS=-x", nil, nil); err != nil {
		t.Fatal(err)
	}
	d := confirmation("go test > ../../escape.txt")
	if d.Directory != filepath.Join(root, "sub") {
		t.Errorf("directory %q, want the carried %s", d.Directory, filepath.Join(root, "sub"))
	}
	if d.Command != "export GOFLAGS=-x; go test > ../../escape.txt" {
		t.Errorf("command %q does not show the carried variable", d.Command)
	}
	a, err := confirm.Analyze(d.Command, d.Directory, []string{root})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(a.Dangerous, "\n"), "writes outside the workspace") {
		t.Errorf("a write two levels up from sub is not seen as leaving the workspace: %+v", a)
	}
	// An "always" for go does not cover go with the carried GOFLAGS.
	policy, err := confirm.NewPolicy(confirm.ModeDefault, nil, func() []string { return []string{root} })
	if err != nil {
		t.Fatal(err)
	}
	policy.Remember(confirm.Call{Tool: RunToolName, Details: &confirm.Details{Type: confirm.TypeExecute, Command: "go test", Directory: root}}, confirm.ProceedAlways)
	if v := policy.Decide(confirm.Call{Tool: RunToolName, Details: confirmation("go test")}); v.Decision != confirm.Ask {
		t.Errorf("go test with a carried GOFLAGS: %v, want ask", v)
	}

	// Proposed in sub; an earlier command moves the shell before it runs.
	inv, err := testutil.Build(t, tool(t, s, RunToolName), args(t, map[string]any{"command": "touch marker"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Confirmation(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, t, s, "cd ..", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, err = inv.Execute(ctx, &sink{})
	if testutil.ErrorType(err) != tools.ErrStaleContent || !strings.Contains(err.Error(), "was not run") {
		t.Errorf("command proposed before the shell moved: %v, want it refused", err)
	}
	if exists(filepath.Join(root, "marker")) || exists(filepath.Join(root, "sub", "marker")) {
		t.Error("the refused command ran")
	}
}
