package confirm

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Analysis describes what a shell command line runs. The policy allowlists shell calls
// by their Roots, asks again about any call with a Substitution, a Dangerous reason or a
// Sensitive write, and refuses calls with Opaque commands wherever a deny rule could
// match what they hide.
//
// Dangerous lists, without repeats and in the order found, the reasons from this fixed
// set:
//
//   - "sudo", "doas", "su": the command runs with another user's rights;
//   - "rm -r", "rm -f": rm with -r, -R, --recursive, -f or --force, alone or combined (-rf);
//   - "find -exec", "find -execdir", "find -ok", "find -okdir", "find -delete";
//   - "dd of=": dd writing to a file or device;
//   - "mkfs": mkfs or mkfs.TYPE;
//   - "chmod -R", "chown -R", "chgrp -R": recursive permission or owner changes;
//   - "opens a network connection: /dev/tcp/HOST/PORT": see Network;
//   - "reads from a path not known until run time …: WORD": an input redirection
//     from a path with expansions, which may be /dev/tcp/…;
//   - "runs a program or command its options name: COMMAND": an option whose value
//     is a program or shell text the program runs (rg --pre, tar -I and
//     --to-command, sort --compress-program, split --filter, git's --upload-pack,
//     --receive-pack, --exec, grep -O, rebase --exec, bisect run, ssh -o
//     ProxyCommand …), whose text is analysed as a command in turn;
//   - "runs shell commands from text no rule can see: COMMAND (WHY)": awk with
//     system() or a pipe, or its program on its input (-f -); sqlite3 with
//     dot-commands or on its input; gdb or lldb with commands that do more than show
//     state, or on their input; vim, ed, dc, emacs --eval, m4 on its input;
//   - "runs git with a git directory the repository made, whose config can run
//     commands: DIR": git run where it would use a directory shaped as a git
//     directory outside any .git folder, or a .git file pointing at one; also git run
//     in a directory, or with a git directory, not known until run time, and git
//     --exec-path=DIR, which runs git's programs from DIR;
//   - "takes options from a file or command …": curl -K, wget -e and --config;
//   - "awk's program writes files it names: …": print or printf with a redirection;
//   - "writes outside the workspace: PATH": a redirection (>, >>, >|, &>, &>>, <>, >&FILE),
//     a tee file, dd's of=, GNU time's -o, script's log file, the destination of cp,
//     mv, install or ln, or a file another program's option or operand names as one
//     it writes (sort -o, uniq IN OUT, xxd IN OUT, split's prefix, touch, mkdir, rm,
//     truncate, chmod, tar -cf, zip, rsync's and scp's destination, git clone's and
//     init's directory, curl -c …) whose target, resolved against the working directory with
//     symbolic links followed as the kernel would, lies outside every root;
//     /dev/null, /dev/stdout and /dev/stderr are fine;
//   - "writes under a home directory: PATH": such a target starting with ~;
//   - "writes to a path not known until run time: WORD": such a target with expansions,
//     or a relative one in a line that changes to a directory not known until run time;
//   - "command name not known until run time: WORD": a command whose name has expansions,
//     globs or ANSI-C quoting;
//   - "runs a command not known until run time: COMMAND": bash -c, eval, env -S, su -c
//     or a wrapper given text with expansions, a shell or interpreter reading its
//     program from standard input, or a wrapper whose command cannot be told apart
//     from its options;
//   - "shell commands nested too deeply to analyse": more than eight levels of bash -c,
//     eval or find -exec, or more than sixteen wrappers around one command.
type Analysis struct {
	// Commands holds each simple command's words joined by spaces, in order, after
	// unwrapping the wrappers that do not change what runs (timeout, nice, xargs …):
	// "git status", "grep -n foo". Leading assignments, and wrappers that change the
	// command's environment or identity (env -i, env -u, exec -c), stay in front:
	// "GOFLAGS=-x go test". A statement of assignments alone is a command too. Literal
	// words appear unquoted and unescaped, words with expansions as written.
	Commands []string
	// Roots holds, without repeats and in order, what an "always" answer for the line
	// allows: the program of each command (its name for a program of the system's
	// program folders, so /usr/bin/git gives "git"; other paths as written, so ./git is
	// not git) after the assignments and wrapper words that stay in front of it
	// ("GOFLAGS=-x go"), and, for the builtins that set variables (export, declare,
	// read, unset, set …), the whole command.
	Roots []string
	// Substitution reports that bash evaluates something in the line as code: $(...),
	// backticks, <(...) or >(...), or any of the Code forms.
	Substitution bool
	// Code says, without repeats and in order, what in the line makes bash run data as
	// code besides command and process substitution: arithmetic evaluation of a variable
	// (in $((…)), $[…], ((…)), let, for ((…)), [[ … -eq … ]], array subscripts, ${x:y},
	// declare -i), ${!x}, ${x@P}, eval, source and ., trap, bash -c with text that has
	// expansions, and builtins given variable names with subscripts or expansions
	// (printf -v, read, declare, unset, test -v …).
	Code []string
	// Dangerous holds human-readable reasons to ask again whatever the allowlist says.
	Dangerous []string
	// Opaque lists the commands whose program, or the program they make run, is not
	// known before the line runs: a command name with expansions, a wrapper whose
	// command cannot be found, a shell or interpreter given code inline or on its input,
	// a program that runs shell text (awk with system(), sqlite3's .shell, gdb's shell,
	// vim, ed …), git run with a git directory the repository made, and, as NAME=…,
	// assignments that change what a command name or git runs (PATH, BASH_ENV,
	// GIT_CONFIG_COUNT, GIT_CONFIG_PARAMETERS, GIT_DIR, HOME …).
	// A deny rule that could match a command cannot be checked against these.
	Opaque []string
	// Sensitive lists the files the line writes (as for "writes outside the
	// workspace") that hold configuration that runs code or decides consent:
	// anything under .git, .agentls, .gemini or .vscode, and the user's agentls and
	// Gemini CLI settings.
	Sensitive []string
	// Network lists the network connections the line opens through bash's own
	// /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT in a redirection, read or written
	// ("cat < /dev/tcp/127.0.0.1/80"): a channel that no program rule names and that
	// web_fetch's address guard does not watch. Each is also a Dangerous reason.
	Network []string
	// Reshapes reports that the line may change the shape of the file tree: make,
	// move or remove links or directories (ln, mv, cp -r, rsync, mkdir, rm -r …),
	// check out or unpack files (git checkout, switch, reset, stash, clone, worktree
	// …; tar x, unzip, patch), or run a command not known before it runs (Opaque).
	// Paths judged before such a line runs, such as another call's redirection into
	// a directory it turns into a link, may name other files after it.
	Reshapes bool
}

