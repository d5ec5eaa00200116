package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// These tests run issue 22's analysis classes through the real shell tool, scheduler
// and policy and real bash and programs, as the consent tests above do: under the rule
// being tested the payload must not run (the call is asked, and refused), and in yolo
// mode without rules the same call must run it, which shows the payload is live.

// runCall runs one run_shell_command call with the command line and dir_path under a
// scheduler set up as s, in the workspace rooted at root.
func runCall(t *testing.T, s consentSetup, root, line, dir string) tools.CallResult {
	t.Helper()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	sh := New(ws, Options{OutputDir: t.TempDir()})
	t.Cleanup(func() { sh.Close() })
	reg := tools.NewRegistry(nil, s.filter)
	for _, tl := range sh.Tools() {
		reg.Register(tl)
	}
	policy, err := confirm.NewPolicy(s.mode, s.rules, ws.Roots)
	if err != nil {
		t.Fatal(err)
	}
	sched := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: &refuser{}, OutputDir: t.TempDir()})
	args := map[string]string{"command": line}
	if dir != "" {
		args["dir_path"] = dir
	}
	data, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return sched.RunOne(context.Background(), tools.Request{CallID: "c1", Name: RunToolName, Args: data})
}

// gitRun runs git in dir for a test's set-up.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, out)
	}
}

// classFiles are the workspace's files for the option and operand classes: a script
// the repository ships, and inputs for the programs that run it or write a file.
var classFiles = map[string]string{
	"payload.sh": "#!/bin/sh\n: > \"${0%/*}/M\"\ncat \"$@\" 2>/dev/null\n",
	"a.txt":      "hello\n",
	"notes.txt":  "line\n",
	"dump.hex":   "00000000: 6869 0a                                  hi.\n",
}

