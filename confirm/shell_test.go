package confirm

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

const testRoot = "/home/u/proj"

var testRoots = []string{testRoot, "/srv/other"}

// analyzeTests run in the workspace root unless dir says otherwise; their commands
// also seed FuzzAnalyze.
var analyzeTests = []struct {
	name string
	cmd  string
	dir  string
	want Analysis
}{
	// Structure: every simple command counts.
	{name: "simple", cmd: "git status",
		want: Analysis{Commands: []string{"git status"}, Roots: []string{"git"}}},
	{name: "empty", cmd: "  ", want: Analysis{}},
	{name: "comment", cmd: "ls # rm -rf /",
		want: Analysis{Commands: []string{"ls"}, Roots: []string{"ls"}}},
	{name: "pipeline", cmd: "cat a.txt | grep -n foo | wc -l",
		want: Analysis{Commands: []string{"cat a.txt", "grep -n foo", "wc -l"}, Roots: []string{"cat", "grep", "wc"}}},
	{name: "lists", cmd: "make && make test || echo failed; ls &",
		want: Analysis{Commands: []string{"make", "make test", "echo failed", "ls"}, Roots: []string{"make", "echo", "ls"}}},
	{name: "subshell and block", cmd: "(cd sub && make); { echo a; echo b; }",
		want: Analysis{Commands: []string{"cd sub", "make", "echo a", "echo b"}, Roots: []string{"cd", "make", "echo"}}},
	{name: "if", cmd: "if test -f x; then cat x; elif true; then :; else echo no; fi",
		want: Analysis{Commands: []string{"test -f x", "cat x", "true", ":", "echo no"}, Roots: []string{"test", "cat", "true", ":", "echo"}}},
	{name: "for", cmd: "for f in a b; do echo $f; done",
		want: Analysis{Commands: []string{"echo $f"}, Roots: []string{"echo"}}},
	{name: "while", cmd: `while read -r line; do echo "$line"; done < in.txt`,
		want: Analysis{Commands: []string{"read -r line", `echo "$line"`}, Roots: []string{"read -r line", "echo"}}},
	{name: "case", cmd: "case $x in a) ls;; *) pwd;; esac",
		want: Analysis{Commands: []string{"ls", "pwd"}, Roots: []string{"ls", "pwd"}}},
	{name: "function", cmd: "f() { go vet ./...; }; f",
		want: Analysis{Commands: []string{"go vet ./...", "f"}, Roots: []string{"go", "f"}}},
	{name: "roots deduplicated", cmd: "ls a; git log; ls b",
		want: Analysis{Commands: []string{"ls a", "git log", "ls b"}, Roots: []string{"ls", "git"}}},
	{name: "leading assignments", cmd: "FOO=1 BAR=2 make build",
		want: Analysis{Commands: []string{"FOO=1 BAR=2 make build"}, Roots: []string{"FOO=1 BAR=2 make"}}},
	{name: "assignment only", cmd: "FOO=1", want: Analysis{Commands: []string{"FOO=1"}, Roots: []string{"FOO=1"}}},
	{name: "declaration", cmd: "export PATH=$PATH:/opt/bin",
		want: Analysis{Commands: []string{"export PATH=$PATH:/opt/bin"}, Roots: []string{"export PATH=$PATH:/opt/bin"}, Opaque: []string{"PATH=…"}}},
	{name: "path root", cmd: "/usr/bin/git log --oneline",
		want: Analysis{Commands: []string{"/usr/bin/git log --oneline"}, Roots: []string{"git"}}},
	{name: "relative path root", cmd: "./scripts/build.sh -v",
		want: Analysis{Commands: []string{"./scripts/build.sh -v"}, Roots: []string{"./scripts/build.sh"}}},

	// Words.
	{name: "quotes", cmd: `grep -n "foo bar" 'baz qux' a\ b`,
		want: Analysis{Commands: []string{"grep -n foo bar baz qux a b"}, Roots: []string{"grep"}}},
	{name: "escaped name", cmd: `\rm x`,
		want: Analysis{Commands: []string{"rm x"}, Roots: []string{"rm"}}},
	{name: "quoted name pieces", cmd: `g"i"'t' status`,
		want: Analysis{Commands: []string{"git status"}, Roots: []string{"git"}}},
	{name: "escapes in double quotes", cmd: `echo "a\$b\q"`,
		want: Analysis{Commands: []string{`echo a$b\q`}, Roots: []string{"echo"}}},
	{name: "expansions kept as written", cmd: `echo "$HOME" ${x:-y} *.go`,
		want: Analysis{Commands: []string{`echo "$HOME" ${x:-y} *.go`}, Roots: []string{"echo"}}},
	{name: "empty word", cmd: `"" x`,
		want: Analysis{Commands: []string{"'' x"}, Roots: []string{"''"}}},
	{name: "variable command name", cmd: "$EDITOR notes.txt",
		want: Analysis{Commands: []string{"$EDITOR notes.txt"}, Opaque: []string{"$EDITOR notes.txt"}, Roots: []string{"$EDITOR"},
			Dangerous: []string{"command name not known until run time: $EDITOR"}}},
	{name: "glob command name", cmd: "/bin/r? -rf /",
		want: Analysis{Commands: []string{"/bin/r? -rf /"}, Opaque: []string{"/bin/r? -rf /"}, Roots: []string{"/bin/r?"},
			Dangerous: []string{"command name not known until run time: /bin/r?"}}},
	{name: "brace command name", cmd: "{rm,-rf,/}",
		want: Analysis{Commands: []string{"{rm,-rf,/}"}, Opaque: []string{"{rm,-rf,/}"}, Roots: []string{"{rm,-rf,/}"},
			Dangerous: []string{"command name not known until run time: {rm,-rf,/}"}}},
	{name: "ansi-c command name", cmd: `$'\x72m' x`,
		want: Analysis{Commands: []string{`$'\x72m' x`}, Opaque: []string{`$'\x72m' x`}, Roots: []string{`$'\x72m'`},
			Dangerous: []string{`command name not known until run time: $'\x72m'`}}},
	{name: "test bracket is literal", cmd: "[ -f x ] && cat x",
		want: Analysis{Commands: []string{"[ -f x ]", "cat x"}, Roots: []string{"[", "cat"}}},

	// Wrappers.
	{name: "sudo", cmd: "sudo -u root -E apt-get install -y vim",
		want: Analysis{Commands: []string{"apt-get install -y vim"}, Roots: []string{"apt-get"}, Dangerous: []string{"sudo"}}},
	{name: "sudo assignments", cmd: "sudo --user=root FOO=1 make",
		want: Analysis{Commands: []string{"FOO=1 make"}, Roots: []string{"FOO=1 make"}, Dangerous: []string{"sudo"}}},
	{name: "sudo alone", cmd: "sudo -i",
		want: Analysis{Commands: []string{"sudo -i"}, Opaque: []string{"sudo -i"}, Roots: []string{"sudo"}, Dangerous: []string{"sudo", "runs a command not known until run time: sudo -i"}}},
	{name: "sudo edit", cmd: "sudo -e /etc/hosts",
		want: Analysis{Commands: []string{"sudo -e /etc/hosts"}, Roots: []string{"sudo"}, Dangerous: []string{"sudo"}}},
	{name: "doas", cmd: "doas -u admin ls",
		want: Analysis{Commands: []string{"ls"}, Roots: []string{"ls"}, Dangerous: []string{"doas"}}},
	{name: "env", cmd: "env -i PATH=/bin FOO=$x go test ./...",
		want: Analysis{Commands: []string{"env -i PATH=/bin FOO=$x go test ./..."}, Roots: []string{"env -i PATH=/bin FOO=$x go"}, Opaque: []string{"PATH=…"}}},
	{name: "env options with arguments", cmd: "env -u HOME -C /tmp --unset=X - make",
		want: Analysis{Commands: []string{"env -u HOME -C /tmp --unset=X - make"}, Roots: []string{"env -u HOME -C /tmp --unset=X - make"}}},
	{name: "env assignments", cmd: "env GIT_SSH_COMMAND=x git fetch",
		want: Analysis{Commands: []string{"GIT_SSH_COMMAND=x git fetch"}, Roots: []string{"GIT_SSH_COMMAND=x git"}}},
	{name: "env alone", cmd: "env FOO=1",
		want: Analysis{Commands: []string{"env FOO=1"}, Roots: []string{"env"}}},
	{name: "env split string", cmd: "env -S 'A=1 go test -run X' ./pkg",
		want: Analysis{Commands: []string{"A=1 go test -run X ./pkg"}, Roots: []string{"A=1 go"}}},
	{name: "env split string expansion", cmd: `env -S "$CMD"`,
		want: Analysis{Commands: []string{`env -S "$CMD"`}, Opaque: []string{`env -S "$CMD"`}, Roots: []string{"env"},
			Dangerous: []string{`runs a command not known until run time: env -S "$CMD"`}}},
	{name: "timeout", cmd: "timeout 30s go test",
		want: Analysis{Commands: []string{"go test"}, Roots: []string{"go"}}},
	{name: "timeout options", cmd: "timeout -k 5 --signal=TERM --preserve-status 1m make",
		want: Analysis{Commands: []string{"make"}, Roots: []string{"make"}}},
	{name: "nice", cmd: "nice -n 10 make; nice -5 ls; nice -n3 pwd; nice --adjustment 4 id",
		want: Analysis{Commands: []string{"make", "ls", "pwd", "id"}, Roots: []string{"make", "ls", "pwd", "id"}}},
	{name: "xargs", cmd: "find . -name '*.go' | xargs -0 -n 1 -P4 gofmt -l",
		want: Analysis{Commands: []string{"find . -name *.go", "gofmt -l {xargs input}"}, Roots: []string{"find", "gofmt"}}},
	{name: "xargs replace", cmd: "ls | xargs -I {} cp {} dst/",
		want: Analysis{Commands: []string{"ls", "cp {} dst/ {xargs input}"}, Roots: []string{"ls", "cp"},
			Dangerous: []string{"cp with arguments not known until run time", "writes to a path not known until run time: {xargs input}"}}},
	{name: "xargs alone", cmd: "ls | xargs -r",
		want: Analysis{Commands: []string{"ls", "xargs -r"}, Roots: []string{"ls", "xargs"}}},
	{name: "command", cmd: "command -p ls; exec make; nohup ./server --port 80 &",
		want: Analysis{Commands: []string{"ls", "make", "./server --port 80"}, Roots: []string{"ls", "make", "./server"}}},
	{name: "command lookup", cmd: "command -v git",
		want: Analysis{Commands: []string{"command -v git"}, Roots: []string{"command"}}},
	{name: "time keyword", cmd: "time -p go build",
		want: Analysis{Commands: []string{"go build"}, Roots: []string{"go"}}},
	{name: "gnu time", cmd: "/usr/bin/time -v -o times.txt make",
		want: Analysis{Commands: []string{"make"}, Roots: []string{"make"}}},
	{name: "gnu time output outside", cmd: "command time -o /tmp/t make",
		want: Analysis{Commands: []string{"make"}, Roots: []string{"make"}, Dangerous: []string{"writes outside the workspace: /tmp/t"}}},
	{name: "wrappers stacked", cmd: "timeout 5 sudo env A=1 nice -n 2 xargs rm -rf build",
		want: Analysis{Commands: []string{"A=1 rm -rf build {xargs input}"}, Roots: []string{"A=1 rm"}, Dangerous: []string{"sudo", "rm with arguments not known until run time", "writes to a path not known until run time: {xargs input}", "rm -r", "rm -f"}}},
	{name: "bash -c", cmd: "bash -c 'git status && ls'",
		want: Analysis{Commands: []string{"git status", "ls"}, Roots: []string{"git", "ls"}}},
	{name: "sh -c double quotes", cmd: `sh -c "echo \"hi there\""`,
		want: Analysis{Commands: []string{"echo hi there"}, Roots: []string{"echo"}}},
	{name: "shell options", cmd: "bash -euo pipefail -c 'make' argv0 a; zsh -lc 'ls'; /bin/dash --norc -c pwd",
		want: Analysis{Commands: []string{"make", "ls", "pwd"}, Roots: []string{"make", "ls", "pwd"}}},
	{name: "bash -c nested", cmd: `bash -c "sh -c 'zsh -c \"rm -rf /\"'"`,
		want: Analysis{Commands: []string{"rm -rf /"}, Roots: []string{"rm"}, Dangerous: []string{"writes outside the workspace: /", "rm -r", "rm -f"}}},
	{name: "bash script", cmd: "bash script.sh arg",
		want: Analysis{Commands: []string{"bash script.sh arg"}, Roots: []string{"bash"}}},
	{name: "bash -c expansion", cmd: `bash -c "$CMD"`,
		want: Analysis{Commands: []string{`bash -c "$CMD"`}, Roots: []string{"bash"}, Substitution: true,
			Code: []string{"bash -c with text not known until run time"}, Opaque: []string{`bash -c "$CMD"`},
			Dangerous: []string{`runs a command not known until run time: bash -c "$CMD"`}}},
	{name: "eval", cmd: "eval 'ls -l' '&&' pwd",
		want: Analysis{Commands: []string{"eval ls -l && pwd", "ls -l", "pwd"}, Roots: []string{"eval", "ls", "pwd"}, Substitution: true, Code: []string{"eval"}}},
	{name: "eval expansion", cmd: `eval "$(ssh-agent -s)"`,
		want: Analysis{Commands: []string{`eval "$(ssh-agent -s)"`, "ssh-agent -s"}, Roots: []string{"eval", "ssh-agent"}, Substitution: true,
			Code: []string{"eval"}, Opaque: []string{`eval "$(ssh-agent -s)"`},
			Dangerous: []string{`runs a command not known until run time: eval "$(ssh-agent -s)"`}}},

	// Substitutions.
	{name: "command substitution", cmd: "echo $(date)",
		want: Analysis{Commands: []string{"echo $(date)", "date"}, Roots: []string{"echo", "date"}, Substitution: true}},
	{name: "backticks", cmd: "echo `date`",
		want: Analysis{Commands: []string{"echo `date`", "date"}, Roots: []string{"echo", "date"}, Substitution: true}},
	{name: "quoted substitution", cmd: `echo "user: $(whoami)"`,
		want: Analysis{Commands: []string{`echo "user: $(whoami)"`, "whoami"}, Roots: []string{"echo", "whoami"}, Substitution: true}},
	{name: "single quotes are not substitution", cmd: `echo '$(whoami)'`,
		want: Analysis{Commands: []string{"echo $(whoami)"}, Roots: []string{"echo"}}},
	{name: "process substitution", cmd: "diff <(ls a) <(ls b)",
		want: Analysis{Commands: []string{"diff <(ls a) <(ls b)", "ls a", "ls b"}, Roots: []string{"diff", "ls"}, Substitution: true}},
	{name: "output process substitution", cmd: "make 2> >(grep err)",
		want: Analysis{Commands: []string{"make", "grep err"}, Roots: []string{"make", "grep"}, Substitution: true,
			Dangerous: []string{"writes to a path not known until run time: >(grep err)"}}},
	{name: "substitution in assignment", cmd: "V=$(id) make",
		want: Analysis{Commands: []string{"V=$(id) make", "id"}, Roots: []string{"V=$(id) make", "id"}, Substitution: true}},
	{name: "substitution in bash -c", cmd: "bash -c 'echo $(date)'",
		want: Analysis{Commands: []string{"echo $(date)", "date"}, Roots: []string{"echo", "date"}, Substitution: true}},
	{name: "substitution in heredoc", cmd: "cat <<EOF\n$(id)\nEOF",
		want: Analysis{Commands: []string{"cat", "id"}, Roots: []string{"cat", "id"}, Substitution: true}},
	{name: "quoted heredoc", cmd: "cat <<'EOF'\n$(id)\nEOF",
		want: Analysis{Commands: []string{"cat"}, Roots: []string{"cat"}}},

	// Redirections.
	{name: "write inside", cmd: "echo hi > out.txt; echo more >> sub/log 2>&1; ls >&2 2>&-",
		want: Analysis{Commands: []string{"echo hi", "echo more", "ls"}, Roots: []string{"echo", "ls"}}},
	{name: "devices are fine", cmd: "make > /dev/null 2>/dev/stderr; ls 1>/dev/stdout",
		want: Analysis{Commands: []string{"make", "ls"}, Roots: []string{"make", "ls"}}},
	{name: "write outside", cmd: "echo x > /etc/passwd",
		want: Analysis{Commands: []string{"echo x"}, Roots: []string{"echo"}, Dangerous: []string{"writes outside the workspace: /etc/passwd"}}},
	{name: "write through dotdot", cmd: "echo x >> ../outside.txt",
		want: Analysis{Commands: []string{"echo x"}, Roots: []string{"echo"}, Dangerous: []string{"writes outside the workspace: /home/u/outside.txt"}}},
	{name: "dotdot back inside", cmd: "echo x > sub/../../proj/x",
		want: Analysis{Commands: []string{"echo x"}, Roots: []string{"echo"}}},
	{name: "sibling with common prefix", cmd: "echo x > /home/u/project2/x",
		want: Analysis{Commands: []string{"echo x"}, Roots: []string{"echo"}, Dangerous: []string{"writes outside the workspace: /home/u/project2/x"}}},
	{name: "second root", cmd: "echo x > /srv/other/f",
		want: Analysis{Commands: []string{"echo x"}, Roots: []string{"echo"}}},
	{name: "all operators", cmd: "a &> /tmp/1; b &>> /tmp/2; c >| /tmp/3; d <> /tmp/4; e >&/tmp/5; f 3> /tmp/6",
		want: Analysis{Commands: []string{"a", "b", "c", "d", "e", "f"}, Roots: []string{"a", "b", "c", "d", "e", "f"},
			Dangerous: []string{
				"writes outside the workspace: /tmp/1", "writes outside the workspace: /tmp/2",
				"writes outside the workspace: /tmp/3", "writes outside the workspace: /tmp/4",
				"writes outside the workspace: /tmp/5", "writes outside the workspace: /tmp/6",
			}}},
	{name: "reading is fine", cmd: "cat < /etc/passwd; grep x <<< /etc/y",
		want: Analysis{Commands: []string{"cat", "grep x"}, Roots: []string{"cat", "grep"}}},
	{name: "compound redirection", cmd: "{ ls; pwd; } > /tmp/x",
		want: Analysis{Commands: []string{"ls", "pwd"}, Roots: []string{"ls", "pwd"}, Dangerous: []string{"writes outside the workspace: /tmp/x"}}},
	{name: "home", cmd: "echo x > ~/notes",
		want: Analysis{Commands: []string{"echo x"}, Roots: []string{"echo"}, Dangerous: []string{"writes under a home directory: ~/notes"}}},
	{name: "unknown target", cmd: `echo x > "$OUT"`,
		want: Analysis{Commands: []string{"echo x"}, Roots: []string{"echo"}, Dangerous: []string{`writes to a path not known until run time: "$OUT"`}}},
	{name: "quoted target", cmd: `echo x > "/etc/a b"`,
		want: Analysis{Commands: []string{"echo x"}, Roots: []string{"echo"}, Dangerous: []string{"writes outside the workspace: /etc/a b"}}},
	{name: "relative to dir", cmd: "echo x > ../x; echo y > ../../y", dir: testRoot + "/sub",
		want: Analysis{Commands: []string{"echo x", "echo y"}, Roots: []string{"echo"}, Dangerous: []string{"writes outside the workspace: /home/u/y"}}},
	{name: "relative dir", cmd: "echo y > ../../y", dir: "sub",
		want: Analysis{Commands: []string{"echo y"}, Roots: []string{"echo"}, Dangerous: []string{"writes outside the workspace: /home/u/y"}}},
	{name: "tee", cmd: "make | tee -a build.log /etc/hosts",
		want: Analysis{Commands: []string{"make", "tee -a build.log /etc/hosts"}, Roots: []string{"make", "tee"}, Dangerous: []string{"writes outside the workspace: /etc/hosts"}}},
	{name: "sudo tee", cmd: "echo x | sudo tee /etc/x > /dev/null",
		want: Analysis{Commands: []string{"echo x", "tee /etc/x"}, Roots: []string{"echo", "tee"}, Dangerous: []string{"sudo", "writes outside the workspace: /etc/x"}}},
	{name: "redirect in bash -c", cmd: `bash -c "echo x > /etc/x"`,
		want: Analysis{Commands: []string{"echo x"}, Roots: []string{"echo"}, Dangerous: []string{"writes outside the workspace: /etc/x"}}},

	// Dangerous commands.
	{name: "rm -rf", cmd: "rm -rf build",
		want: Analysis{Commands: []string{"rm -rf build"}, Roots: []string{"rm"}, Dangerous: []string{"rm -r", "rm -f"}}},
	{name: "rm flags", cmd: "rm -R a; rm --recursive b; rm --force c; rm -v -f d",
		want: Analysis{Commands: []string{"rm -R a", "rm --recursive b", "rm --force c", "rm -v -f d"}, Roots: []string{"rm"}, Dangerous: []string{"rm -r", "rm -f"}}},
	{name: "plain rm", cmd: "rm -i a.txt; rm -- -rf",
		want: Analysis{Commands: []string{"rm -i a.txt", "rm -- -rf"}, Roots: []string{"rm"}}},
	{name: "find actions", cmd: `find . -name '*.o' -delete; find . -exec rm {} \; ; find . -execdir ls \; -ok pwd +`,
		want: Analysis{
			Commands:  []string{"find . -name *.o -delete", "find . -exec rm {} ;", "rm {}", "find . -execdir ls ; -ok pwd +", "ls", "pwd"},
			Roots:     []string{"find", "rm", "ls", "pwd"},
			Dangerous: []string{"find -delete", "find -exec", "find -execdir", "find -ok"},
		}},
	{name: "plain find", cmd: "find . -name x -print",
		want: Analysis{Commands: []string{"find . -name x -print"}, Roots: []string{"find"}}},
	{name: "dd", cmd: "dd if=/dev/zero of=disk.img bs=1M",
		want: Analysis{Commands: []string{"dd if=/dev/zero of=disk.img bs=1M"}, Roots: []string{"dd"}, Dangerous: []string{"dd of="}}},
	{name: "dd device", cmd: "dd if=x.iso of=/dev/sda",
		want: Analysis{Commands: []string{"dd if=x.iso of=/dev/sda"}, Roots: []string{"dd"}, Dangerous: []string{"dd of=", "writes outside the workspace: /dev/sda"}}},
	{name: "mkfs", cmd: "mkfs.ext4 /dev/sdb1; mkfs -t xfs /dev/sdc",
		want: Analysis{Commands: []string{"mkfs.ext4 /dev/sdb1", "mkfs -t xfs /dev/sdc"}, Roots: []string{"mkfs.ext4", "mkfs"}, Dangerous: []string{"mkfs"}}},
	{name: "recursive owners", cmd: "chmod -R 755 .; chown --recursive u .; chgrp -hR g .",
		want: Analysis{Commands: []string{"chmod -R 755 .", "chown --recursive u .", "chgrp -hR g ."}, Roots: []string{"chmod", "chown", "chgrp"},
			Dangerous: []string{"chmod -R", "chown -R", "chgrp -R"}}},
	{name: "plain chmod", cmd: "chmod -x script.sh",
		want: Analysis{Commands: []string{"chmod -x script.sh"}, Roots: []string{"chmod"}}},
	{name: "su", cmd: "su -c ls root",
		want: Analysis{Commands: []string{"ls"}, Roots: []string{"ls"}, Dangerous: []string{"su"}}},
	{name: "dangerous in substitution", cmd: "echo $(rm -rf ~)",
		want: Analysis{Commands: []string{"echo $(rm -rf ~)", "rm -rf ~"}, Roots: []string{"echo", "rm"}, Substitution: true, Dangerous: []string{"writes under a home directory: ~", "rm -r", "rm -f"}}},
}