// maxNesting bounds how many levels of bash -c, eval and find -exec are analysed, and
// maxWrappers how many wrappers (sudo, env, ...) are removed from one command.
const (
	maxNesting  = 8
	maxWrappers = 16
)

// lineEnv is where a command line runs, for judging what it writes.
type lineEnv struct {
	// Dir is the working directory (the first root when empty; relative to it when
	// relative).
	Dir string
	// Roots are the workspace roots.
	Roots []string
	// Protected are files and directories outside the workspace's own configuration
	// folders that a write must not reach without asking: the user's settings and trust
	// files.
	Protected []string
}

// Analyze parses a shell command line and reports the commands it runs. dir is the
// directory it runs in (the first root when empty) and roots are the workspace roots,
// both used to tell whether a redirection writes outside the workspace.
//
// Every simple command counts, wherever it appears: pipelines, lists, subshells,
// blocks, loop and if bodies, function bodies, command substitutions. These wrappers
// are unwrapped so the command they run is what counts: sudo and doas (also reported as
// Dangerous), env (its options and VAR=val words; -S is split on blanks), timeout,
// nice, nohup, setsid, stdbuf, ionice, chrt, taskset, flock, xargs (nothing after its
// options means xargs itself), command (but not command -v or -V), builtin, exec,
// busybox, unshare, nsenter, GNU time; bash, sh, zsh, dash and ksh with -c, su -c,
// script -c, flock -c, watch and eval have their text parsed in turn when it is
// literal; the command of find -exec and its kin counts too, and so does the text of
// an option that makes a program run a command (tar --to-command, git rebase --exec).
// A wrapper with nothing to run is itself the command. Other programs that run
// commands of their own (make, a script) are judged by their own command line only.
//
// Analyze runs nothing, but it follows symbolic links on the way to each file the line
// writes, and looks for the git directory a git command would use. A line that cannot be parsed, here or in the text given to bash -c or eval,
// gives an error saying so.
func Analyze(command, dir string, roots []string) (Analysis, error) {
	a, _, err := analyze(command, lineEnv{Dir: dir, Roots: roots})
	return a, err
}

