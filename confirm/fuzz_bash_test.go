package confirm

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fuzzPrefixes are the commands the fuzzed policy's allow rule names.
var fuzzPrefixes = []string{"echo", "ls", "git status", "cat", "printf %s"}

// FuzzPolicyAllows is a differential test of the analysis against bash itself: for a
// line that the policy allows under an allow rule naming fuzzPrefixes, running the line
// under bash runs only commands the rule names. bash runs restricted (no command names
// with slashes, no redirections to files, no cd or exec) with a PATH of stubs and with
// variables x and y whose values run id when evaluated as code, and traces every simple
// command it runs, builtins and expansions' commands included, to a descriptor of its
// own; each traced command must start with an allowed prefix.
func FuzzPolicyAllows(f *testing.F) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("bash is not installed")
	}
	for _, line := range []string{
		"echo hi", "ls -la | cat", "git status --short && echo done", "echo $((1 + 2))",
		"echo ${x:-default}", "cat f || echo missing", "echo a; ls; git status",
		"printf %s x", "echo \"$HOME\" '$(id)'", "for i in 1 2; do echo $i; done",
		"if ls; then echo y; else echo n; fi", "case x in x) echo x;; esac",
		"echo $((x))", "echo ${y@P}", "echo ${z:x}", "x='a[$(id)]'; echo $((x))", "echo ${!x}", "echo ${x@P}",
		"[[ $x -eq 1 ]] && echo", "echo $[x]", "let x; echo", "eval echo hi",
		"trap 'id' EXIT; echo", "PATH=. ls", "env ls", "command ls", "timeout 1 ls",
		"echo `id`", "cat <(id)", "ls $(id)", "git -c core.pager=id status",
		"printf -v x %s 1", "echo ${a[x]}", "echo ${y:x}", "read x <<< 1; echo",
		"f() { id; }; echo", "{ echo; }", "(echo)", "echo | cat | ls",
		"x=1 echo", "declare x=1; echo", "echo hi >&2", "ls -- -x", "echo \\$(id)",
		// What a red-team pass found.
		"echo hi # \\\nid", "cat <<EOF\nEO\\\nF\nid\nEOF", "for RANDOM in $x; do echo; done",
		"for y in x; do echo ${!y[0]}; done", "eval -- id", "echo id | xargs env",
	} {
		f.Add(line)
	}
	stubs := f.TempDir()
	for _, name := range []string{"ls", "git", "cat", "id", "rm", "touch", "env", "timeout", "sh", "bash", "python3"} {
		script := "#!/bin/sh\nexit 0\n"
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(script), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, 0) || len(line) > 512 {
			return
		}
		dir := t.TempDir()
		p, err := NewPolicy(ModeDefault, []Rule{{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: fuzzPrefixes}}, func() []string { return []string{dir} })
		if err != nil {
			t.Fatal(err)
		}
		c := shellCall(line)
		c.Details.Directory = dir
		if p.Decide(c).Decision != Allow {
			return
		}
		traced := runTraced(t, bash, stubs, dir, line)
		for _, cmd := range traced {
			// A wrapper (timeout 1 ls) is traced as itself; the command it runs is not
			// traced, and the policy judges the traced text on its own.
			if !hasAnyPrefix(fuzzPrefixes, cmd) && p.Decide(shellCall(cmd)).Decision != Allow {
				t.Fatalf("the policy allowed %q under a rule for %q, but bash ran %q (trace %q)", line, fuzzPrefixes, cmd, traced)
			}
		}
	})
}

// hasAnyPrefix reports whether cmd starts with one of prefixes at a word boundary.
func hasAnyPrefix(prefixes []string, cmd string) bool {
	for _, p := range prefixes {
		if cmd == p || strings.HasPrefix(cmd, p+" ") {
			return true
		}
	}
	return false
}

// runTraced runs line under restricted bash in dir and returns the simple commands it
// traced, without the trace's "+" prefixes; tests, arithmetic commands, assignments and
// the heads of for, case and select, which are not simple commands, are left out.
func runTraced(t *testing.T, bash, stubs, dir, line string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-r", "-x", "-c", line)
	cmd.Dir = dir
	// x and y hold values that bash runs id for when it evaluates them as code.
	cmd.Env = []string{"PATH=" + stubs, "HOME=" + dir, "BASH_XTRACEFD=3", "PS4=+ ", "x=a[$(id)]", "y=$(id)"}
	cmd.ExtraFiles = []*os.File{w}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Fatal(err)
	}
	w.Close()
	var trace bytes.Buffer
	done := make(chan struct{})
	go func() {
		trace.ReadFrom(r)
		close(done)
	}()
	cmd.Wait() // the exit status is the line's business
	<-done
	var out []string
	sc := bufio.NewScanner(&trace)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "+") {
			continue // a traced word spanning lines
		}
		l = strings.TrimLeft(l, "+")
		l = strings.TrimPrefix(l, " ")
		if l == "" || strings.HasPrefix(l, "[[") || strings.HasPrefix(l, "((") || isAssignment(strings.Fields(l)[0]) ||
			strings.HasPrefix(l, "for ") || strings.HasPrefix(l, "case ") || strings.HasPrefix(l, "select ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// TestRunTraced checks the fuzz target's harness: bash traces what it runs, expansions
// included, and x holds a value that runs id when evaluated as code.
func TestRunTraced(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	stubs := t.TempDir()
	if err := os.WriteFile(filepath.Join(stubs, "id"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string][]string{
		"echo hi; echo $((x))":  {"echo hi", "id"},
		"echo $(id) | cat":      {"id"},
		"echo ${y@P}":           {"id"},
		"[[ 1 -eq 1 ]] && echo": {"echo"},
	} {
		got := runTraced(t, bash, stubs, t.TempDir(), line)
		for _, w := range want {
			if !slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, w) }) {
				t.Errorf("runTraced(%q) = %q, want a trace of %q", line, got, w)
			}
		}
	}
}
