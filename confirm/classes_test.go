package confirm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tables try the classes of issue 22's analysis item as a hostile repository or
// a prompt-injected model would, each with spellings beside the red team's own:
// options of allowed programs that run programs, operands and options that name files
// written, git run where the repository made the git directory, bash's /dev/tcp,
// programs that run shell text, git -c spelled in the environment, and wrappers that
// change directory. tools/shell's consent tests run some of them through bash.

// optionCase is a line that a rule for its program must not allow.
type optionCase struct {
	line  string
	allow string // the rule's commandPrefix
}

// runsOptionLines run a program their options name.
var runsOptionLines = []optionCase{
	{`rg --pre ./payload.sh hello a.txt`, "rg"},
	{`rg hello a.txt --pre=./payload.sh`, "rg"},
	{`rg --hostname-bin=./payload.sh -n x`, "rg"},
	{`ag --pager ./payload.sh x`, "ag"},
	{`git grep -O./payload.sh hello`, "git grep"},
	{`git grep --open-files-in-pager=./payload.sh hello`, "git grep"},
	{`git grep -n -O ./payload.sh hello`, "git grep"},
	{`git ls-remote --upload-pack=./payload.sh .`, "git ls-remote"},
	{`git ls-remote -u ./payload.sh .`, "git ls-remote"},
	{`git fetch --upload-pack ./payload.sh .`, "git fetch"},
	{`git fetch --upload=./payload.sh .`, "git fetch"},
	{`git pull --upload-pack=./payload.sh . main`, "git pull"},
	{`git clone -u ./payload.sh . x`, "git clone"},
	{`git clone --upload-pack=./payload.sh . x`, "git clone"},
	{`git push --receive-pack=./payload.sh . HEAD`, "git push"},
	{`git push --exec=./payload.sh . HEAD`, "git push"},
	{`git archive --remote=. --exec=./payload.sh HEAD`, "git archive"},
	{`git rebase -x ./payload.sh HEAD~1`, "git rebase"},
	{`git rebase --exec='make test' HEAD~1`, "git rebase"},
	{`git bisect run ./payload.sh`, "git bisect"},
	{`git submodule foreach ./payload.sh`, "git submodule"},
	{`git difftool -x ./payload.sh`, "git difftool"},
	{`git filter-branch --tree-filter ./payload.sh HEAD`, "git filter-branch"},
	{`git --exec-path=./bin status`, "git"},
	{`tar -tf x.tar -I ./payload.sh`, "tar"},
	{`tar -I./payload.sh -tf x.tar`, "tar"},
	{`tar tfI x.tar ./payload.sh`, "tar"},
	{`tar --use-compress-program=./payload.sh -tf x.tar`, "tar"},
	{`tar --use-comp ./payload.sh -tf x.tar`, "tar"},
	{`tar -xf x.tar --to-command=./payload.sh`, "tar"},
	{`tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec=./payload.sh a.txt`, "tar"},
	{`tar -cf x.tar -F ./payload.sh a.txt`, "tar"},
	{`tar -cf x.tar --info-script=./payload.sh a.txt`, "tar"},
	{`tar -cf x.tar --new-volume-script ./payload.sh a.txt`, "tar"},
	{`tar -tf host:x.tar --rsh-command=./payload.sh`, "tar"},
	{`tar -tf evil.example:x.tar`, "tar"},
	{`sort --compress-program=./payload.sh a.txt`, "sort"},
	{`split --filter=./payload.sh a.txt`, "split"},
	{`zip -TT ./payload.sh -T x.zip a.txt`, "zip"},
	{`rsync -e ./payload.sh a host:b`, "rsync"},
	{`rsync --rsync-path=./payload.sh a host:b`, "rsync"},
	{`ssh -o ProxyCommand=./payload.sh host`, "ssh"},
	{`ssh -oProxyCommand='./payload.sh %h' host`, "ssh"},
	{`scp -S ./payload.sh a host:b`, "scp"},
	{`scp -o 'LocalCommand ./payload.sh' -o PermitLocalCommand=yes a host:b`, "scp"},
	{`go test -exec ./payload.sh ./...`, "go test"},
	{`go vet -vettool=./payload.sh ./...`, "go vet"},
	{`go build -toolexec ./payload.sh ./...`, "go build"},
	{`man -P ./payload.sh ls`, "man"},
	{`sdiff --diff-program=./payload.sh a b`, "sdiff"},
	{`pandoc --filter ./payload.sh a.md`, "pandoc"},
	{`gcc -wrapper ./payload.sh x.c`, "gcc"},
	{`cc -B./bin x.c`, "cc"},
}