// forms are the forms of one command that policy rules match.
type forms struct {
	// exact are the forms an allow rule may match, from the outermost wrapper in: each
	// keeps the command's assignments and the wrapper words that change what runs.
	exact []string
	// loose are further forms that only deny and ask rules match: the command with
	// its assignments and wrapper options dropped, and without the global options of
	// programs such as git and go ("git -C x commit" as "git commit").
	loose []string
}

// analyze is Analyze that also returns the forms of each command that policy rules
// match, so that a rule for "sudo" or "timeout" still sees the wrapper and a deny rule
// for "rm" sees "FOO=1 rm".
func analyze(command string, env lineEnv) (Analysis, []forms, error) {
	an := &analyzer{
		env:        env,
		seenRoot:   make(map[string]bool),
		seenDanger: make(map[string]bool),
		seenCode:   make(map[string]bool),
	}
	err := an.source(command, 0, nil, nil)
	if an.wrote && an.linksMade {
		an.danger("writes to paths that links the line makes or moves may redirect")
	}
	an.out.Reshapes = an.linksMade || an.dirsChanged || len(an.out.Opaque) > 0
	return an.out, an.forms, err
}

// analyzer accumulates the analysis of one command line.
type analyzer struct {
	env       lineEnv
	roots     []string // env.Roots with symbolic links resolved, once a write needs them
	protected []string // env.Protected likewise
	// bases are the directories that relative paths may be relative to, as bash's
	// logical cd and the kernel's physical one see them: the working directory and every
	// literal cd target of the line. unknownBase is set when the line changes to a
	// directory not known until run time.
	bases       []string
	unknownBase bool
	// wrote and linksMade record that the line writes a file, and that it makes or
	// moves links (ln, cp -s, mv, tar x, git checkout …), which can redirect its writes.
	wrote, linksMade bool
	// dirsChanged records that the line makes or removes directories, or unpacks
	// files (mkdir, rm -r, tar x …): see Analysis.Reshapes.
	dirsChanged bool

	out        Analysis
	forms      []forms
	seenRoot   map[string]bool
	seenDanger map[string]bool
	seenCode   map[string]bool
}

