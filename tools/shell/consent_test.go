package shell

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/files"
)

// These tests try the consent model as a hostile repository or a prompt-injected model
// would, through the real shell tool, scheduler and policy and real bash: for each class
// of spelling, the line runs a payload that leaves a marker file. Under the rule, the
// "always" or the mode being tested the marker must not appear (the call is asked, and
// refused, or denied); in yolo mode without rules the same line must leave it, which
// shows the payload is live.

// refuser refuses every confirmation and records what it was asked.
type refuser struct {
	mu    sync.Mutex
	asked []string
}

func (r *refuser) Ask(_ context.Context, req confirm.Request) (confirm.Answer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, req.Details.Command+req.Details.Path)
	return confirm.Answer{Outcome: confirm.Cancel}, nil
}

// consentCase is one line of a class.
type consentCase struct {
	line string
	// needs names programs the line runs; the case is skipped without them.
	needs []string
}

// consentSetup is how a class's lines are judged.
type consentSetup struct {
	mode   confirm.Mode
	rules  []confirm.Rule
	filter tools.Filter
	// always are lines answered "always" before the case runs.
	always []string
	// want is the status the call must end with: cancelled (asked and refused) or
	// error (refused by the policy or the filter).
	want tools.Status
}

// consentFiles are the workspace's files: a script that a PATH change would run
// instead of ls, and a value that bash's arithmetic turns into a substitution.
var consentFiles = map[string]string{
	"evil/ls":          "#!/bin/sh\n: > \"${0%/*}/../M\"\n",
	"payload.txt":      "a[$(touch M)]\n",
	"s.sh":             "touch M\n",
	"cmds.txt":         "touch M\n",
	".git/config":      "[core]\n",
	".git/hooks/.keep": "",
	"src/main.go":      "package main\n",
	"evil/touch.py":    "open('M', 'w')\n",
}

// runConsent runs line through a scheduler set up as s in a fresh workspace, and
// returns the call's result, whether the marker exists afterwards, and the root.
func runConsent(t *testing.T, s consentSetup, line string) (tools.CallResult, string) {
	t.Helper()
	ws, root := testutil.Workspace(t, consentFiles)
	if err := os.Chmod(filepath.Join(root, "evil", "ls"), 0o755); err != nil {
		t.Fatal(err)
	}
	sh := New(ws, Options{OutputDir: t.TempDir()})
	t.Cleanup(func() { sh.Close() })
	reg := tools.NewRegistry(nil, s.filter)
	for _, tl := range sh.Tools() {
		reg.Register(tl)
	}
	for _, tl := range files.Tools(ws) {
		reg.Register(tl)
	}
	policy, err := confirm.NewPolicy(s.mode, s.rules, ws.Roots)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.always {
		policy.Remember(confirm.Call{Tool: RunToolName, Details: &confirm.Details{Type: confirm.TypeExecute, Command: a, Directory: root}}, confirm.ProceedAlways)
	}
	sched := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: &refuser{}, OutputDir: t.TempDir()})
	args, err := json.Marshal(map[string]string{"command": line})
	if err != nil {
		t.Fatal(err)
	}
	res := sched.RunOne(context.Background(), tools.Request{CallID: "c1", Name: RunToolName, Args: args})
	return res, root
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// checkClass runs each case under setup and, as the control, in yolo mode.
func checkClass(t *testing.T, setup consentSetup, cases []consentCase, marker func(root string) string) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			for _, p := range c.needs {
				if _, err := exec.LookPath(p); err != nil {
					t.Skipf("%s is not installed", p)
				}
			}
			res, root := runConsent(t, consentSetup{mode: confirm.ModeYolo}, c.line)
			if !exists(marker(root)) {
				t.Fatalf("control: in yolo mode the line left no marker (status %s, output %q, error %+v): the payload is not live", res.Status, res.Output, res.Error)
			}
			res, root = runConsent(t, setup, c.line)
			if exists(marker(root)) {
				t.Errorf("the line ran: marker %s exists (status %s)", marker(root), res.Status)
			}
			if res.Status != setup.want {
				t.Errorf("status %s, want %s (error %+v)", res.Status, setup.want, res.Error)
			}
		})
	}
}

func inRoot(root string) string { return filepath.Join(root, "M") }