// writeOperandLines write files outside the workspace through operands and options.
var writeOperandLines = []optionCase{
	{`uniq notes.txt ~/.bashrc`, "uniq"},
	{`uniq -c notes.txt ../out`, "uniq"},
	{`uniq -f 1 notes.txt /tmp/out`, "uniq"},
	{`xxd -r dump.hex ~/.bash_login`, "xxd"},
	{`xxd -r -p dump.hex ../out`, "xxd"},
	{`xxd -c 16 a.bin /tmp/out`, "xxd"},
	{`xxd -i a.bin ../out.h`, "xxd"},
	{`split -l 1 a.txt ../p`, "split"},
	{`split a.txt ~/.p`, "split"},
	{`csplit -f ../p a.txt 1`, "csplit"},
	{`csplit --prefix=/tmp/p a.txt 1`, "csplit"},
	{`sort -o ../x a.txt`, "sort"},
	{`sort -ro/tmp/x a.txt`, "sort"},
	{`sort a.txt --output ~/.profile`, "sort"},
	{`tee -a ../x`, "tee"},
	{`touch ../x`, "touch"},
	{`touch -d yesterday ~/.x`, "touch"},
	{`mkdir -p ../x`, "mkdir"},
	{`rmdir ../x`, "rmdir"},
	{`rm ../x`, "rm"},
	{`truncate -s 0 ~/.bashrc`, "truncate"},
	{`chmod -x ~/.x`, "chmod"},
	{`chmod 600 ../x`, "chmod"},
	{`chown u ../x`, "chown"},
	{`install -d ../x`, "install"},
	{`tar -cf ../x.tar a.txt`, "tar"},
	{`tar cf /tmp/x.tar a.txt`, "tar"},
	{`tar -czf ~/x.tgz a.txt`, "tar"},
	{`tar -cf x.tar -g ../snap a.txt`, "tar"},
	{`zip ../x.zip a.txt`, "zip"},
	{`rsync -a a.txt ../b`, "rsync"},
	{`rsync a.txt host:b --log-file=../log`, "rsync"},
	{`scp host:a ../b`, "scp"},
	{`gzip ../x`, "gzip"},
	{`xz -k ~/.x`, "xz"},
	{`curl -c ../jar http://127.0.0.1/`, "curl"},
	{`curl -D ~/h http://127.0.0.1/`, "curl"},
	{`curl --trace ../t http://127.0.0.1/`, "curl"},
	{`curl --output-dir .. -O http://127.0.0.1/x`, "curl"},
	{`wget -P .. http://127.0.0.1/`, "wget"},
	{`wget -a ../log http://127.0.0.1/`, "wget"},
	{`openssl rand -out ../x 4`, "openssl"},
	{`openssl req -new -keyout ~/k -out x.csr`, "openssl"},
	{`ssh-keygen -q -N '' -f ../k`, "ssh-keygen"},
	{`git clone . ../x`, "git clone"},
	{`git clone --separate-git-dir=../g . x`, "git clone"},
	{`git init ../x`, "git init"},
	{`git worktree add ../w`, "git worktree"},
	{`git bundle create ../b HEAD`, "git bundle"},
	{`git format-patch -o ../p HEAD~1`, "git format-patch"},
	{`git submodule add ../r ../s`, "git submodule"},
	{`objcopy a.o ../b.o`, "objcopy"},
	{`strip ../x`, "strip"},
	{`sqlite3 ../x.db 'select 1'`, "sqlite3"},
	{`gcc -MF ../deps -c x.c`, "gcc"},
	{`sdiff -o ../merged a b`, "sdiff"},
	{`ffmpeg -i a.mp4 -c:v libx264 ../b.mp4`, "ffmpeg"},
	{`convert a.png ~/b.png`, "convert"},
	{`git -C .. clone proj x`, "git -C .. clone"},
	{`git -C sub -C ../.. init x`, "git -C sub -C ../.. init"},
}