func TestAnalyze(t *testing.T) {
	for _, tt := range analyzeTests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir
			if dir == "" {
				dir = testRoot
			}
			got, err := Analyze(tt.cmd, dir, testRoots)
			if err != nil {
				t.Fatalf("Analyze(%q): %v", tt.cmd, err)
			}
			checkAnalysis(t, tt.cmd, got, tt.want)
		})
	}
}

func checkAnalysis(t *testing.T, cmd string, got, want Analysis) {
	t.Helper()
	if !slices.Equal(got.Commands, want.Commands) {
		t.Errorf("Analyze(%q).Commands = %q, want %q", cmd, got.Commands, want.Commands)
	}
	if !slices.Equal(got.Roots, want.Roots) {
		t.Errorf("Analyze(%q).Roots = %q, want %q", cmd, got.Roots, want.Roots)
	}
	if got.Substitution != want.Substitution {
		t.Errorf("Analyze(%q).Substitution = %v, want %v", cmd, got.Substitution, want.Substitution)
	}
	if !slices.Equal(got.Dangerous, want.Dangerous) {
		t.Errorf("Analyze(%q).Dangerous = %q, want %q", cmd, got.Dangerous, want.Dangerous)
	}
	if !slices.Equal(got.Code, want.Code) {
		t.Errorf("Analyze(%q).Code = %q, want %q", cmd, got.Code, want.Code)
	}
	if !slices.Equal(got.Opaque, want.Opaque) {
		t.Errorf("Analyze(%q).Opaque = %q, want %q", cmd, got.Opaque, want.Opaque)
	}
	if !slices.Equal(got.Sensitive, want.Sensitive) {
		t.Errorf("Analyze(%q).Sensitive = %q, want %q", cmd, got.Sensitive, want.Sensitive)
	}
}

