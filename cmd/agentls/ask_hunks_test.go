package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/fakegemini"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/settings"
)

// hunkRequest is an edit with three hunks.
func hunkRequest() confirm.Request {
	diff := "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n@@ -10,7 +10,7 @@\n x\n x\n x\n-j\n+J\n x\n x\n x\n@@ -20,4 +20,4 @@\n x\n x\n x\n-t\n+T\n"
	d := confirm.Details{Type: confirm.TypeEdit, Title: "Write f", Path: "/w/f",
		Diff: diff, Hunks: []confirm.Hunk{{Index: 0}, {Index: 1}, {Index: 2}}}
	// The choices every front end offers, as the policy makes them.
	p, err := confirm.NewPolicy("", nil, nil)
	if err != nil {
		panic(err)
	}
	d.Choices = p.Offer(confirm.Call{Tool: "write_file", Details: &d})
	return confirm.Request{ToolName: "write_file", Details: d}
}

// TestAskPerHunk: on the terminal an edit of several hunks can be answered hunk by
// hunk, as git add -p does; the offered choices are answered by number or letter.
func TestAskPerHunk(t *testing.T) {
	single := hunkRequest()
	single.Details.Hunks = single.Details.Hunks[:1]
	single.Details.Diff = "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n"
	tests := []struct {
		name     string
		req      confirm.Request
		in       string
		want     confirm.Answer
		shown    []string
		notShown string
	}{
		{"yes no yes", hunkRequest(), "p\ny\nn\ny\n", confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{0, 2}},
			[]string{"[p] choose among the 3 hunks", "Apply hunk 1 of 3?", "@@ -10,7 +10,7 @@\n x\n x\n x\n-j\n+J\n", "Apply hunk 3 of 3?"}, ""},
		{"no, then all the rest", hunkRequest(), "p\nn\na\n", confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{1, 2}},
			[]string{"Apply hunk 2 of 3?"}, "Apply hunk 3 of 3?"},
		{"none of the rest", hunkRequest(), "p\nd\n", confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{}},
			[]string{"Apply hunk 1 of 3?"}, "Apply hunk 2 of 3?"},
		{"input ends: the rest left out", hunkRequest(), "p\ny\n", confirm.Answer{Outcome: confirm.ProceedOnce, AcceptedHunks: []int{0}}, nil, ""},
		{"one hunk: no per-hunk choice", single, "p\n", confirm.Answer{Outcome: confirm.Cancel}, []string{"[y] Allow once"}, "[p]"},
		{"save by its letter", hunkRequest(), "s\n", confirm.Answer{Choice: confirm.ChoiceAlwaysSave, Outcome: confirm.ProceedAlwaysTool},
			[]string{"[s] Always allow write_file, and save it in your settings"}, ""},
		{"every edit by its letter", hunkRequest(), "a\n", confirm.Answer{Choice: confirm.ChoiceAlways, Outcome: confirm.ProceedAlways},
			[]string{"[a] Allow every edit for this session"}, ""},
		{"reject always", hunkRequest(), "r\n", confirm.Answer{Choice: confirm.ChoiceRejectAlways, Outcome: confirm.RejectAlways},
			[]string{"[r] Always reject write_file for this session"}, ""},
		{"anything else is no", hunkRequest(), "maybe\n", confirm.Answer{Outcome: confirm.Cancel}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			a := &terminalAsker{in: strings.NewReader(tt.in), out: &out}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // a hang guard
			defer cancel()
			ans, err := a.Ask(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if ans.Outcome != tt.want.Outcome || ans.Choice != tt.want.Choice || !slices.Equal(ans.AcceptedHunks, tt.want.AcceptedHunks) ||
				(ans.AcceptedHunks == nil) != (tt.want.AcceptedHunks == nil) {
				t.Errorf("Ask = %+v, want %+v", ans, tt.want)
			}
			for _, s := range tt.shown {
				if !strings.Contains(out.String(), s) {
					t.Errorf("printed %q, want %q", out.String(), s)
				}
			}
			if tt.notShown != "" && strings.Contains(out.String(), tt.notShown) {
				t.Errorf("printed %q, want no %q", out.String(), tt.notShown)
			}
		})
	}
}