// source parses src and analyses every command in it. outer holds the forms of the
// wrappers src was given to (bash -c, eval), and keep the words that stay in front of
// each of its commands (env -i bash -c 'ls' runs "env -i ls").
func (an *analyzer) source(src string, depth int, outer *forms, keep []word) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
	if err != nil {
		return fmt.Errorf("could not parse the shell command: %w", err)
	}
	if err := misread(src, f); err != nil {
		return fmt.Errorf("could not parse the shell command: %w", err)
	}
	an.directories(src, f)
	var first error
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			an.out.Substitution = true
		case *syntax.ArithmExp:
			an.arithm(src, n.X, "$((…))")
		case *syntax.ArithmCmd:
			an.arithm(src, n.X, "((…))")
		case *syntax.LetClause:
			// let is a builtin run as a command, which rules must name like any other.
			ws := append(slices.Clone(keep), word{val: "let", src: "let", lit: true})
			for _, e := range n.Exprs {
				an.arithm(src, e, "let")
				t := nodeText(src, e)
				ws = append(ws, word{val: t, src: t})
			}
			an.emitWhole(ws, outer)
		case *syntax.CStyleLoop:
			for _, e := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
				an.arithm(src, e, "for ((…))")
			}
		case *syntax.WordIter:
			// for NAME in …; select NAME in …: an assignment of each word to NAME.
			an.assigned(n.Name.Value)
			if !plainVariable(n.Name.Value) {
				ws := append(slices.Clone(keep), word{val: "for", src: "for", lit: true}, word{val: n.Name.Value, src: n.Name.Value, lit: true})
				an.emitWhole(ws, outer)
			}
		case *syntax.CoprocClause:
			if n.Name != nil {
				name := newWord(src, n.Name)
				an.assigned(name.val)
				if !name.lit || !plainVariable(name.val) {
					an.emitWhole(append(slices.Clone(keep), word{val: "coproc", src: "coproc", lit: true}, name), outer)
				}
			}
		case *syntax.ParamExp:
			an.param(src, n)
		case *syntax.Assign:
			an.subscript(src, n.Index)
			if n.Name != nil {
				an.assigned(n.Name.Value)
			}
		case *syntax.ArrayElem:
			an.subscript(src, n.Index)
		case *syntax.BinaryTest:
			an.binaryTest(src, n)
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
				an.varName(testWord(src, n.X), "[[ "+n.Op.String()+" … ]]")
			}
		case *syntax.CallExpr:
			if err := an.callExpr(src, n, depth, outer, keep); err != nil && first == nil {
				first = err
			}
		case *syntax.DeclClause:
			an.decl(src, n, outer, keep)
		case *syntax.Redirect:
			an.redirect(src, n)
		}
		return true
	})
	return first
}

// misread reports the constructs that the parser reads otherwise than bash does, so
// that the analysis would judge commands other than those bash runs: a carriage return,
// a backslash at the end of a comment (bash ends the comment at the newline; the parser
// joins the next line to it), and a line continuation in a line holding a
// here-document (bash joins the lines before it looks for the delimiter).
func misread(src string, f *syntax.File) error {
	if strings.ContainsRune(src, '\r') {
		// The parser takes a backslash before CR LF as a line continuation and "EOF\r"
		// as a here-document's end; bash does neither.
		return errors.New("the command contains a carriage return")
	}
	var err error
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Comment:
			if strings.Contains(n.Text, "\\\n") || strings.HasSuffix(n.Text, "\\") {
				err = errors.New("a comment ends with a backslash")
			}
		case *syntax.Redirect:
			if (n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc) && strings.Contains(src, "\\\n") {
				err = errors.New("a here-document in a line with a line continuation")
			}
		}
		return err == nil
	})
	return err
}

// callExpr analyses a simple command with its leading assignments.
func (an *analyzer) callExpr(src string, n *syntax.CallExpr, depth int, outer *forms, keep []word) error {
	keep = slices.Clone(keep)
	for _, a := range n.Assigns {
		t := nodeText(src, a)
		keep = append(keep, word{val: t, src: t})
	}
	if len(n.Args) == 0 {
		// Assignments alone set variables that later commands of the line inherit
		// when exported (PATH, GIT_SSH_COMMAND …): they are a command of their own.
		an.emitWhole(keep, outer)
		return nil
	}
	ws := make([]word, len(n.Args))
	for i, w := range n.Args {
		ws[i] = newWord(src, w)
	}
	return an.call(keep, ws, depth, outer)
}

// decl records export, declare, local, readonly, typeset and nameref, builtins that
// set variables (and so what later commands run); declare -i and -n make later
// assignments arithmetic or indirect, and names with subscripts are evaluated.
func (an *analyzer) decl(src string, n *syntax.DeclClause, outer *forms, keep []word) {
	ws := append(slices.Clone(keep), word{val: n.Variant.Value, src: n.Variant.Value, lit: true})
	for _, a := range n.Args {
		if a.Name == nil && a.Value == nil && a.Array == nil {
			continue
		}
		if a.Naked && a.Name == nil {
			w := newWord(src, a.Value)
			switch {
			case w.lit && strings.HasPrefix(w.val, "-") && strings.ContainsAny(w.val, "in"):
				an.code(n.Variant.Value + " " + w.val)
			case w.lit && strings.HasPrefix(w.val, "-"):
			default:
				// A name or NAME=value given as a word: bash parses it at run time.
				an.varName(w, n.Variant.Value)
			}
			ws = append(ws, w)
			continue
		}
		t := nodeText(src, a)
		ws = append(ws, word{val: t, src: t})
	}
	an.emitWhole(ws, outer)
}