// TestConsentProgramOptions: a rule for a program does not allow it with an option
// that runs a program or with an option or operand that writes outside the workspace;
// its harmless neighbours still run under the same rule.
func TestConsentProgramOptions(t *testing.T) {
	for _, tt := range append(append([]optionCase{}, runsOptionLines...), writeOperandLines...) {
		a, err := Analyze(tt.line, testRoot, testRoots)
		if err != nil {
			t.Errorf("Analyze(%q): %v", tt.line, err)
			continue
		}
		if len(a.Dangerous) == 0 {
			t.Errorf("Analyze(%q).Dangerous is empty, want a program run by an option or a write outside", tt.line)
		}
		rule := Rule{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{tt.allow, "./payload.sh", "make test"}}
		if got := newTestPolicy(t, ModeDefault, rule).Decide(shellCall(tt.line)); got.Decision != Ask {
			t.Errorf("Decide(%q) with allow %q = %s (%s), want ask", tt.line, tt.allow, got.Decision, got.Reason)
		}
		p := newTestPolicy(t, ModeDefault)
		p.Remember(shellCall(tt.line), ProceedAlways)
		if got := p.Decide(shellCall(tt.line)); got.Decision != Ask {
			t.Errorf("Decide(%q) after always = %s (%s), want ask", tt.line, got.Decision, got.Reason)
		}
	}
	// The option's text is a command for deny rules.
	deny := Rule{ToolName: "run_shell_command", Decision: Deny, CommandPrefix: []string{"rm"}}
	for _, line := range []string{
		`rg --pre '/bin/r''m' x`,
		`tar -tf x.tar --to-command "r""m -f y"`,
		`git rebase --exec 'r\m y' HEAD~1`,
		`git submodule foreach r\m y`,
		`ssh -o 'ProxyCommand=r\m y' host`,
	} {
		if got := newTestPolicy(t, ModeYolo, deny).Decide(shellCall(line)); got.Decision != Deny {
			t.Errorf("yolo: Decide(%q) with deny rm = %s (%s), want deny", line, got.Decision, got.Reason)
		}
	}
	for _, tt := range []optionCase{
		{`rg -n hello a.txt`, "rg"},
		{`rg --pre-glob '*.gz' hello`, "rg"},
		{`git grep -n hello`, "git grep"},
		{`git ls-remote origin`, "git ls-remote"},
		{`git fetch origin`, "git fetch"},
		{`tar -tf x.tar`, "tar"},
		{`rsync -a src/ sub/`, "rsync"},
		{`tar -cf x.tar a.txt`, "tar"},
		{`tar -C sub -cf ../proj/x.tar a.txt`, "tar"},
		{`sort -o out.txt a.txt`, "sort"},
		{`uniq a.txt`, "uniq"},
		{`uniq a.txt out.txt`, "uniq"},
		{`xxd a.bin`, "xxd"},
		{`xxd -r dump.hex out.bin`, "xxd"},
		{`split -l 10 a.txt part-`, "split"},
		{`touch a.txt`, "touch"},
		{`mkdir -p build/x`, "mkdir"},
		{`chmod +x script.sh`, "chmod"},
		{`gzip -c a.txt`, "gzip"},
		{`zip x.zip a.txt`, "zip"},
		{`curl -s http://127.0.0.1/`, "curl"},
		{`go test -run TestX ./...`, "go test"},
		{`git clone . sub/x`, "git clone"},
		{`ssh -o ConnectTimeout=5 host`, "ssh"},
		{`ffmpeg -i a.mp4 b.webm`, "ffmpeg"},
		{`git -C sub clone ../x y`, "git -C sub clone"},
		{`cmp a b`, "cmp"},
		{`diff -u a b`, "diff"},
	} {
		rule := Rule{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{tt.allow}}
		if got := newTestPolicy(t, ModeDefault, rule).Decide(shellCall(tt.line)); got.Decision != Allow {
			t.Errorf("Decide(%q) with allow %q = %s (%s), want allow", tt.line, tt.allow, got.Decision, got.Reason)
		}
	}
}