func TestAnalyzeDirDefaultsToFirstRoot(t *testing.T) {
	got, err := Analyze("echo x > out; echo y > ../y", "", testRoots)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"writes outside the workspace: /home/u/y"}
	if !slices.Equal(got.Dangerous, want) {
		t.Errorf("Dangerous = %q, want %q", got.Dangerous, want)
	}

	// Without roots every write is outside.
	got, err = Analyze("echo x > out", "/tmp", nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"writes outside the workspace: /tmp/out"}
	if !slices.Equal(got.Dangerous, want) {
		t.Errorf("without roots: Dangerous = %q, want %q", got.Dangerous, want)
	}
}

func TestAnalyzeParseErrors(t *testing.T) {
	for _, cmd := range []string{
		"if",
		"echo 'unterminated",
		"ls &&",
		"echo $(",
		"a | | b",
		"bash -c 'if'",
		"sudo sh -c 'echo \"'",
		"eval 'ls (('",
	} {
		_, err := Analyze(cmd, testRoot, testRoots)
		if err == nil {
			t.Errorf("Analyze(%q) = nil error, want a parse error", cmd)
			continue
		}
		if !strings.Contains(err.Error(), "could not parse the shell command") {
			t.Errorf("Analyze(%q) error = %q, want it to say the command could not be parsed", cmd, err)
		}
	}
}

