package shell

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// forgeStack is a persistent shell session, judged through the real scheduler, policy
// and registry filter, in a workspace that ships the self-link up -> ".", a victim file
// and a script s.sh that leaves the marker M.
type forgeStack struct {
	s          *Shell
	p          *Session
	ctx        context.Context
	root       string
	elsewhere  string // agentls's own working directory
	stateFiles []string
}

func newForgeStack(t *testing.T) *forgeStack {
	t.Helper()
	ws, root := testutil.Workspace(t, map[string]string{"sub/.keep": "", "victim": "v\n", "s.sh": "touch \"$(dirname \"$BASH_ENV\")/M\"\n"})
	if err := os.Symlink(".", filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	// A "." the shell reports would be agentls's own directory: not the source tree.
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	s := New(ws, Options{OutputDir: t.TempDir()})
	t.Cleanup(func() { s.Close() })
	p := NewSession()
	return &forgeStack{s: s, p: p, ctx: WithSession(t.Context(), p), root: root, elsewhere: elsewhere}
}

// judge runs line as the model's next call, through a scheduler set up as setup that
// shares the session.
func (f *forgeStack) judge(t *testing.T, setup consentSetup, line string) tools.CallResult {
	t.Helper()
	reg := tools.NewRegistry(nil, setup.filter)
	for _, tl := range f.s.Tools() {
		reg.Register(tl)
	}
	policy, err := confirm.NewPolicy(setup.mode, setup.rules, func() []string { return []string{f.root} })
	if err != nil {
		t.Fatal(err)
	}
	sched := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: &refuser{}, OutputDir: t.TempDir()})
	args, err := json.Marshal(map[string]string{"command": line})
	if err != nil {
		t.Fatal(err)
	}
	return sched.RunOne(f.ctx, tools.Request{CallID: "judged", Name: RunToolName, Args: args})
}