// Class 1: data that bash evaluates as code.
var codeCases = []consentCase{
	{line: `x=$(<payload.txt); echo $((x))`},
	{line: `read -r x < payload.txt; echo "$(( x + 1 ))"`},
	{line: `read -r x < payload.txt; echo $[x]`},
	{line: `read -r x < payload.txt; (( x )) ; true`},
	{line: `read -r x < payload.txt; let x; true`},
	{line: `read -r x < payload.txt; [[ $x -eq 1 ]]; true`},
	{line: `read -r x < payload.txt; [[ 0 -lt x ]]; true`},
	{line: `read -r x < payload.txt; echo ${!x}`},
	{line: `read -r x < payload.txt; y=abc; echo ${y:x}`},
	{line: `read -r x < payload.txt; b=(1); echo ${b[x]}`},
	{line: `read -r x < payload.txt; b=(1); echo ${b[@]:x}`},
	{line: `read -r x < payload.txt; echo ${x@P}`},
	{line: `read -r x < payload.txt; printf -v "$x" %s 1`},
	{line: `read -r x < payload.txt; declare "$x=1"`},
	{line: `read -r x < payload.txt; test -v "$x"; true`},
	{line: `read -r x < payload.txt; [ -v "$x" ]; true`},
	{line: `read -r x < payload.txt; [[ -v $x ]]; true`},
	{line: `read -r x < payload.txt; read "$x" <<< 1`},
	{line: `read -r x < payload.txt; declare -i n; n=$x`},
	{line: `read -r x < payload.txt; for ((i=x; i<0; i++)); do :; done`},
	{line: `read -r x < payload.txt; b[x]=1`},
	{line: `read -r x < payload.txt; declare -n r=$x; echo $r`},
	{line: `eval "$(cat cmds.txt)"`},
	{line: `eval touch M`},
	{line: `source ./s.sh`},
	{line: `. ./s.sh`},
	{line: `c=$(<cmds.txt); bash -c "$c"`},
	{line: `trap 'touch M' EXIT; echo hi`},
	{line: `echo $(touch M)`},
	{line: "echo `touch M`"},
	{line: `cat <(touch M)`},
	{line: `for RANDOM in 'a[$(touch M)]'; do echo hi; done`},
	{line: `read -r OPTIND < payload.txt; echo hi`},
	{line: `read -r x < payload.txt; echo ${!x[0]}`},
	{line: `printf '-va[$(touch M)]' x`},
}