// TestConsentProgramOperandsSensitive: a sensitive file named as what a program writes
// is asked about even under a blanket allow rule, relative to a wrapper's directory
// too.
func TestConsentProgramOperandsSensitive(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	roots := []string{root}
	allow := Rule{ToolName: "run_shell_command", Decision: Allow}
	for _, line := range []string{
		`xxd -r dump.hex .git/hooks/pre-commit`,
		`split -l 1 a.txt .git/hooks/pre-`,
		`csplit -f .git/hooks/x a.txt 1`,
		`touch .git/hooks/pre-commit`,
		`tar -cf .git/config a.txt`,
		`env -C .git/hooks sh -c 'echo x > pre-commit'`,
		`env --chdir=.git/hooks sh -c 'printf x > post-checkout; chmod +x post-checkout'`,
		`env -C.git/hooks tee pre-commit`,
		`env --ch .git sh -c 'echo x >> config'`,
		`unshare --wd=.git/hooks sh -c 'echo x > pre-commit'`,
		`unshare -w .git/hooks sh -c 'echo x > pre-commit'`,
		`nsenter --wd=.git/hooks sh -c 'echo x > pre-commit'`,
		`nsenter -w.git/hooks cp /tmp/x pre-commit`,
		`sudo -D .git/hooks tee pre-commit`,
		`timeout 5 env -C .git/hooks sed -i s/a/b/ pre-commit`,
		`env -C .git bash -c 'cd hooks && echo x > pre-commit'`,
		`find .git -name hooks -execdir sh -c 'echo x > hooks/pre-commit' \;`,
	} {
		c := shellCall(line)
		c.Details.Directory = root
		r := allow
		if strings.Contains(line, "-execdir") {
			// Where -execdir's command writes is not known until run time: asked
			// under rules for programs.
			r = Rule{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{"find", "sh"}}
		}
		for _, mode := range []Mode{ModeDefault, ModeAutoEdit} {
			p, err := NewPolicy(mode, []Rule{r}, func() []string { return roots })
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Decide(c); got.Decision != Ask {
				t.Errorf("%s with a blanket allow rule: Decide(%q) = %s (%s), want ask", mode, line, got.Decision, got.Reason)
			}
		}
	}
	// A directory-changing wrapper is a cd for relative writes outside the workspace.
	for _, line := range []string{`env -C .. sh -c 'echo x > f'`, `env --chdir=/tmp touch f`, `unshare --wd=.. sh -c 'echo x > f'`} {
		a, err := Analyze(line, root, roots)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(a.Dangerous, "\n"), "writes outside the workspace") {
			t.Errorf("Analyze(%q).Dangerous = %q, want a write outside the workspace", line, a.Dangerous)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`env -C sub sh -c 'echo x > f'`, `env -i FOO=1 touch f`} {
		a, err := Analyze(line, root, roots)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Dangerous) > 0 || len(a.Sensitive) > 0 {
			t.Errorf("Analyze(%q) = Dangerous %q, Sensitive %q; want neither", line, a.Dangerous, a.Sensitive)
		}
	}
}