// TestPersistentShellForgery runs commands that forge what the persistent shell
// reports of itself (red team round 3, R1 and R2): functions that shadow what the EXIT
// trap calls, assignments to the variables it read, a redefined trap, exported
// functions and names that are not identifiers. The next command must be judged where
// it runs and with what it runs with: no write lands outside the workspace without a
// question, no carried name rewrites the line the policy and the registry filter see.
func TestPersistentShellForgery(t *testing.T) {
	// Default mode, echo allowed: a write outside the workspace is asked (and refused).
	echoAllowed := consentSetup{mode: confirm.ModeDefault, rules: []confirm.Rule{
		{ToolName: RunToolName, Decision: confirm.Allow, CommandPrefix: []string{"echo"}},
	}}
	// Yolo with rm denied by a rule and by excludeTools (R2a).
	rmDenied := consentSetup{mode: confirm.ModeYolo, rules: []confirm.Rule{
		{ToolName: RunToolName, Decision: confirm.Deny, CommandPrefix: []string{"rm"}},
	}, filter: tools.Filter{Exclude: []string{"run_shell_command(rm)"}}}
	// Yolo with only excludeTools: the registry filter alone stands.
	excluded := consentSetup{mode: confirm.ModeYolo, filter: tools.Filter{Exclude: []string{"run_shell_command(rm)"}}}

	// stateFile finds the trap's file from its own definition, as a command can.
	const stateFile = `f=$(declare -f __agentls_save | grep -o '/[^ ;]*agentls-shell-state-[^ ;]*' | head -n 1); `
	// shadow replaces the builtins the trap calls, so that what the trap writes is the
	// command's, yet still lets the trap's handshake run.
	shadow := func(forged string) string {
		return `unset() { :; }; builtin() { if [ "$1" = command ]; then echo -ne '` + forged + `'; command env -0; else command "$@"; fi; }; `
	}
	const planted = `\n#=1\0BASH_FUNC_x%%=() { $a$b "$@"; }\0a=r\0b=m\0`

	type check int
	const (
		outsideWrite check = iota // judged "echo pwned > M": no M outside the root
		rmVictim                  // judged "x victim": the victim survives
		bashEnv                   // judged "true": s.sh does not run
	)
	cases := []struct {
		name  string
		forge string
		check check
		// dir is where the shell must be afterwards, relative to the root.
		dir string
		// note is a part of the forging command's note.
		note string
	}{
		{name: "printf function reports up/..", forge: `printf() { echo -ne 'ROOT/up/..\0'; }`, check: outsideWrite},
		{name: "printf function reports .", forge: `printf() { echo -ne '.\0'; }`, check: outsideWrite},
		{name: "PWD and OLDPWD assigned", forge: `PWD=ROOT/up/..; OLDPWD=ROOT/up/..`, check: outsideWrite},
		{name: "PWD exported as .", forge: `export PWD=. OLDPWD=..`, check: outsideWrite},
		// The kernel's directory is the root, whatever bash's PWD says.
		{name: "cd into the self-link", forge: `cd up`, check: outsideWrite},
		{name: "cd into the self-link, then PWD up/..", forge: `cd up; PWD=$PWD/..`, check: outsideWrite},
		// Aliases are expanded when the trap is defined, before the command runs: a
		// control that a later alias changes nothing.
		{name: "alias for printf", forge: `shopt -s expand_aliases; alias printf='echo -ne "ROOT/up/..\0" #'`, check: outsideWrite},
		{name: "trap function redefined after declare -f", check: outsideWrite,
			forge: stateFile + `__agentls_save() { echo -ne 'ROOT/up/..\0A=1\0' > "$f"; builtin printf x >&"$__agentls_sync"; builtin read -r -n 1 -u "$__agentls_ack" _; }`,
			note:  "not a shell variable name"},
		{name: "own trap writes the file, no handshake", check: outsideWrite,
			forge: stateFile + `trap - EXIT; echo -ne 'ROOT/up/..\0' > "$f"`,
			note:  "did not report where the command left it"},
		{name: "builtin and unset shadowed", forge: shadow(`ROOT/up/..\0`), check: outsideWrite, note: "not a shell variable name"},
		{name: "unforged cd carries", forge: `cd sub`, check: outsideWrite, dir: "sub"},

		{name: "env function plants a newline name and a function", forge: `env() { command env -0; echo -ne '` + planted + `'; }`, check: rmVictim},
		{name: "printf function plants them", forge: `printf() { echo -ne 'ROOT\0` + planted + `'; }`, check: rmVictim},
		{name: "builtin shadow plants them", forge: shadow(planted), check: rmVictim, note: "not a shell variable name"},
		{name: "export -f", forge: `x() { $a$b "$@"; }; export -f x; export a=r b=m`, check: rmVictim, note: "BASH_FUNC_x%%"},
		{name: "declare -fx", forge: `x() { $a$b "$@"; }; declare -fx x; declare -x a=r b=m`, check: rmVictim, note: "BASH_FUNC_x%%"},

		{name: "builtin shadow carries BASH_ENV", forge: shadow(`BASH_ENV=ROOT/s.sh\0`), check: bashEnv},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newForgeStack(t)
			forge := strings.ReplaceAll(tc.forge, "ROOT", f.root)
			res, err := run(f.ctx, t, f.s, forge, nil, nil)
			if err != nil {
				t.Fatalf("forging command: %v", err)
			}
			if tc.note != "" && !strings.Contains(res.Output, tc.note) {
				t.Errorf("the forging command's result lacks %q:\n%s", tc.note, res.Output)
			}
			st := f.p.state(f.s)
			if want := filepath.Join(f.root, tc.dir); st.dir != want {
				t.Errorf("the shell is in %q, want %q", st.dir, want)
			}
			for k := range st.set {
				if !isName(k) {
					t.Errorf("carried the variable %q", k)
				}
			}
			if pre := st.prefix(); strings.ContainsAny(pre, "\n#%") {
				t.Errorf("the carried state shows as %q", pre)
			}

			switch tc.check {
			case outsideWrite:
				r := f.judge(t, echoAllowed, "echo pwned > M")
				for _, m := range []string{filepath.Join(filepath.Dir(f.root), "M"), filepath.Join(f.elsewhere, "M")} {
					if exists(m) {
						t.Errorf("wrote %s outside the workspace (status %s)", m, r.Status)
					}
				}
				if want := filepath.Join(f.root, tc.dir, "M"); r.Status != tools.StatusSuccess || !exists(want) {
					t.Errorf("the write inside the workspace: status %s %+v, %s exists: %v", r.Status, r.Error, want, exists(want))
				}
			case rmVictim:
				r := f.judge(t, rmDenied, "x victim")
				if !exists(filepath.Join(f.root, "victim")) {
					t.Errorf("the victim was deleted (status %s)", r.Status)
				}
			case bashEnv:
				r := f.judge(t, excluded, "true")
				if exists(filepath.Join(f.root, "M")) {
					t.Errorf("the carried BASH_ENV ran s.sh (status %s)", r.Status)
				}
				if r.Status != tools.StatusError || !strings.Contains(r.Output, "coreTools/excludeTools") {
					t.Errorf("status %s, output %q: want the registry filter to refuse the carried BASH_ENV", r.Status, r.Output)
				}
			}
		})
	}
}