func TestConsentCodeRuns(t *testing.T) {
	// Every command of every line is allowed by text: only the code check stands
	// between the payload and bash.
	anyCommand := confirm.Rule{ToolName: RunToolName, Decision: confirm.Allow, CommandRegex: "."}
	t.Run("allow rule", func(t *testing.T) {
		checkClass(t, consentSetup{mode: confirm.ModeDefault, rules: []confirm.Rule{anyCommand}, want: tools.StatusCancelled}, codeCases, inRoot)
	})
	t.Run("always", func(t *testing.T) {
		var always []string
		for _, c := range codeCases {
			a, err := confirm.Analyze(c.line, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			always = append(always, a.Roots...)
		}
		checkClass(t, consentSetup{mode: confirm.ModeAutoEdit, always: always, want: tools.StatusCancelled}, codeCases, inRoot)
	})
	t.Run("coreTools", func(t *testing.T) {
		core := []string{"run_shell_command(echo)", "run_shell_command(read)", "run_shell_command(eval)", "run_shell_command(source)", "run_shell_command(.)",
			"run_shell_command(bash)", "run_shell_command(cat)", "run_shell_command(trap)", "run_shell_command(test)", "run_shell_command([)",
			"run_shell_command(printf)", "run_shell_command(declare)", "run_shell_command(true)", "run_shell_command(touch)", "run_shell_command(x=)",
			"run_shell_command(y=abc)", "run_shell_command(b=(1))", "run_shell_command(c=)", "run_shell_command(n=)"}
		checkClass(t, consentSetup{mode: confirm.ModeYolo, filter: tools.Filter{Core: core}, want: tools.StatusError}, codeCases, inRoot)
	})
}

// Class 2: environment assignments belong to the command. The allowed command is ls;
// ./evil/ls leaves the marker.
var envCases = []consentCase{
	{line: `PATH=./evil:$PATH ls`},
	{line: `PATH=./evil:$PATH; ls`},
	{line: `export PATH=./evil:$PATH; ls`},
	{line: `export PATH=./evil:$PATH && ls`},
	{line: `declare -x PATH=./evil:$PATH; ls`},
	{line: `env PATH=./evil:/usr/bin:/bin ls`},
	{line: `env -i PATH=./evil ls`},
	{line: `read -r PATH <<< ./evil; ls`},
	{line: `printf -v PATH %s ./evil; ls`},
	{line: `set -a; PATH=./evil; ls`},
	{line: `timeout 5 env PATH=./evil ls`},
	{line: `nice env PATH=./evil ls`},
	{line: `bash -c 'PATH=./evil ls'`},
	{line: `for PATH in ./evil; do ls; done`},
	{line: `BASH_ENV=./s.sh bash -c ls`},
	{line: `PATH=./evil:$PATH bash -c ls`},
	{line: `cd evil && PATH=. ls`},
	// A program of the allowed name that the repository ships is not the allowed one.
	{line: `./evil/ls`},
	{line: `evil/ls -la`},
}

func TestConsentEnvironmentRuns(t *testing.T) {
	ls := confirm.Rule{ToolName: RunToolName, Decision: confirm.Allow, CommandPrefix: []string{"ls", "cd", "bash -c ls"}}
	t.Run("allow rule", func(t *testing.T) {
		checkClass(t, consentSetup{mode: confirm.ModeDefault, rules: []confirm.Rule{ls}, want: tools.StatusCancelled}, envCases, inRoot)
	})
	t.Run("always", func(t *testing.T) {
		checkClass(t, consentSetup{mode: confirm.ModeDefault, always: []string{"ls", "cd evil", "bash -c ls", "set -a", "timeout 5 ls", "nice ls"}, want: tools.StatusCancelled}, envCases, inRoot)
	})
	t.Run("coreTools", func(t *testing.T) {
		checkClass(t, consentSetup{mode: confirm.ModeYolo, filter: tools.Filter{Core: []string{"run_shell_command(ls)", "run_shell_command(cd)", "run_shell_command(set -a)"}}, want: tools.StatusError}, envCases, inRoot)
	})
}

// Class 3: deny rules and excludeTools fail closed, in every mode. The denied command
// is touch.
var hiddenTouchCases = []consentCase{
	{line: `$'\x74ouch' M`},
	{line: `t$'ouch' M`},
	{line: `T=touch; $T M`},
	{line: `"$(echo touch)" M`},
	{line: "`echo touch` M"},
	{line: `/usr/bin/t?uch M`},
	{line: `/usr/bin/tou[c]h M`},
	{line: `echo 'touch M' | bash`},
	{line: `echo 'touch M' | sh`},
	{line: `bash < cmds.txt`},
	{line: `bash <<< 'touch M'`},
	{line: `cat cmds.txt | sh -s`},
	{line: `python3 - < evil/touch.py`, needs: []string{"python3"}},
	{line: `python3 -c 'open("M", "w")'`, needs: []string{"python3"}},
	{line: `perl -e 'open(F, ">M")'`, needs: []string{"perl"}},
	{line: `awk 'BEGIN { system("touch M") }'`, needs: []string{"awk"}},
	{line: `c=$(<cmds.txt); eval "$c"`},
	{line: `c=$(<cmds.txt); bash -c "$c"`},
	{line: `source ./s.sh`},
	{line: `strace -f -o /dev/null touch M`, needs: []string{"strace"}},
	{line: `env -S "$(cat cmds.txt)"`},
	{line: `trap "$(cat cmds.txt)" EXIT`},
	{line: `eval -- touch M`},
	{line: `bash -sc 'touch M'`},
	{line: `bash /dev/stdin <<< 'touch M'`},
	{line: `bash <(echo touch M)`},
	{line: `perl -M'strict;system("touch M")' /dev/null`, needs: []string{"perl"}},
	{line: `timeout --kill 5 10 touch M`},
	{line: `nice --adj 5 touch M`},
	{line: `env --uns X touch M`},
	{line: `setarch x86_64 touch M`, needs: []string{"setarch"}},
	{line: `echo touch M | xargs env`},
	{line: `echo touch M | xargs timeout 5`},
	{line: `find . -maxdepth 0 $'-exec' touch M \;`},
	{line: `for RANDOM in 'a[$(touch M)]'; do echo hi; done`},
	{line: `BASH_CMDS[0]=/usr/bin/touch; 0 M`, needs: []string{"/usr/bin/touch"}},
	{line: `shopt -s expand_aliases; BASH_ALIASES[0]=touch` + "\n" + `0 M`},
	{line: `: ${BASH_CMDS[0]:=/usr/bin/touch}; 0 M`, needs: []string{"/usr/bin/touch"}},
	{line: `compgen -W '$(touch M)' x`},
	{line: `PS4='$(touch M)'; set -x; :`},
	{line: `env 'BASH_FUNC_ls%%=() { touch M; }' bash -c ls`},
	{line: `tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec=':;touch M' s.sh`, needs: []string{"tar"}},
	// Programs that run shell text (issue 22): interpreters for deny rules.
	{line: `echo 'BEGIN { system("tou" "ch M") }' | awk -f -`, needs: []string{"awk"}},
	{line: `awk -f /dev/stdin <<< 'BEGIN { system("tou" "ch M") }'`, needs: []string{"awk"}},
	{line: `sqlite3 :memory: '.shell t\ouch M'`, needs: []string{"sqlite3"}},
	{line: `echo '.system t\ouch M' | sqlite3 :memory:`, needs: []string{"sqlite3"}},
	{line: `gdb -q -batch -ex 'shell t\ouch M'`, needs: []string{"gdb"}},
	{line: `vim -es -u NONE -c '!t\ouch M' -c 'q!'`, needs: []string{"vim"}},
	{line: `printf '!t%souch M
q
' '' | ed -s`, needs: []string{"ed"}},
	// git -c spelled in the environment.
	{line: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!t''ouch M' git x`, needs: []string{"git"}},
	{line: `GIT_CONFIG_PARAMETERS="'alias.x'='!t\\ouch M'" git x`, needs: []string{"git"}},
	{line: `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!t''ouch M'; git x`, needs: []string{"git"}},
}

var seenTouchCases = []consentCase{
	{line: `touch M`},
	{line: `\touch M`},
	{line: `"touch" M`},
	{line: `/usr/bin/touch M`},
	{line: `FOO=1 touch M`},
	{line: `env -i /usr/bin/touch M`},
	{line: `stdbuf -o0 touch M`, needs: []string{"stdbuf"}},
	{line: `setsid -w touch M`, needs: []string{"setsid"}},
	{line: `flock ./lock touch M`, needs: []string{"flock"}},
	{line: `flock ./lock -c 'touch M'`, needs: []string{"flock"}},
	{line: `ionice -c3 touch M`, needs: []string{"ionice"}},
	{line: `chrt -o 0 touch M`, needs: []string{"chrt"}},
	{line: `taskset 1 touch M`, needs: []string{"taskset"}},
	{line: `nohup touch M`, needs: []string{"nohup"}},
	{line: `timeout 5 touch M`},
	{line: `echo M | xargs touch`},
	{line: `echo M | xargs -n1 -I{} touch {}`},
	{line: `script -qc 'touch M' /dev/null`, needs: []string{"script"}},
	{line: `command touch M`},
	{line: `builtin command exec touch M`},
	{line: `bash -c 'touch M'`},
	{line: `sh -c "true; touch M"`},
	{line: `eval touch M`},
	{line: `find . -maxdepth 0 -exec touch M \;`},
	{line: `ls && touch M`},
	{line: `(touch M)`},
	{line: `f() { touch M; }; f`},
	{line: `echo $(touch M)`},
}

func TestConsentDenyRuns(t *testing.T) {
	deny := confirm.Rule{ToolName: RunToolName, Decision: confirm.Deny, CommandPrefix: []string{"touch"}}
	all := append(append([]consentCase{}, hiddenTouchCases...), seenTouchCases...)
	for _, mode := range []confirm.Mode{confirm.ModeYolo, confirm.ModeAutoEdit, confirm.ModeDefault} {
		t.Run(string(mode), func(t *testing.T) {
			allowAll := confirm.Rule{ToolName: "*", Decision: confirm.Allow, Priority: -1}
			checkClass(t, consentSetup{mode: mode, rules: []confirm.Rule{deny, allowAll}, want: tools.StatusError}, all, inRoot)
		})
	}
	t.Run("excludeTools", func(t *testing.T) {
		checkClass(t, consentSetup{mode: confirm.ModeYolo, filter: tools.Filter{Exclude: []string{"run_shell_command(touch)"}}, want: tools.StatusError}, all, inRoot)
	})
}

// Class 4: writes through a symbolic link that the repository ships, to a place outside
// the workspace.
func TestConsentSymlinkWritesRun(t *testing.T) {
	outside := t.TempDir()
	// Each workspace gets links to outside: out (a directory) and dangling (a file
	// that does not exist yet).
	cases := []consentCase{
		{line: `echo x > out/M`},
		{line: `echo x >> out/M`},
		{line: `echo x > dangling`},
		{line: `echo x | tee out/M`},
		{line: `cp src/main.go out/M`},
		{line: `cp -t out src/main.go && mv out/main.go out/M`},
		{line: `mv src/main.go out/M`},
		{line: `dd if=src/main.go of=out/M status=none`},
		{line: `cd out && echo x > M`},
		{line: `cd src; cd ../out; echo x > M`},
		{line: `bash -c 'echo x > out/M'`},
	}
	allow := confirm.Rule{ToolName: RunToolName, Decision: confirm.Allow, CommandPrefix: []string{"echo", "tee", "cp", "mv", "dd", "cd", "bash"}}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			for _, mode := range []confirm.Mode{confirm.ModeYolo, confirm.ModeDefault} {
				setup := consentSetup{mode: mode, want: tools.StatusCancelled}
				if mode == confirm.ModeDefault {
					setup.rules = []confirm.Rule{allow}
				}
				marker := filepath.Join(outside, "M")
				os.Remove(marker)
				ws, root := testutil.Workspace(t, consentFiles)
				for name, target := range map[string]string{"out": outside, "dangling": marker} {
					if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
						t.Fatal(err)
					}
				}
				sh := New(ws, Options{OutputDir: t.TempDir()})
				reg := tools.NewRegistry(nil, tools.Filter{})
				for _, tl := range sh.Tools() {
					reg.Register(tl)
				}
				policy, err := confirm.NewPolicy(setup.mode, setup.rules, ws.Roots)
				if err != nil {
					t.Fatal(err)
				}
				sched := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: &refuser{}, OutputDir: t.TempDir()})
				args, _ := json.Marshal(map[string]string{"command": c.line})
				res := sched.RunOne(context.Background(), tools.Request{CallID: "c1", Name: RunToolName, Args: args})
				sh.Close()
				switch {
				case mode == confirm.ModeYolo && !exists(marker):
					t.Fatalf("control: in yolo mode nothing was written outside (status %s)", res.Status)
				case mode == confirm.ModeDefault && exists(marker):
					t.Errorf("the line wrote %s through a link (status %s)", marker, res.Status)
				case mode == confirm.ModeDefault && res.Status != tools.StatusCancelled:
					t.Errorf("status %s, want cancelled (asked and refused)", res.Status)
				}
			}
		})
	}
}