// ttyRun runs agentls with args on a terminal in root, with the user configuration in
// cfg and env added to its environment, answering each prompt that contains the key of a step with its line.
func ttyRun(t *testing.T, root, cfg string, env []string, steps [][2]string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(agentlsBinary(t), args...)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "HOME="+cfg), env...)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out testutil.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, tty) // ends with EIO once the process exits
		close(copied)
	}()
	answered := map[string]int{} // by key: each answer waits for a prompt of its own
	for _, s := range steps {
		deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed check
		for strings.Count(out.String(), s[0]) <= answered[s[0]] {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("no %q on the terminal; got %q", s[0], out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		answered[s[0]]++
		io.WriteString(tty, s[1]+"\n")
	}
	err = cmd.Wait()
	<-copied
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

// TestRunPerHunkOnTerminal: `agentls run write_file` on a terminal, answered hunk by
// hunk, writes only the hunk taken; "s" saves the approval of a shell command in the
// user's settings.
func TestRunPerHunkOnTerminal(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	var old, proposed strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&old, "line %d\r\n", i)
		if i == 2 || i == 18 {
			fmt.Fprintf(&proposed, "LINE %d\n", i)
		} else {
			fmt.Fprintf(&proposed, "line %d\n", i)
		}
	}
	path := filepath.Join(root, "f.txt")
	if err := os.WriteFile(path, []byte(old.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := fmt.Sprintf(`{"file_path": "f.txt", "content": %q}`, proposed.String())
	out, code := ttyRun(t, root, cfg, nil, [][2]string{{"Allow?", "p"}, {"Apply hunk", "n"}, {"Apply hunk", "y"}}, "run", "write_file", args)
	if code != 0 || !strings.Contains(out, "The user accepted hunk 2 of 2; hunk 1 was not applied") {
		t.Fatalf("exit %d, terminal %q", code, out)
	}
	got, _ := os.ReadFile(path)
	if want := strings.Replace(old.String(), "line 18\r\n", "LINE 18\r\n", 1); string(got) != want {
		t.Errorf("f.txt is %q, want %q", got, want)
	}

	out, code = ttyRun(t, root, cfg, nil, [][2]string{{"Allow?", "s"}}, "run", "run_shell_command", `{"command": "echo saved"}`)
	if code != 0 || !strings.Contains(out, "Saved in") {
		t.Fatalf("exit %d, terminal %q", code, out)
	}
	rules, err := settings.FileRules(filepath.Join(cfg, "agentls", "settings.json"))
	if err != nil || len(rules) != 1 || rules[0].ToolName != "run_shell_command" || !slices.Equal(rules[0].CommandPrefix, []string{"echo"}) {
		t.Fatalf("user rules %+v, %v", rules, err)
	}
	// Saved: the next run is not asked.
	if got := agentlsWith(t, root, cfg, nil, "run", "run_shell_command", `{"command": "echo again"}`); got.code != 0 || !strings.Contains(got.stdout, "again") {
		t.Errorf("run after saving: %+v", got)
	}
}

// TestPromptPerHunkOnTerminal: `agentls prompt` on a terminal offers the per-hunk
// choice for a model's edit; the model gets the note of which hunks were taken.
func TestPromptPerHunkOnTerminal(t *testing.T) {
	root, cfg := workspaceDir(t), t.TempDir()
	var old, proposed strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
		if i == 2 || i == 18 {
			fmt.Fprintf(&proposed, "LINE %d\n", i)
		} else {
			fmt.Fprintf(&proposed, "line %d\n", i)
		}
	}
	path := filepath.Join(root, "f.txt")
	if err := os.WriteFile(path, []byte(old.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"file_path": "f.txt", "content": proposed.String()})
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{
		// The model reads f.txt first: its edit of a file it has not read is refused.
		{Calls: []clients.ScriptCall{{Name: "read_file", Args: json.RawMessage(`{"file_path": "f.txt"}`)}}},
		{Calls: []clients.ScriptCall{{Name: "write_file", Args: args}}},
		{Text: "done"},
	}})
	defer srv.Close()
	env := []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + srv.URL, "XDG_STATE_HOME=" + filepath.Join(cfg, "state")}
	out, code := ttyRun(t, root, cfg, env, [][2]string{{"Allow?", "p"}, {"Apply hunk", "y"}, {"Apply hunk", "n"}}, "prompt", "capitalize")
	if code != 0 {
		t.Fatalf("exit %d, terminal %q", code, out)
	}
	got, _ := os.ReadFile(path)
	if want := strings.Replace(old.String(), "line 2\n", "LINE 2\n", 1); string(got) != want {
		t.Errorf("f.txt is %q, want %q", got, want)
	}
	told := false
	for _, r := range srv.Requests() {
		told = told || strings.Contains(string(r.Body), "The user accepted hunk 1 of 2; hunk 2 was not applied")
	}
	if !told {
		t.Errorf("the model was not told which hunks were taken; terminal %q", out)
	}
}

// TestTerminalRejectAlways: on the terminal, "r" rejects the command and every later
// call of its program in the run without asking; the model is told so.
func TestTerminalRejectAlways(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	touch := func(file string) clients.Turn {
		args, _ := json.Marshal(map[string]string{"command": "touch " + file})
		return clients.Turn{Calls: []clients.ScriptCall{{Name: "run_shell_command", Args: args}}}
	}
	srv := fakegemini.Start(clients.Script{Turns: []clients.Turn{touch("one"), touch("two"), {Text: "gave up"}}})
	defer srv.Close()
	env := []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + srv.URL, "XDG_STATE_HOME=" + filepath.Join(cfg, "state")}
	out, code := ttyRun(t, root, cfg, env, [][2]string{{"Always reject touch for this session", "r"}}, "prompt", "touch two files")
	if code != 0 {
		t.Fatalf("exit %d, terminal %q", code, out)
	}
	if n := strings.Count(out, "Allow?"); n != 1 {
		t.Errorf("asked %d times, want once: %q", n, out)
	}
	for _, f := range []string{"one", "two"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s was made after reject always", f)
		}
	}
	told := false
	for _, r := range srv.Requests() {
		told = told || strings.Contains(string(r.Body), "the user rejected the command") && strings.Contains(string(r.Body), "for the rest of this session")
	}
	if !told {
		t.Errorf("the model was not told the second call was rejected; terminal %q", out)
	}
}