// call analyses one simple command, unwrapping wrappers. keep holds the words that
// stay in front of the command in its exact forms (assignments, wrapper options that
// change what runs); outer the forms of the text it came from.
func (an *analyzer) call(keep, ws []word, depth int, outer *forms) error {
	var fs forms
	if outer != nil {
		fs.exact = slices.Clone(outer.exact)
		fs.loose = slices.Clone(outer.loose)
	}
	for unwrapped := 0; len(ws) > 0; unwrapped++ {
		if unwrapped == maxWrappers {
			// Each wrapper adds forms as long as the command; bound the work.
			an.emit(keep, ws, fs)
			an.opaque(keep, ws)
			an.danger("shell commands nested too deeply to analyse")
			return nil
		}
		fs.add(keep, ws)
		head := ws[0]
		if !head.lit {
			an.emit(keep, ws, fs)
			an.opaque(keep, ws)
			an.danger("command name not known until run time: " + head.src)
			return nil
		}
		name := baseName(head.val)
		if name != head.val && name != "" {
			// A deny rule for rm must meet /bin/rm, and an allow rule for git may meet
			// /usr/bin/git; but ./git is not git, so an allow rule for git does not
			// allow a program of that name found elsewhere.
			short := append([]word{{val: name, src: name, lit: true}}, ws[1:]...)
			if systemProgram(head.val) {
				fs.add(keep, short)
			} else {
				fs.loosen(keep, short)
			}
		}
		u, ok := unwrap(name, ws)
		if !ok {
			switch name {
			case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh":
				return an.shell(keep, ws, name, depth, fs)
			case "eval":
				return an.eval(keep, ws, depth, fs)
			}
			if f, ok := dropGlobalOptions(name, ws); ok {
				fs.loose = append(fs.loose, f)
			}
			if prog, sub, ok := strings.Cut(name, "-"); ok && prog != "" && sub != "" {
				// git-commit is git commit (as /usr/lib/git-core/git-commit).
				fs.loosen(keep, append([]word{{val: prog, src: prog, lit: true}, {val: sub, src: sub, lit: true}}, ws[1:]...))
			}
			if setsVariables(name, ws) {
				an.emitWhole(append(slices.Clone(keep), ws...), &fs)
			} else {
				an.emit(keep, ws, fs)
			}
			return an.check(name, keep, ws, depth, fs)
		}
		if u.danger != "" {
			an.danger(u.danger)
		}
		for _, t := range u.writes {
			an.write(t)
		}
		switch {
		case u.text != nil:
			// The wrapper runs text through a shell: su -c, script -c, flock -c, watch.
			return an.text(keep, ws, *u.text, name, depth, fs)
		case u.opaque:
			an.emit(keep, ws, fs)
			an.opaque(keep, ws)
			an.danger("runs a command not known until run time: " + joinWords(append(slices.Clone(keep), ws...)))
			return nil
		case len(u.rest) == 0:
			an.emit(keep, ws, fs)
			return nil
		}
		if len(u.keep) > 0 {
			// The wrapper changes the environment or identity of what it runs: its
			// words stay in front of the command for allow rules.
			keep = append(slices.Clone(keep), u.keep...)
			for _, w := range u.keep {
				if name, _, ok := strings.Cut(w.text(), "="); ok {
					an.assigned(name)
				}
			}
		}
		ws = u.rest
	}
	return nil
}

// add appends the forms of the command ws with the kept words in front: the exact
// form, and without them a loose one.
func (fs *forms) add(keep, ws []word) {
	full := joinWords(append(slices.Clone(keep), ws...))
	if len(fs.exact) == 0 || fs.exact[len(fs.exact)-1] != full {
		fs.exact = append(fs.exact, full)
	}
	if len(keep) > 0 {
		fs.loose = append(fs.loose, joinWords(ws))
	}
}