func TestAnalyzeNestingBound(t *testing.T) {
	nest := func(levels int) string {
		cmd := "rm -rf /"
		for range levels {
			q, err := syntax.Quote(cmd, syntax.LangBash)
			if err != nil {
				t.Fatal(err)
			}
			cmd = "bash -c " + q
		}
		return cmd
	}

	got, err := Analyze(nest(maxNesting), testRoot, testRoots)
	if err != nil {
		t.Fatal(err)
	}
	checkAnalysis(t, "nest(maxNesting)", got, Analysis{
		Commands: []string{"rm -rf /"}, Roots: []string{"rm"}, Dangerous: []string{"writes outside the workspace: /", "rm -r", "rm -f"},
	})

	deep := nest(maxNesting + 3)
	got, err = Analyze(deep, testRoot, testRoots)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Roots, []string{"bash"}) {
		t.Errorf("Roots = %q, want the innermost analysed shell, bash", got.Roots)
	}
	if !slices.Contains(got.Dangerous, "shell commands nested too deeply to analyse") {
		t.Errorf("Dangerous = %q, want the nesting reason", got.Dangerous)
	}

	got, err = Analyze(strings.Repeat("nice ", maxWrappers+4)+"ls", testRoot, testRoots)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Roots, []string{"nice"}) || !slices.Contains(got.Dangerous, "shell commands nested too deeply to analyse") {
		t.Errorf("too many wrappers: Roots = %q, Dangerous = %q; want nice and the nesting reason", got.Roots, got.Dangerous)
	}
}