// TestPersistentShellForgeryLive shows the payloads of TestPersistentShellForgery are
// live: what the forgeries would have the session carry does, when trusted, write
// outside the workspace, delete the victim and run s.sh; and an unforged session still
// carries its variables.
func TestPersistentShellForgeryLive(t *testing.T) {
	t.Run("forged directory", func(t *testing.T) {
		f := newForgeStack(t)
		forged := f.root + "/up/.." // as the trap reported it: filepath.Join would clean it
		a, err := confirm.Analyze("echo pwned > M", forged, []string{f.root})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Dangerous) > 0 {
			t.Fatalf("the analysis sees the danger of %s itself: %v", forged, a.Dangerous)
		}
		for _, dir := range []string{forged, "."} {
			if _, err := f.s.run(t.Context(), "echo pwned > M", dir, &sink{}, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range []string{filepath.Join(filepath.Dir(f.root), "M"), filepath.Join(f.elsewhere, "M")} {
			if !exists(m) {
				t.Errorf("running in the forged directory left no %s", m)
			}
		}
	})
	t.Run("planted names", func(t *testing.T) {
		f := newForgeStack(t)
		st := shellState{set: map[string]string{"BASH_FUNC_x%%": `() { $a$b "$@"; }`, "a": "r", "b": "m"}}
		cmd, _ := f.s.command("x victim", f.root, st.env(f.s.environ()), nil)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if exists(filepath.Join(f.root, "victim")) {
			t.Error("the planted function did not delete the victim")
		}
		if err := (confirm.CommandFilter{Deny: []string{"rm"}}).Check("x victim", f.root, nil); err != nil {
			t.Errorf("the filter refuses the bare line: %v", err)
		}
	})
	t.Run("carried BASH_ENV", func(t *testing.T) {
		f := newForgeStack(t)
		st := shellState{set: map[string]string{"BASH_ENV": filepath.Join(f.root, "s.sh")}}
		cmd, _ := f.s.command("true", f.root, st.env(f.s.environ()), nil)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !exists(filepath.Join(f.root, "M")) {
			t.Error("BASH_ENV did not run s.sh")
		}
		if r := f.judge(t, consentSetup{mode: confirm.ModeYolo, filter: tools.Filter{Exclude: []string{"run_shell_command(rm)"}}}, "true"); r.Status != tools.StatusSuccess {
			t.Errorf("the bare line is refused: %s %q", r.Status, r.Output)
		}
	})
	t.Run("unforged state carries", func(t *testing.T) {
		f := newForgeStack(t)
		// agentls's own environment may hold names that are not identifiers (an
		// exported function of the user's shell): they are not the command's, so
		// they do not drop what it carries.
		f.s.env = append(f.s.env, "BASH_FUNC_hello%%=() { echo hello; }", "odd-name=1")
		res, err := run(f.ctx, t, f.s, "cd sub && export X=1", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Output, "not a shell variable name") {
			t.Errorf("agentls's own variables dropped the state:\n%s", res.Output)
		}
		res, err = run(f.ctx, t, f.s, `echo "$PWD|$X|$(hello)"`, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(f.root, "sub") + "|1|hello"; res.Display != want {
			t.Errorf("got %q, want %q", res.Display, want)
		}
	})
}