// Class 5: sensitive files are asked about in every mode but yolo, edits and shell
// writes alike.
func TestConsentSensitiveRuns(t *testing.T) {
	hook := func(root string) string { return filepath.Join(root, ".git", "hooks", "pre-commit") }
	shellCases := []consentCase{
		{line: `mkdir -p .git/hooks && echo 'touch M' > .git/hooks/pre-commit`},
		{line: `mkdir -p .git/hooks; cp s.sh .git/hooks/pre-commit`},
		{line: `mkdir -p .git/hooks; cat s.sh | tee .git/hooks/pre-commit`},
		{line: `mkdir -p .git/hooks && cd .git/hooks && echo x > pre-commit`},
		{line: `mkdir -p .git/hooks && sort -o .git/hooks/pre-commit s.sh`},
		{line: `mkdir -p .git/hooks; find . -maxdepth 0 -fprint .git/hooks/pre-commit`},
		{line: `mkdir -p .git/hooks && : > .git/hooks/pre-commit && echo x 1<.git/hooks/pre-commit >>/dev/stdout`},
		// Directory-changing wrappers are a cd (issue 22).
		// (.git/hooks exists: consentFiles has .git/hooks/.keep.)
		{line: `env -C .git/hooks sh -c 'echo x > pre-commit'`},
		{line: `env --chdir=.git/hooks cp ../../s.sh pre-commit`},
		{line: `timeout 5 env -C .git/hooks sh -c 'echo x > pre-commit'`},
		{line: `unshare --wd=.git/hooks sh -c 'echo x > pre-commit'`, needs: []string{"unshare"}},
		{line: `xxd s.sh .git/hooks/pre-commit`, needs: []string{"xxd"}},
		{line: `uniq s.sh .git/hooks/pre-commit`},
	}
	allowAll := confirm.Rule{ToolName: "*", Decision: confirm.Allow}
	checkClass(t, consentSetup{mode: confirm.ModeAutoEdit, rules: []confirm.Rule{allowAll}, want: tools.StatusCancelled}, shellCases, hook)

	for _, tt := range []struct {
		tool string
		args map[string]string
		path string
	}{
		{"write_file", map[string]string{"file_path": ".git/hooks/pre-commit", "content": "touch M\n"}, ".git/hooks/pre-commit"},
		{"write_file", map[string]string{"file_path": ".vscode/tasks.json", "content": "{}\n"}, ".vscode/tasks.json"},
		{"write_file", map[string]string{"file_path": ".agentls/settings.json", "content": `{"approvalMode":"yolo"}`}, ".agentls/settings.json"},
		{"write_file", map[string]string{"file_path": ".gemini/settings.json", "content": `{}`}, ".gemini/settings.json"},
		{"replace", map[string]string{"file_path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch M"}, ".git/config"},
	} {
		t.Run(tt.tool+" "+tt.path, func(t *testing.T) {
			for _, mode := range []confirm.Mode{confirm.ModeAutoEdit, confirm.ModeDefault} {
				ws, root := testutil.Workspace(t, consentFiles)
				reg := tools.NewRegistry(nil, tools.Filter{})
				for _, tl := range files.Tools(ws) {
					reg.Register(tl)
				}
				policy, err := confirm.NewPolicy(mode, []confirm.Rule{allowAll}, ws.Roots)
				if err != nil {
					t.Fatal(err)
				}
				policy.Remember(confirm.Call{Tool: tt.tool, Details: &confirm.Details{Type: confirm.TypeEdit, Path: filepath.Join(root, "src", "main.go")}}, confirm.ProceedAlwaysTool)
				before, _ := os.ReadFile(filepath.Join(root, tt.path))
				asker := &refuser{}
				sched := tools.NewScheduler(tools.Options{Registry: reg, Policy: policy, Asker: asker, OutputDir: t.TempDir()})
				args, _ := json.Marshal(tt.args)
				res := sched.RunOne(context.Background(), tools.Request{CallID: "c1", Name: tt.tool, Args: args})
				after, _ := os.ReadFile(filepath.Join(root, tt.path))
				if string(after) != string(before) {
					t.Errorf("%s: %s was written: %q", mode, tt.path, after)
				}
				if res.Status != tools.StatusCancelled || len(asker.asked) != 1 || !strings.HasSuffix(asker.asked[0], tt.path) {
					t.Errorf("%s: status %s, asked %q; want one question about %s, refused", mode, res.Status, asker.asked, tt.path)
				}
			}
		})
	}
}

// TestConsentMisreadRuns: lines that the parser reads otherwise than bash are refused
// in every mode, while bash itself would run their payload.
func TestConsentMisreadRuns(t *testing.T) {
	for _, line := range []string{
		"echo hi # \\\ntouch M",
		"cat <<EOF\nEO\\\nF\ntouch M\nEOF",
		"echo a\\\r\ntouch M",
		"cat <<EOF\nEOF\r\ncat <<X\nEOF\ntouch M\nX",
	} {
		t.Run(line, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command("bash", "-c", line)
			cmd.Dir = dir
			// The exit status is the line's business (the here-document's case runs its
			// delimiter as a command too).
			if out, err := cmd.CombinedOutput(); !exists(inRoot(dir)) {
				t.Fatalf("control: bash left no marker (%v, %s): the payload is not live", err, out)
			}
			res, root := runConsent(t, consentSetup{mode: confirm.ModeYolo}, line)
			if exists(inRoot(root)) || res.Status != tools.StatusError {
				t.Errorf("yolo: status %s, marker %v; want the line refused and nothing run", res.Status, exists(inRoot(root)))
			}
		})
	}
}