// TestAnalyzeForms checks the forms policy rules match: each command from its outermost
// wrapper in, with paths shortened to program names; the loose forms drop what changes
// what runs.
func TestAnalyzeForms(t *testing.T) {
	tests := []struct {
		cmd  string
		want []forms
	}{
		{"ls && git status", []forms{{exact: []string{"ls"}}, {exact: []string{"git status"}}}},
		{"./bin/git status", []forms{{exact: []string{"./bin/git status"}, loose: []string{"git status"}}}},
		{"sudo -u x /bin/rm -rf y", []forms{{exact: []string{"sudo -u x /bin/rm -rf y", "/bin/rm -rf y", "rm -rf y"}}}},
		{"bash -c 'timeout 5 make'", []forms{{exact: []string{"bash -c timeout 5 make", "timeout 5 make", "make"}}}},
		{"find . -exec rm {} +", []forms{{exact: []string{"find . -exec rm {} +"}}, {exact: []string{"find . -exec rm {} +", "rm {}"}}}},
		{"FOO=1 timeout 5 make", []forms{{exact: []string{"FOO=1 timeout 5 make", "FOO=1 make"}, loose: []string{"timeout 5 make", "make"}}}},
		{"env -i PATH=/x make", []forms{{exact: []string{"env -i PATH=/x make"}, loose: []string{"make"}}}},
		{"git -C . -c a=b commit -m x", []forms{{exact: []string{"git -C . -c a=b commit -m x"}, loose: []string{"git commit -m x"}}}},
		{"X=1; export Y=2", []forms{{exact: []string{"X=1"}}, {exact: []string{"export Y=2"}}}},
	}
	for _, tt := range tests {
		_, got, err := analyze(tt.cmd, lineEnv{Dir: testRoot, Roots: testRoots})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("forms of %q = %+v, want %+v", tt.cmd, got, tt.want)
		}
	}
}