// loosen appends forms of the command ws, with and without the kept words in front,
// that only deny and ask rules match.
func (fs *forms) loosen(keep, ws []word) {
	if len(keep) > 0 {
		fs.loose = append(fs.loose, joinWords(append(slices.Clone(keep), ws...)))
	}
	fs.loose = append(fs.loose, joinWords(ws))
}

// shell handles bash, sh and their kin: with -c, the text is parsed in turn; without a
// script operand (or with -s, or a script that is standard input, a descriptor or a
// process substitution) the shell reads commands no rule can see; otherwise the shell
// itself is the command (it runs a script).
func (an *analyzer) shell(keep, ws []word, name string, depth int, fs forms) error {
	withC, stdin := false, false
	i := 1
options:
	for ; i < len(ws); i++ {
		w := ws[i]
		if !w.lit {
			break
		}
		v := w.val
		switch {
		case v == "--" || v == "-":
			i++
			break options
		case strings.HasPrefix(v, "--"):
			if v == "--rcfile" || v == "--init-file" {
				i++
			}
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			for _, c := range v[1:] {
				switch c {
				case 'c':
					withC = withC || v[0] == '-'
				case 's':
					stdin = stdin || v[0] == '-'
				case 'o', 'O':
					i++ // takes the next word
				}
			}
		default:
			break options
		}
	}
	if withC {
		if i >= len(ws) {
			an.emit(keep, ws, fs)
			return nil
		}
		return an.text(keep, ws, ws[i], name+" -c", depth, fs)
	}
	an.emit(keep, ws, fs)
	if stdin || i >= len(ws) || !isScriptFile(ws[i]) {
		an.opaque(keep, ws)
		an.danger("runs a command not known until run time: " + joinWords(append(slices.Clone(keep), ws...)))
	}
	return an.check(name, keep, ws, depth, fs)
}

// isScriptFile reports whether w names a script file whose name is known: not one
// with expansions (<(…), $f), nor standard input or a descriptor (/dev/stdin,
// /dev/fd/0, /proc/self/fd/0), which carry text no rule can see.
func isScriptFile(w word) bool {
	if !w.lit || w.val == "-" {
		return false
	}
	return !strings.HasPrefix(w.val, "/dev/") && !strings.HasPrefix(w.val, "/proc/")
}

