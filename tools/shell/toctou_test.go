package shell

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// evilBranchRepo makes a git workspace whose checked-out branch has a directory d and
// whose branch evil has d as a link to outside, a directory outside the workspace.
func evilBranchRepo(t *testing.T) (ws *workspace.Workspace, root, outside string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws, root = testutil.Workspace(t, map[string]string{"d/keep": "k\n"})
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=a", "-c", "user.email=a@b", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", ".")
	git("add", "-A")
	git("commit", "-qm", "base")
	git("checkout", "-qb", "evil")
	git("rm", "-rq", "d")
	if err := os.Symlink(outside, filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	git("add", "d")
	git("commit", "-qm", "evil")
	git("checkout", "-q", "main")
	return ws, root, outside
}

// TestBatchReshapeThenWrite is red team round 3's R5: one model turn asks for an
// allowed git checkout that turns the directory d into a link to outside the
// workspace, and for an allowed echo into d. The echo must be judged after the checkout
// has run, so that its write outside the workspace is asked about (and here refused),
// however the two calls' timing falls.
func TestBatchReshapeThenWrite(t *testing.T) {
	const write = "head -c 100000000 /dev/zero | wc -c; echo pwned > d/marker"
	for i := range 5 {
		ws, _, outside := evilBranchRepo(t)
		sh := New(ws, Options{OutputDir: t.TempDir()})
		t.Cleanup(func() { sh.Close() })
		reg := tools.NewRegistry(nil, tools.Filter{})
		for _, tl := range sh.Tools() {
			reg.Register(tl)
		}
		policy, err := confirm.NewPolicy(confirm.ModeDefault, []confirm.Rule{{
			ToolName: RunToolName, Decision: confirm.Allow, CommandPrefix: []string{"git checkout", "echo", "head", "wc"},
		}}, ws.Roots)
		if err != nil {
			t.Fatal(err)
		}
		asker := &refuser{}
		sched := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: asker, OutputDir: t.TempDir()})
		var reqs []tools.Request
		for j, line := range []string{"git checkout -q evil", write} {
			args, err := json.Marshal(map[string]string{"command": line})
			if err != nil {
				t.Fatal(err)
			}
			reqs = append(reqs, tools.Request{CallID: string(rune('a' + j)), Name: RunToolName, Args: args})
		}
		res := sched.Run(t.Context(), reqs)
		if res[0].Status != tools.StatusSuccess {
			t.Fatalf("run %d: the checkout: %s %+v", i, res[0].Status, res[0].Error)
		}
		if exists(filepath.Join(outside, "marker")) {
			t.Fatalf("run %d: the echo wrote outside the workspace, through the link the checkout made (status %s)", i, res[1].Status)
		}
		if res[1].Status != tools.StatusCancelled || !slices.Contains(asker.asked, write) {
			t.Errorf("run %d: the echo ended %s %+v, asked %q: want it asked about, and refused", i, res[1].Status, res[1].Error, asker.asked)
		}
	}
}

// TestBatchReshapeThenWriteLive is the control of TestBatchReshapeThenWrite: the echo,
// judged before the checkout and run after it, writes outside the workspace.
func TestBatchReshapeThenWriteLive(t *testing.T) {
	ws, root, outside := evilBranchRepo(t)
	sh := New(ws, Options{OutputDir: t.TempDir()})
	t.Cleanup(func() { sh.Close() })
	a, err := confirm.Analyze("echo pwned > d/marker", root, ws.Roots())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Dangerous) > 0 {
		t.Fatalf("judged before the checkout, the echo is already dangerous: %v", a.Dangerous)
	}
	for _, line := range []string{"git checkout -q evil", "echo pwned > d/marker"} {
		if _, err := sh.run(t.Context(), line, root, &sink{}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !exists(filepath.Join(outside, "marker")) {
		t.Error("run after the checkout, the echo left no marker outside the workspace")
	}
}