// TestConsentGitRepository: git run where it would use a git directory the repository
// made (an embedded bare repository, a .git file pointing at one) is asked about under
// a rule for git, and refused under a deny rule it could hide from; git in the
// workspace's own repository, a worktree's or a submodule's is not.
func TestConsentGitRepository(t *testing.T) {
	root := t.TempDir()
	mk := func(dirs ...string) {
		for _, d := range dirs {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk(".git/objects", ".git/refs/heads", ".git/worktrees/wt", ".git/modules/m",
		"fixtures/evil.git/objects", "fixtures/evil.git/refs/heads", "fixtures/bare/refs", "fixtures/linked", "sub/deep", "pointer", "wt", "m", "plain")
	write("fixtures/linked/HEAD", "ref: refs/heads/main\n")
	write("fixtures/linked/commondir", "../evil.git\n")
	write(".git/HEAD", "ref: refs/heads/main\n")
	write("fixtures/evil.git/HEAD", "ref: refs/heads/main\n")
	write("fixtures/evil.git/config", "[core]\n\tfsmonitor = touch M\n")
	write("fixtures/bare/HEAD", "ref: refs/heads/main\n")
	write("pointer/.git", "gitdir: ../fixtures/evil.git\n")
	write("wt/.git", "gitdir: "+filepath.Join(root, ".git", "worktrees", "wt")+"\n")
	write("m/.git", "gitdir: ../.git/modules/m\n")
	roots := []string{root}
	allow := Rule{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{"git", "cd", "env -C fixtures/evil.git git"}}
	deny := Rule{ToolName: "run_shell_command", Decision: Deny, CommandPrefix: []string{"rm"}}
	asked := []struct{ line, dir string }{
		{"git status", "fixtures/evil.git"},
		{"git log", "fixtures/evil.git/objects"},
		{"git status", "fixtures/bare"},
		{"git status", "pointer"},
		{"git status", "fixtures/linked"},
		{"git -C fixtures/evil.git status", ""},
		{"git -Cfixtures/evil.git diff", ""},
		{"git -C fixtures -C evil.git status", ""},
		{"git -C pointer status", ""},
		{"cd fixtures/evil.git && git status", ""},
		{"cd fixtures; cd evil.git; git status", ""},
		{"env -C fixtures/evil.git git status", ""},
		{"git --git-dir=fixtures/evil.git log", ""},
		{"git --git-dir fixtures/bare log", ""},
		{"GIT_DIR=fixtures/evil.git git log", ""},
		{"bash -c 'cd fixtures/evil.git && git status'", ""},
		{`cd "$D" && git status`, ""},
	}
	for _, tt := range asked {
		c := shellCall(tt.line)
		c.Details.Directory = filepath.Join(root, tt.dir)
		p, err := NewPolicy(ModeDefault, []Rule{allow}, func() []string { return roots })
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Decide(c); got.Decision != Ask {
			t.Errorf("in %s: Decide(%q) with allow git = %s (%s), want ask", tt.dir, tt.line, got.Decision, got.Reason)
		}
		p, err = NewPolicy(ModeYolo, []Rule{deny}, func() []string { return roots })
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Decide(c); got.Decision != Deny {
			t.Errorf("yolo in %s: Decide(%q) with deny rm = %s (%s), want deny", tt.dir, tt.line, got.Decision, got.Reason)
		}
	}
	for _, tt := range []struct{ line, dir string }{
		{"git status", ""},
		{"git status", "sub/deep"},
		{"git status", "plain"},
		{"git status", ".git"},
		{"git status", "wt"},
		{"git status", "m"},
		{"git -C sub status", ""},
		{"git --git-dir=.git log", ""},
		{"cd sub && git status", ""},
	} {
		c := shellCall(tt.line)
		c.Details.Directory = filepath.Join(root, tt.dir)
		p, err := NewPolicy(ModeDefault, []Rule{allow}, func() []string { return roots })
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Decide(c); got.Decision != Allow {
			t.Errorf("in %s: Decide(%q) with allow git = %s (%s), want allow", tt.dir, tt.line, got.Decision, got.Reason)
		}
	}
}

// TestConsentNetworkRedirect: bash's /dev/tcp and /dev/udp, read or written, are a
// network connection that no rule for a program allows, asked even under a blanket
// allow rule; yolo runs it.
func TestConsentNetworkRedirect(t *testing.T) {
	lines := []string{
		`cat < /dev/tcp/127.0.0.1/18093`,
		`head -c 100 </dev/tcp/localhost/22`,
		`grep x < /dev/udp/10.0.0.1/53`,
		`echo hi > /dev/tcp/127.0.0.1/80`,
		`echo hi >> "/dev/tcp/[::1]/80"`,
		`exec 3<>/dev/tcp/127.0.0.1/80; cat <&3`,
		`cat 0</dev/tcp/127.0.0.1/80`,
		`bash -c 'cat < /dev/tcp/169.254.169.254/80'`,
		`x=$(< /dev/tcp/127.0.0.1/80)`,
		`while read -r l; do echo "$l"; done < /dev/tcp/127.0.0.1/80`,
	}
	prefix := Rule{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{"cat", "head", "grep", "echo", "exec", "bash", "read", "x="}}
	blanket := Rule{ToolName: "run_shell_command", Decision: Allow}
	for _, line := range lines {
		for _, r := range []Rule{prefix, blanket} {
			for _, mode := range []Mode{ModeDefault, ModeAutoEdit} {
				if got := newTestPolicy(t, mode, r).Decide(shellCall(line)); got.Decision != Ask {
					t.Errorf("%s with %+v: Decide(%q) = %s (%s), want ask", mode, r, line, got.Decision, got.Reason)
				}
			}
		}
		p := newTestPolicy(t, ModeDefault)
		p.Remember(shellCall(line), ProceedAlways)
		if got := p.Decide(shellCall(line)); got.Decision != Ask {
			t.Errorf("Decide(%q) after always = %s (%s), want ask", line, got.Decision, got.Reason)
		}
		if got := newTestPolicy(t, ModeYolo).Decide(shellCall(line)); got.Decision != Allow {
			t.Errorf("yolo: Decide(%q) = %s (%s), want allow", line, got.Decision, got.Reason)
		}
	}
	// A path not known until run time may be /dev/tcp.
	for _, line := range []string{`for d in /dev/tcp; do cat < $d/127.0.0.1/80; done`, `cat < "${D:-/dev/tcp/127.0.0.1/80}"`} {
		if got := newTestPolicy(t, ModeDefault, prefix).Decide(shellCall(line)); got.Decision != Ask {
			t.Errorf("Decide(%q) with allow cat = %s (%s), want ask", line, got.Decision, got.Reason)
		}
	}
	// Reading files and here-strings is fine.
	for _, line := range []string{`cat < a.txt`, `cat <<< /dev/tcp/127.0.0.1/80`, `cat < /dev/null`, `cat /dev/tcp/127.0.0.1/80`} {
		if got := newTestPolicy(t, ModeDefault, prefix).Decide(shellCall(line)); got.Decision != Allow {
			t.Errorf("Decide(%q) with allow cat = %s (%s), want allow", line, got.Decision, got.Reason)
		}
	}
}

// shellTextLines run rm through a program that runs shell text: deny rules see them
// as interpreters.
var shellTextLines = []optionCase{
	{`echo 'BEGIN{system("r" "m x")}' | awk -f -`, "awk"},
	{`awk -f /dev/stdin <<< 'BEGIN{system("r" "m x")}'`, "awk"},
	{`gawk --file=- < prog.awk`, "gawk"},
	{`awk -f- < prog.awk`, "awk"},
	{`gawk -l ./evil.so 'BEGIN{}'`, "gawk"},
	{`awk 'BEGIN { cmd = "r" "m x"; cmd | getline }'`, "awk"},
	{`sqlite3 :memory: '.shell r\m x'`, "sqlite3"},
	{`sqlite3 :memory: '.system r\m x'`, "sqlite3"},
	{`sqlite3 :memory: '.sh r\m x'`, "sqlite3"},
	{`sqlite3 -cmd '.once |r\m' :memory: 'select 1'`, "sqlite3"},
	{`sqlite3 :memory: "select writefile('../x', 'y')"`, "sqlite3"},
	{`echo '.shell r\m x' | sqlite3 :memory:`, "sqlite3"},
	{`sqlite3 -init ./cmds :memory: 'select 1'`, "sqlite3"},
	{`gdb -batch -ex 'shell r\m x'`, "gdb"},
	{`gdb -batch -ex '!r\m x'`, "gdb"},
	{`gdb -batch --eval-command='pipe bt | r\m x'`, "gdb"},
	{`gdb -batch -ex 'thread apply all shell r\m x'`, "gdb"},
	{`gdb -batch -x ./cmds`, "gdb"},
	{`echo 'shell r\m x' | gdb -q`, "gdb"},
	{`lldb -b -o 'platform shell r\m x'`, "lldb"},
	{`vim -es -c '!r\m x' -c 'q!'`, "vim"},
	{`vim -es '+!r\m x' '+q!'`, "vim"},
	{`nvim --headless --cmd '!r\m x' +q`, "nvim"},
	{`ex -s -c '!r\m x' -c q`, "ex"},
	{`echo ':!r\m x' | vi -s`, "vi"},
	{`printf '!r%sm x\nq\n' '' | ed -s`, "ed"},
	{`ed -s f < cmds`, "ed"},
	{`dc -e '!r\m x'`, "dc"},
	{`emacs --batch --eval '(shell-command "r\m x")'`, "emacs"},
	{`m4 < macros`, "m4"},
	{`psql -c '\! r\m x'`, "psql"},
	{`psql -f cmds.sql`, "psql"},
	{`psql < cmds.sql`, "psql"},
	{`mysql -e 'system r\m x'`, "mysql"},
	{`mysql db < cmds.sql`, "mysql"},
	{`echo 'r\m x' | at now`, "at"},
	{`crontab jobs.txt`, "crontab"},
	{`tmux new -d 'r\m x'`, "tmux"},
	{`screen -dm r\m x`, "screen"},
	{`julia -e 'run(` + "`r\\m x`" + `)'`, ""},
	{`expect -c 'spawn r\m x'`, ""},
}

// TestConsentShellTextPrograms: a deny rule refuses, in every mode, a program running
// shell text it cannot check; a rule for the program does not allow it; plain uses
// still run under that rule.
func TestConsentShellTextPrograms(t *testing.T) {
	deny := Rule{ToolName: "run_shell_command", Decision: Deny, CommandPrefix: []string{"rm"}}
	for _, tt := range shellTextLines {
		for _, mode := range []Mode{ModeDefault, ModeYolo} {
			p := newTestPolicy(t, mode, deny, Rule{ToolName: "*", Decision: Allow, Priority: -1})
			if got := p.Decide(shellCall(tt.line)); got.Decision != Deny {
				t.Errorf("%s: Decide(%q) with deny rm = %s (%s), want deny", mode, tt.line, got.Decision, got.Reason)
			}
		}
		if err := (CommandFilter{Deny: []string{"rm"}}).Check(tt.line, testRoot, testRoots); err == nil {
			t.Errorf("excludeTools rm: Check(%q) = nil, want refused", tt.line)
		}
		if tt.allow == "" {
			continue // an interpreter given code inline, which a rule for it allows
		}
		rule := Rule{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{tt.allow, "echo", "printf"}}
		if got := newTestPolicy(t, ModeDefault, rule).Decide(shellCall(tt.line)); got.Decision != Ask {
			t.Errorf("Decide(%q) with allow %q = %s (%s), want ask", tt.line, tt.allow, got.Decision, got.Reason)
		}
	}
	for _, tt := range []optionCase{
		{`awk '{print $1}' a.txt`, "awk"},
		{`awk -F: -v n=1 '$1 == n {print}' a.txt`, "awk"},
		{`awk -f prog.awk a.txt`, "awk"},
		{`sqlite3 db.sqlite 'select count(*) from t'`, "sqlite3"},
		{`sqlite3 db.sqlite .tables`, "sqlite3"},
		{`sqlite3 -readonly db.sqlite '.schema t'`, "sqlite3"},
		{`gdb -batch -ex bt ./prog core`, "gdb"},
		{`gdb --batch -ex 'info registers' -ex 'thread 1' ./prog core`, "gdb"},
		{`vim --version`, "vim"},
		{`psql -c 'select 1'`, "psql"},
		{`mysql -p -e 'select 1' db`, "mysql"},
		{`crontab -l`, "crontab"},
	} {
		rule := Rule{ToolName: "run_shell_command", Decision: Allow, CommandPrefix: []string{tt.allow}}
		if got := newTestPolicy(t, ModeDefault, rule).Decide(shellCall(tt.line)); got.Decision != Allow {
			t.Errorf("Decide(%q) with allow %q = %s (%s), want allow", tt.line, tt.allow, got.Decision, got.Reason)
		}
	}
}

// TestConsentGitConfigEnvironment: GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n,
// GIT_CONFIG_VALUE_n, GIT_CONFIG_PARAMETERS and the GIT_CONFIG files are git -c: a deny
// rule refuses what they could hide, in every mode.
func TestConsentGitConfigEnvironment(t *testing.T) {
	deny := Rule{ToolName: "run_shell_command", Decision: Deny, CommandPrefix: []string{"git commit"}}
	for _, line := range []string{
		`git -c alias.ci=commit ci -m x`,
		`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.ci GIT_CONFIG_VALUE_0=commit git ci -m x`,
		`GIT_CONFIG_PARAMETERS="'alias.ci'='commit'" git ci -m x`,
		`export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.ci GIT_CONFIG_VALUE_0=commit; git ci -m x`,
		`env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.ci GIT_CONFIG_VALUE_0=commit git ci -m x`,
		`env -i GIT_CONFIG_PARAMETERS="'alias.ci'='commit'" /usr/bin/git ci`,
		`GIT_CONFIG_KEY_0=alias.ci; GIT_CONFIG_VALUE_0=commit; GIT_CONFIG_COUNT=1; export GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0; git ci`,
		`declare -x GIT_CONFIG_GLOBAL=./cfg; git ci`,
		`GIT_CONFIG=./cfg git ci`,
		`GIT_CONFIG_SYSTEM=./cfg git ci`,
		`read -r GIT_CONFIG_PARAMETERS < p; export GIT_CONFIG_PARAMETERS; git ci`,
		`timeout 5 env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.ci GIT_CONFIG_VALUE_0=commit git ci`,
		`bash -c 'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.ci GIT_CONFIG_VALUE_0=commit git ci'`,
		`HOME=./evil git ci`,
		`XDG_CONFIG_HOME=./evil git ci`,
		`export GIT_DIR=fixtures/evil.git; git ci`,
		`GIT_ALLOW_PROTOCOL=ext git clone 'ext::sh -c git% ci' x`,
	} {
		for _, mode := range []Mode{ModeDefault, ModeYolo} {
			p := newTestPolicy(t, mode, deny, Rule{ToolName: "*", Decision: Allow, Priority: -1})
			if got := p.Decide(shellCall(line)); got.Decision != Deny {
				t.Errorf("%s: Decide(%q) with deny git commit = %s (%s), want deny", mode, line, got.Decision, got.Reason)
			}
		}
		if err := (CommandFilter{Deny: []string{"git commit"}}).Check(line, testRoot, testRoots); err == nil {
			t.Errorf("excludeTools git commit: Check(%q) = nil, want refused", line)
		}
		p := newTestPolicy(t, ModeDefault)
		p.Remember(shellCall(line), ProceedAlways)
		if got := p.Decide(shellCall(line)); got.Decision != Ask {
			t.Errorf("Decide(%q) after always = %s (%s), want ask", line, got.Decision, got.Reason)
		}
	}
	// Other git variables are not configuration.
	p := newTestPolicy(t, ModeYolo, deny)
	if got := p.Decide(shellCall(`GIT_PAGER=cat git log`)); got.Decision != Allow {
		t.Errorf("yolo: Decide(GIT_PAGER=cat git log) with deny git commit = %s (%s), want allow", got.Decision, got.Reason)
	}
}

// TestConsentReadsStayAllowed: reading a sensitive file with a program that only reads
// is not a write, while the same program's output operand is.
func TestConsentReadsStayAllowed(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for line, sensitive := range map[string]bool{
		`xxd .git/config`:                   false,
		`xxd -l 64 .git/index`:              false,
		`xxd -r dump .git/hooks/pre-commit`: true,
		`xxd a.bin .git/hooks/pre-commit`:   true,
	} {
		a, err := Analyze(line, root, []string{root})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(a.Sensitive) > 0; got != sensitive {
			t.Errorf("Analyze(%q).Sensitive = %q, want sensitive %v", line, a.Sensitive, sensitive)
		}
	}
}