// text analyses the shell text t that the command ws runs, as bash -c does.
func (an *analyzer) text(keep, ws []word, t word, what string, depth int, fs forms) error {
	if !t.lit {
		an.emit(keep, ws, fs)
		an.opaque(keep, ws)
		an.code(what + " with text not known until run time")
		an.danger("runs a command not known until run time: " + joinWords(append(slices.Clone(keep), ws...)))
		return nil
	}
	if depth >= maxNesting {
		an.emit(keep, ws, fs)
		an.opaque(keep, ws)
		an.danger("shell commands nested too deeply to analyse")
		return nil
	}
	// The text's commands inherit what stays in front of the wrapper.
	if err := an.source(t.val, depth+1, &fs, keep); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// eval records eval, which runs its words as shell text: always code, and when the
// words are literal their commands are analysed so that deny rules still see them.
func (an *analyzer) eval(keep, ws []word, depth int, fs forms) error {
	an.emit(keep, ws, fs)
	if len(ws) == 1 {
		return nil
	}
	an.code("eval")
	if slices.ContainsFunc(ws[1:], func(w word) bool { return !w.lit }) {
		an.opaque(keep, ws)
		an.danger("runs a command not known until run time: " + joinWords(append(slices.Clone(keep), ws...)))
		return nil
	}
	if depth >= maxNesting {
		an.opaque(keep, ws)
		an.danger("shell commands nested too deeply to analyse")
		return nil
	}
	args := ws[1:]
	if args[0].val == "--" {
		args = args[1:] // eval takes -- as the end of its (no) options
	}
	text := make([]string, len(args))
	for i, w := range args {
		text[i] = w.val
	}
	if err := an.source(strings.Join(text, " "), depth+1, &fs, keep); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// check records the Dangerous reasons and Code of an unwrapped command named name, the
// files it writes, and analyses the commands find runs.
func (an *analyzer) check(name string, keep, ws []word, depth int, fs forms) error {
	args := ws[1:]
	if judged(name) && hiddenOption(args) {
		// An expansion could be -rf, -exec or -t DIR: what the command does is not
		// known until run time.
		an.danger(name + " with arguments not known until run time")
	}
	if makesLinks(name, args) {
		an.linksMade = true
	}
	if changesDirs(name, args) || unpacks(name, args) {
		an.dirsChanged = true
	}
	for _, w := range outputFiles(args) {
		an.write(w)
	}
	if err := an.programArgs(name, keep, ws, depth, fs); err != nil {
		return err
	}
	if runsOptionText(args) {
		// tar --checkpoint-action=exec=':;rm x', git fetch --upload-pack='…': the
		// program runs shell text from its options.
		an.opaque(keep, ws)
	}
	if unpacks(name, args) {
		an.danger(name + " writes the files its archive or patch names, which may be outside the workspace or sensitive")
	}
	if !readsOnly(name) {
		an.mentions(args)
	}
	switch {
	case name == "rm":
		for _, a := range options(args) {
			if a == "--recursive" || !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rR") {
				an.danger("rm -r")
			}
			if a == "--force" || !strings.HasPrefix(a, "--") && strings.Contains(a, "f") {
				an.danger("rm -f")
			}
		}
	case name == "chmod" || name == "chown" || name == "chgrp":
		for _, a := range options(args) {
			if a == "--recursive" || !strings.HasPrefix(a, "--") && strings.Contains(a, "R") {
				an.danger(name + " -R")
			}
		}
	case name == "mkfs" || strings.HasPrefix(name, "mkfs."):
		an.danger("mkfs")
	case name == "dd":
		for _, a := range args {
			if s := a.text(); strings.HasPrefix(s, "of=") {
				an.danger("dd of=")
				if a.lit {
					an.write(word{val: s[3:], src: s[3:], lit: true})
				} else {
					an.write(a)
				}
			}
		}
	case name == "tee":
		files := false
		for _, a := range args {
			switch {
			case files || !a.lit:
				an.write(a)
			case a.val == "--":
				files = true
			case a.val == "-" || !strings.HasPrefix(a.val, "-"):
				if a.val != "-" {
					an.write(a)
				}
			}
		}
	case name == "cp" || name == "mv" || name == "install" || name == "ln":
		if t, ok := destination(name, args); ok {
			an.write(t)
		}
	case name == "find":
		return an.find(keep, args, depth, fs)
	case name == "git":
		an.git(keep, ws)
		an.gitRepository(keep, ws)
		return an.gitArgs(keep, ws, depth, fs)
	case name == "sed":
		for _, f := range inPlaceFiles(args) {
			an.write(f)
		}
	default:
		an.builtin(name, keep, ws)
		an.interpreter(name, keep, ws)
	}
	return nil
}

// find records find's actions that run or delete, and analyses the commands that
// -exec, -execdir, -ok and -okdir run.
func (an *analyzer) find(keep, args []word, depth int, fs forms) error {
	var first error
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			continue
		}
		switch a.val {
		case "-delete":
			an.danger("find -delete")
		case "-exec", "-execdir", "-ok", "-okdir":
			an.danger("find " + a.val)
			if a.val == "-execdir" || a.val == "-okdir" {
				// The command runs in the directory of each file found: its relative
				// writes go wherever find goes, .git/hooks included.
				an.unknownBase = true
			}
			end := i + 1
			for end < len(args) && !(args[end].lit && (args[end].val == ";" || args[end].val == "+")) {
				end++
			}
			if sub := args[i+1 : end]; len(sub) > 0 {
				if runsText(sub) && slices.ContainsFunc(sub, func(w word) bool { return strings.Contains(w.src, "{}") }) {
					// find puts each file name into the text a shell runs: a file
					// named $(…) in the repository would be code.
					an.opaque(keep, sub)
					an.code("find " + a.val + " with {} in shell text")
				}
				if depth >= maxNesting {
					an.danger("shell commands nested too deeply to analyse")
				} else if err := an.call(keep, sub, depth+1, &fs); err != nil && first == nil {
					first = err
				}
			}
			i = end
		}
	}
	return first
}