// classWorkspace makes a git repository holding classFiles and x.tar.
func classWorkspace(t *testing.T) string {
	t.Helper()
	_, root := testutil.Workspace(t, classFiles)
	if err := os.Chmod(filepath.Join(root, "payload.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-C", root, "-cf", filepath.Join(root, "x.tar"), "a.txt").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	gitRun(t, root, "init", "-q", ".")
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-qm", "init")
	return root
}

// TestConsentProgramOptionsRun: options of allowed programs that run a program the
// repository ships, and operands that write outside the workspace, are asked about
// under rules for those programs.
func TestConsentProgramOptionsRun(t *testing.T) {
	rule := confirm.Rule{ToolName: RunToolName, Decision: confirm.Allow,
		CommandPrefix: []string{"rg", "git grep", "git ls-remote", "tar", "sort", "split", "uniq", "xxd"}}
	runsCases := []consentCase{
		{line: `rg --pre ./payload.sh hello a.txt`, needs: []string{"rg"}},
		{line: `rg hello --pre=./payload.sh a.txt`, needs: []string{"rg"}},
		{line: `git grep -O./payload.sh hello`},
		{line: `git grep --open-files-in-pager=./payload.sh hello`},
		{line: `git ls-remote --upload-pack=./payload.sh .`},
		{line: `tar -tf x.tar -I ./payload.sh`},
		{line: `tar --use-compress-program ./payload.sh -tf x.tar`},
		{line: `tar -xf x.tar --to-command=./payload.sh`},
		{line: `split -n 1 --filter=./payload.sh a.txt`},
	}
	for _, c := range runsCases {
		t.Run(c.line, func(t *testing.T) {
			for _, p := range c.needs {
				if _, err := exec.LookPath(p); err != nil {
					t.Skipf("%s is not installed", p)
				}
			}
			root := classWorkspace(t)
			res := runCall(t, consentSetup{mode: confirm.ModeYolo}, root, c.line, "")
			if !exists(inRoot(root)) {
				t.Fatalf("control: in yolo mode the payload did not run (status %s, output %q, error %+v)", res.Status, res.Output, res.Error)
			}
			root = classWorkspace(t)
			res = runCall(t, consentSetup{mode: confirm.ModeDefault, rules: []confirm.Rule{rule}}, root, c.line, "")
			if exists(inRoot(root)) || res.Status != tools.StatusCancelled {
				t.Errorf("under a rule for the program: marker %v, status %s; want the call asked, refused and nothing run", exists(inRoot(root)), res.Status)
			}
		})
	}

	// Operands and options that write a file outside the workspace.
	for _, form := range []string{
		`uniq notes.txt %s`,
		`xxd -r dump.hex %s`,
		`sort -o %s notes.txt`,
		`sort notes.txt --output=%s`,
		`split -l 1 notes.txt %s`,
		`tar -cf %s a.txt`,
	} {
		t.Run(form, func(t *testing.T) {
			outside := filepath.Join(t.TempDir(), "bashrc")
			line := fmt.Sprintf(form, outside)
			written := func() bool {
				m, _ := filepath.Glob(outside + "*")
				return len(m) > 0
			}
			root := classWorkspace(t)
			res := runCall(t, consentSetup{mode: confirm.ModeYolo}, root, line, "")
			if !written() {
				t.Fatalf("control: in yolo mode nothing was written outside (status %s, output %q)", res.Status, res.Output)
			}
			for _, m := range must(filepath.Glob(outside + "*")) {
				os.Remove(m)
			}
			res = runCall(t, consentSetup{mode: confirm.ModeDefault, rules: []confirm.Rule{rule}}, root, line, "")
			if written() || res.Status != tools.StatusCancelled {
				t.Errorf("under a rule for the program: written %v, status %s; want the call asked, refused and nothing written", written(), res.Status)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestConsentGitRepositoryRuns: git status where the repository ships an embedded bare
// repository (or a .git file pointing at one) runs its core.fsmonitor; under a rule
// for git status it is asked about.
func TestConsentGitRepositoryRuns(t *testing.T) {
	setup := func(t *testing.T) string {
		_, root := testutil.Workspace(t, map[string]string{"a.txt": "a\n"})
		gitRun(t, root, "init", "-q", ".")
		evil := filepath.Join(root, "fixtures", "evil.git")
		for _, d := range []string{"objects", "refs/heads"} {
			if err := os.MkdirAll(filepath.Join(evil, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		testutil.WriteFiles(t, root, map[string]string{
			"fixtures/evil.git/HEAD":   "ref: refs/heads/main\n",
			"fixtures/evil.git/config": fmt.Sprintf("[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \"touch '%s'; false\"\n", inRoot(root)),
			"pointer/.git":             "gitdir: ../fixtures/evil.git\n",
		})
		gitRun(t, root, "add", "a.txt")
		gitRun(t, root, "commit", "-qm", "init")
		return root
	}
	rule := confirm.Rule{ToolName: RunToolName, Decision: confirm.Allow, CommandPrefix: []string{"git status", "cd"}}
	for _, c := range []struct{ line, dir string }{
		{"git status", "fixtures/evil.git"},
		{"git status", "fixtures/evil.git/objects"},
		{"cd fixtures/evil.git && git status", ""},
		{"git status", "pointer"},
	} {
		t.Run(c.line+" in "+c.dir, func(t *testing.T) {
			root := setup(t)
			res := runCall(t, consentSetup{mode: confirm.ModeYolo}, root, c.line, c.dir)
			if !exists(inRoot(root)) {
				t.Fatalf("control: in yolo mode core.fsmonitor did not run (status %s, output %q)", res.Status, res.Output)
			}
			root = setup(t)
			res = runCall(t, consentSetup{mode: confirm.ModeDefault, rules: []confirm.Rule{rule}}, root, c.line, c.dir)
			if exists(inRoot(root)) || res.Status != tools.StatusCancelled {
				t.Errorf("under a rule for git status: marker %v, status %s; want the call asked, refused and nothing run", exists(inRoot(root)), res.Status)
			}
		})
	}
	// The workspace's own repository is git's, and the rule allows it.
	root := setup(t)
	res := runCall(t, consentSetup{mode: confirm.ModeDefault, rules: []confirm.Rule{rule}}, root, "git status", "")
	if res.Status != tools.StatusSuccess || exists(inRoot(root)) {
		t.Errorf("git status in the workspace's repository: status %s, marker %v; want it run", res.Status, exists(inRoot(root)))
	}
}

// TestConsentNetworkRedirectRuns: cat < /dev/tcp/127.0.0.1/PORT connects to a loopback
// service; under a rule for cat, or a blanket allow rule, it is asked about and no
// connection is made.
func TestConsentNetworkRedirectRuns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Write([]byte("banner\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, form := range []string{
		`cat < /dev/tcp/127.0.0.1/%d`,
		`head -c 3 </dev/tcp/127.0.0.1/%d`,
		`echo hi > /dev/tcp/127.0.0.1/%d`,
		`exec 3<>/dev/tcp/127.0.0.1/%d; cat <&3`,
		`for d in /dev/tcp; do cat < $d/127.0.0.1/%d; done`,
	} {
		line := fmt.Sprintf(form, port)
		t.Run(line, func(t *testing.T) {
			_, root := testutil.Workspace(t, nil)
			before := conns.Load()
			res := runCall(t, consentSetup{mode: confirm.ModeYolo}, root, line, "")
			if conns.Load() == before {
				t.Fatalf("control: in yolo mode no connection was made (status %s, output %q)", res.Status, res.Output)
			}
			rules := []confirm.Rule{{ToolName: RunToolName, Decision: confirm.Allow, CommandPrefix: []string{"cat", "head", "echo", "exec"}}}
			if !strings.Contains(line, "$d") {
				// A literal /dev/tcp path is asked under a blanket rule too; one not
				// known until run time only under rules for programs.
				rules = append(rules, confirm.Rule{ToolName: RunToolName, Decision: confirm.Allow})
			}
			for _, r := range rules {
				before = conns.Load()
				res = runCall(t, consentSetup{mode: confirm.ModeDefault, rules: []confirm.Rule{r}}, root, line, "")
				if n := conns.Load() - before; n != 0 || res.Status != tools.StatusCancelled {
					t.Errorf("with %+v: %d connections, status %s; want the call asked, refused and no connection", r, n, res.Status)
				}
			}
		})
	}
}