func FuzzAnalyze(f *testing.F) {
	for _, tt := range analyzeTests {
		f.Add(tt.cmd)
	}
	for _, cmd := range []string{
		"bash -c \"bash -c 'bash -c \\\"ls\\\"'\"",
		"env -S 'bash -c \"rm -rf x\"'",
		"xargs -- sudo -- env -- nice -- timeout -- 1 ls",
		"a=(1 2); declare -A m=([k]=v); local -r x",
		"coproc cat; select x in a b; do echo; done",
		"[[ $(id) == x ]] && (( a[$(id)] ))",
		"f() ( ls ); function g { pwd; }",
		"echo ${x/$(id)/y} $((1+$(id)))",
		"cat <<-EOF > /etc/x\n\tbody\n\tEOF",
		"ls \\\n -l",
		"`echo rm` -rf /",
		"''",
		"sudo",
		"find -exec",
		"eval",
		"bash -c",
		"nice -n",
		"timeout",
		"!ls",
		"x=1 y=2",
		"echo \"${@:1}\" \"$'x'\" $\"loc\"",
		"ls @(a|b) !(c)",
		// Issue 22's classes.
		"rg --pre ./x.sh a; git grep -O./x.sh a; git ls-remote --upload-pack=./x.sh .",
		"tar tfI x.tar ./x; tar -cf ../x.tar --checkpoint-action=exec=./x a; tar -tf h:x",
		"uniq a ~/.bashrc; xxd -r -c16 a ../b; split -l1 a ../p; csplit -f; sort -ro../x a",
		"chmod -x ../a; chown -R u: ../b; touch -d x ../c; mkdir -m; truncate -s",
		"cat < /dev/tcp/127.0.0.1/80; exec 3<>/dev/udp/h/1; cat < $d/h/1",
		"awk -f - ; awk -f; sqlite3; sqlite3 :memory: .sh; gdb -ex; gdb -batch -ex 'thread apply all bt'; lldb -b -o",
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=a GIT_CONFIG_VALUE_0=b git x",
		"env -C; env -C .git/hooks sh -c 'echo > x'; nsenter -w; nsenter --wd=x tee y; sudo -D",
		"git -C; git --git-dir; git bisect run; git submodule foreach; ssh -o; ssh -o ProxyCommand",
	} {
		f.Add(cmd)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		a, errA := Analyze(cmd, testRoot+"/sub", testRoots)
		b, errB := Analyze(cmd, testRoot+"/sub", testRoots)
		if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
			t.Fatalf("Analyze(%q) errors differ between runs: %v, %v", cmd, errA, errB)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("Analyze(%q) differs between runs:\n%#v\n%#v", cmd, a, b)
		}
		if errA != nil {
			return
		}
		if len(a.Roots) > len(a.Commands) {
			t.Errorf("Analyze(%q): %d roots for %d commands", cmd, len(a.Roots), len(a.Commands))
		}
		for _, r := range a.Roots {
			if r == "" {
				t.Errorf("Analyze(%q).Roots = %q has an empty root", cmd, a.Roots)
			}
		}
		for _, c := range a.Commands {
			if c == "" {
				t.Errorf("Analyze(%q).Commands = %q has an empty command", cmd, a.Commands)
			}
		}
	})
}

func BenchmarkAnalyze(b *testing.B) {
	const cmd = "cd sub && timeout 60 go test -run TestX ./... 2>&1 | tee out.log | grep -n FAIL"
	for b.Loop() {
		if _, err := Analyze(cmd, testRoot, testRoots); err != nil {
			b.Fatal(err)
		}
	}
}