// redirect records a redirection that writes to a file, or that opens a network
// connection (bash's /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT, read or written).
func (an *analyzer) redirect(src string, r *syntax.Redirect) {
	if r.Word == nil {
		return
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return // text, not a path
	}
	w := newWord(src, r.Word)
	if w.lit && networkPath(w.val) {
		an.network(w.val)
		return
	}
	switch r.Op {
	case syntax.RdrIn:
		if !w.lit {
			// The path could be /dev/tcp/… once expanded (for d in /dev/tcp; do cat
			// < $d/host/80; done): bash would connect.
			an.danger("reads from a path not known until run time, which may be a network connection (/dev/tcp/…): " + w.src)
		}
		if r.N != nil && (r.N.Value == "1" || r.N.Value == "2") {
			// 1<file makes /dev/stdout that file: a later >/dev/stdout writes it.
			an.danger("opens standard output or error on a file: " + r.N.Value + "<" + nodeText(src, r.Word))
			an.write(w)
		}
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		an.write(w)
	case syntax.DplOut:
		if fd := strings.TrimSuffix(w.val, "-"); w.lit && (fd == "" || isDigits(fd)) {
			return // >&2, >&-, >&3-: file descriptors, not files
		}
		an.write(w)
	}
}

// networkPath reports a path bash itself opens as a network connection in a
// redirection: /dev/tcp/HOST/PORT or /dev/udp/HOST/PORT.
func networkPath(p string) bool {
	for _, dev := range []string{"/dev/tcp/", "/dev/udp/"} {
		if rest, ok := strings.CutPrefix(p, dev); ok && strings.Contains(rest, "/") {
			return true
		}
	}
	return false
}

// network records a network connection the line opens through the path p.
func (an *analyzer) network(p string) {
	if !slices.Contains(an.out.Network, p) {
		an.out.Network = append(an.out.Network, p)
	}
	an.danger("opens a network connection: " + p)
}

// emit records a command: kept words and ws; fs are its forms from the outermost
// wrapper in.
func (an *analyzer) emit(keep, ws []word, fs forms) {
	an.out.Commands = append(an.out.Commands, joinWords(append(slices.Clone(keep), ws...)))
	an.forms = append(an.forms, fs.clone())
	root := rootName(ws[0])
	if len(keep) > 0 {
		root = joinWords(keep) + " " + root
	}
	an.root(root)
}

// emitWhole records a command whose every word is part of its root: assignments and
// the builtins that set variables, so that an "always" for one of them allows only
// that same statement.
func (an *analyzer) emitWhole(ws []word, outer *forms) {
	var fs forms
	if outer != nil {
		fs = outer.clone()
	}
	fs.add(nil, ws)
	line := joinWords(ws)
	an.out.Commands = append(an.out.Commands, line)
	an.forms = append(an.forms, fs)
	an.root(line)
}

// root records an entry of Roots once.
func (an *analyzer) root(r string) {
	if !an.seenRoot[r] {
		an.seenRoot[r] = true
		an.out.Roots = append(an.out.Roots, r)
	}
}

// clone returns a copy of fs that shares nothing with it.
func (fs forms) clone() forms {
	return forms{exact: slices.Clone(fs.exact), loose: slices.Clone(fs.loose)}
}

// opaque records a command whose program is not known before it runs.
func (an *analyzer) opaque(keep, ws []word) {
	an.out.Opaque = append(an.out.Opaque, joinWords(append(slices.Clone(keep), ws...)))
}

// danger records a Dangerous reason once.
func (an *analyzer) danger(reason string) {
	if !an.seenDanger[reason] {
		an.seenDanger[reason] = true
		an.out.Dangerous = append(an.out.Dangerous, reason)
	}
}

// code records something bash evaluates as code.
func (an *analyzer) code(what string) {
	an.out.Substitution = true
	if !an.seenCode[what] {
		an.seenCode[what] = true
		an.out.Code = append(an.out.Code, what)
	}
}
