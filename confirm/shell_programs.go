package confirm

import (
	"regexp"
	"slices"
	"strings"
)

// This file judges what particular programs do with their arguments: interpreters given
// code, the destinations of cp and its kin, git's configuration and hooks, sed -i,
// archives and patches.

// interpreter records an interpreter given its program inline (python3 -c, perl -e,
// node -e, awk's program text when it runs commands) or on its input (curl … | python3),
// whose commands no rule can see.
func (an *analyzer) interpreter(name string, keep, ws []word) {
	if an.shellTextProgram(name, keep, ws) {
		return
	}
	family := strings.TrimRight(name, "0123456789.")
	if family == "awk" || family == "gawk" || family == "mawk" || family == "nawk" {
		an.awk(keep, ws)
		return
	}
	var inline, argOpts string
	var long []string
	switch family {
	case "python", "pypy":
		inline, argOpts = "c", "WXQ"
	case "perl":
		// -M and -m take a module, and -M'strict;system(…)' is code.
		inline, argOpts = "eEMm", "ICdDx"
	case "ruby", "jruby":
		inline, argOpts = "e", "IrCEFTx"
	case "node", "nodejs", "bun":
		inline, argOpts = "ep", "rC"
		long = []string{"eval", "print", "require", "import", "loader", "experimental-loader", "conditions", "env-file", "input-type", "title"}
	case "php":
		inline, argOpts = "rRBE", "cdtz"
	case "lua", "luajit":
		inline, argOpts = "e", "l"
	case "Rscript", "R", "osascript":
		inline = "e"
	case "pwsh", "powershell":
		inline = "cCeE"
		long = []string{"command", "Command", "encodedcommand", "EncodedCommand"}
	case "julia":
		inline, argOpts = "eE", "CJLOpt"
		long = []string{"eval", "print", "load", "project", "threads", "sysimage"}
	case "ipython":
		inline = "c"
	case "guile", "expect":
		inline, argOpts = "c", "lLdx"
	case "elixir", "racket", "gnuplot":
		inline = "e"
		long = []string{"eval"}
	case "octave":
		long = []string{"eval"}
	case "tclsh", "wish":
	default:
		return
	}
	code, operand := false, false
	var codeWord word
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if !w.lit || !strings.HasPrefix(w.val, "-") || w.val == "-" {
			operand = isScriptFile(w)
			break
		}
		if w.val == "--" {
			operand = i+1 < len(ws) && isScriptFile(ws[i+1])
			break
		}
		if strings.HasPrefix(w.val, "--") {
			opt, _, hasVal := strings.Cut(w.val[2:], "=")
			if slices.Contains(long, opt) {
				if opt == "eval" || opt == "print" || strings.EqualFold(opt, "command") || strings.EqualFold(opt, "encodedcommand") {
					code = true
					if !hasVal && i+1 < len(ws) {
						codeWord = ws[i+1]
					}
				}
				if !hasVal {
					i++
				}
			}
			continue
		}
		for j := 1; j < len(w.val); j++ {
			c := w.val[j]
			if strings.IndexByte(inline, c) >= 0 {
				code = true
				if j+1 == len(w.val) && i+1 < len(ws) {
					i++
					codeWord = ws[i]
				}
				break
			}
			if strings.IndexByte(argOpts, c) >= 0 {
				if j+1 == len(w.val) {
					i++
				}
				break
			}
		}
		if code {
			break
		}
	}
	switch {
	case code:
		an.opaque(keep, ws)
		if codeWord.src != "" && !codeWord.lit {
			an.code(name + " given code not known until run time")
		}
	case !operand:
		an.opaque(keep, ws)
		an.danger("runs a command not known until run time: " + joinWords(append(slices.Clone(keep), ws...)))
	}
}

// awk records an awk program that runs commands (system(), a pipe to or from a
// command) or writes files (print > FILE), a program read from its input (-f -,
// -f /dev/stdin) and an extension it loads (gawk -l): for deny rules it is an
// interpreter given code (Opaque), and a rule for awk does not allow it (Dangerous).
// A program file (awk -f prog.awk) is judged by its name only, as a script is.
func (an *analyzer) awk(keep, ws []word) {
	hidden := func(why string) {
		an.opaque(keep, ws)
		an.danger("runs shell commands from text no rule can see: " + shorten(joinWords(append(slices.Clone(keep), ws...))) + " (" + why + ")")
	}
	program := func(text string) {
		if awkRuns(text) {
			hidden("awk's program runs commands: system(), or a pipe to or from a command")
		}
		if awkWrites(text) {
			an.danger("awk's program writes files it names: " + shorten(joinWords(append(slices.Clone(keep), ws...))))
		}
	}
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if !w.lit {
			an.opaque(keep, ws)
			return
		}
		v := w.val
		switch {
		case v == "-f" || v == "--file" || v == "-i" || v == "--include" || v == "-E" || v == "--exec":
			if i+1 < len(ws) {
				i++
				if !isScriptFile(ws[i]) {
					hidden("awk reads its program from its input")
				}
			}
			if v == "-E" || v == "--exec" {
				return // the words after are the program's own
			}
		case strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "--include=") || strings.HasPrefix(v, "--exec=") ||
			strings.HasPrefix(v, "-f") && len(v) > 2:
			_, f, ok := strings.Cut(v, "=")
			if !ok {
				f = v[2:]
			}
			if !isScriptFile(word{val: f, src: f, lit: true}) {
				hidden("awk reads its program from its input")
			}
		case v == "-l" || v == "--load" || strings.HasPrefix(v, "--load=") || strings.HasPrefix(v, "-l") && len(v) > 2:
			hidden("gawk -l loads a shared library")
			return
		case (v == "-e" || v == "--source") && i+1 < len(ws):
			// gawk's program text given as an option.
			i++
			if !ws[i].lit {
				an.opaque(keep, ws)
				return
			}
			program(ws[i].val)
		case strings.HasPrefix(v, "--source="):
			program(v)
		case v == "-v" || v == "-F" || v == "--assign" || v == "--field-separator":
			i++
		case v == "--":
			if i+1 < len(ws) && !slices.ContainsFunc(ws[1:i], func(x word) bool { return x.lit && (x.val == "-f" || x.val == "--file") }) {
				if !ws[i+1].lit {
					an.opaque(keep, ws)
					return
				}
				program(ws[i+1].val)
			}
			return
		case strings.HasPrefix(v, "-") && v != "-":
		default:
			if !slices.ContainsFunc(ws[1:i], func(x word) bool {
				return x.lit && (x.val == "-f" || x.val == "--file" || x.val == "-e" || x.val == "--source" ||
					strings.HasPrefix(x.val, "--file=") || strings.HasPrefix(x.val, "--source=") || strings.HasPrefix(x.val, "-f") && len(x.val) > 2 && !strings.HasPrefix(x.val, "--"))
			}) {
				program(v)
			}
			return
		}
	}
}

// destination returns the file that cp, mv, install or ln (named name) writes: the
// directory of -t, or the last operand when there are two or more.
func destination(name string, args []word) (word, bool) {
	argOpts := "St"
	if name == "install" {
		argOpts = "gmoSt"
	}
	var operands []word
	var target *word
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.lit || !strings.HasPrefix(a.val, "-") || a.val == "-":
			operands = append(operands, a)
		case a.val == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a.val, "--"):
			opt, val, hasVal := strings.Cut(a.val[2:], "=")
			long := []string{"target-directory", "suffix"}
			if name == "install" {
				long = append(long, "group", "mode", "owner")
			}
			opt = longOption(long, opt)
			takes := slices.Contains(long, opt)
			if opt == "target-directory" {
				if hasVal {
					target = &word{val: val, src: val, lit: true}
				} else if i+1 < len(args) {
					target = &args[i+1]
				}
			}
			if takes && !hasVal {
				i++
			}
		default:
			for j := 1; j < len(a.val); j++ {
				c := a.val[j]
				if strings.IndexByte(argOpts, c) < 0 {
					continue
				}
				arg := word{val: a.val[j+1:], src: a.val[j+1:], lit: true}
				if j+1 == len(a.val) && i+1 < len(args) {
					i++
					arg = args[i]
				}
				if c == 't' {
					target = &arg
				}
				break
			}
		}
	}
	if target != nil {
		return *target, true
	}
	if len(operands) < 2 {
		return word{}, false
	}
	return operands[len(operands)-1], true
}

// judged reports the commands whose options and operands the analysis judges (rm -r,
// find -exec, cp's destination …): an expansion among them hides what they do.
func judged(name string) bool {
	switch name {
	case "rm", "chmod", "chown", "chgrp", "find", "cp", "mv", "install", "ln", "dd", "sed", "git", "tee":
		return true
	}
	_, ok := programs[name]
	return ok || compilerFamily(name) || compressorFamily(name)
}

// hiddenOption reports a word with expansions before the end of the options ("--"),
// which could be any option.
func hiddenOption(args []word) bool {
	for _, a := range args {
		if a.lit && a.val == "--" {
			return false
		}
		if !a.lit {
			return true
		}
	}
	return false
}

// makesLinks reports a command that makes or moves links, or unpacks files that may
// be links, so that where the line's writes go is no longer what the file system says
// before it runs.
func makesLinks(name string, args []word) bool {
	switch name {
	case "ln", "link", "mv", "rsync", "tar", "bsdtar", "unzip", "cpio", "7z", "bunzip2", "gunzip":
		return true
	case "cp":
		links := []string{"link", "symbolic-link", "archive", "no-dereference", "recursive"}
		for _, o := range options(args) {
			if strings.HasPrefix(o, "--") {
				name, _, _ := strings.Cut(o[2:], "=")
				if slices.Contains(links, longOption(links, name)) {
					return true
				}
				continue
			}
			if strings.ContainsAny(o[1:], "slaPdRr") {
				return true
			}
		}
	case "git":
		switch sub := gitSubcommand(args); sub {
		case "checkout", "switch", "clone", "worktree", "restore", "reset", "pull", "merge", "rebase",
			"stash", "apply", "am", "cherry-pick", "revert", "submodule", "checkout-index", "read-tree",
			"mv", "bisect", "sparse-checkout":
			return true
		}
	}
	return false
}

// changesDirs reports a command that makes or removes directories (mkdir, rmdir,
// rm -r, git rm -r, git clean -d, install -d …), so that the paths below them are not
// what the file system says before it runs.
func changesDirs(name string, args []word) bool {
	switch name {
	case "mkdir", "rmdir", "unlink", "mktemp":
		return true
	case "rm", "install":
		for _, o := range options(args) {
			if name == "rm" && (o == "--recursive" || o == "--dir" || !strings.HasPrefix(o, "--") && strings.ContainsAny(o, "rRd")) ||
				name == "install" && (o == "--directory" || !strings.HasPrefix(o, "--") && strings.Contains(o, "d")) {
				return true
			}
		}
	case "git":
		switch gitSubcommand(args) {
		case "rm", "clean", "init":
			return true
		}
	}
	return false
}

// gitSubcommand returns git's subcommand among args (its words after "git"), past the
// global options.
func gitSubcommand(args []word) string {
	rest, _ := dropGlobalWords("git", append([]word{{val: "git", src: "git", lit: true}}, args...))
	if len(rest) == 0 || !rest[0].lit {
		return ""
	}
	return rest[0].val
}

// git records what a git command does that rules must know: -c and --config-env set
// configuration that runs commands (core.pager, core.sshCommand, alias.x=!cmd), so the
// command is opaque; git config writes .git/config (sensitive) or the user's files.
func (an *analyzer) git(keep, ws []word) {
	for _, w := range ws[1:] {
		if !w.lit || !strings.HasPrefix(w.val, "-") {
			break
		}
		if w.val == "-c" || strings.HasPrefix(w.val, "--config-env") {
			an.opaque(keep, ws)
			break
		}
	}
	switch sub := gitSubcommand(ws[1:]); sub {
	case "init", "clone":
		for _, w := range ws[1:] {
			if w.lit && (w.val == "--template" || strings.HasPrefix(w.val, "--template=")) || !w.lit {
				// The template's hooks are copied into the new .git/hooks.
				an.write(word{val: ".git/hooks", src: ".git/hooks", lit: true})
				break
			}
		}
		return
	case "config":
	default:
		return
	}
	rest, _ := dropGlobalWords("git", ws)
	args := rest[min(1, len(rest)):]
	var operands int
	write := false
	file := word{val: ".git/config", src: ".git/config", lit: true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.lit:
			write = true
		case a.val == "set" || a.val == "unset" || a.val == "rename-section" || a.val == "remove-section" || a.val == "edit":
			write = write || i == 0
		case a.val == "--global":
			file = word{val: "~/.gitconfig", src: "~/.gitconfig", lit: true}
		case a.val == "--system":
			file = word{val: "/etc/gitconfig", src: "/etc/gitconfig", lit: true}
		case a.val == "--file" || a.val == "-f":
			if i+1 < len(args) {
				i++
				file = args[i]
			}
		case strings.HasPrefix(a.val, "--file="):
			file = word{val: a.val[len("--file="):], src: a.val, lit: true}
		case a.val == "--unset" || a.val == "--unset-all" || a.val == "--add" || a.val == "--replace-all" ||
			a.val == "--rename-section" || a.val == "--remove-section" || a.val == "-e" || a.val == "--edit":
			write = true
		case strings.HasPrefix(a.val, "-"):
		default:
			operands++
		}
	}
	if write || operands >= 2 {
		an.write(file)
	}
}

// inPlaceFiles returns the files sed -i edits: its operands after the script (the
// first operand, unless -e or -f gave it); none without -i.
func inPlaceFiles(args []word) []word {
	inPlace, script := false, false
	var operands []word
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.lit || !strings.HasPrefix(a.val, "-") || a.val == "-":
			operands = append(operands, a)
		case a.val == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case a.val == "-e" || a.val == "-f" || a.val == "--expression" || a.val == "--file":
			script = true
			i++
		case strings.HasPrefix(a.val, "--expression=") || strings.HasPrefix(a.val, "--file="):
			script = true
		case strings.HasPrefix(a.val, "--in-place"):
			inPlace = true
		case strings.HasPrefix(a.val, "--"):
		default:
			if j := strings.IndexAny(a.val[1:], "ief"); j >= 0 {
				switch a.val[1+j] {
				case 'i':
					inPlace = true
				default:
					script = true
					if 1+j == len(a.val)-1 {
						i++
					}
				}
			}
		}
	}
	if !inPlace {
		return nil
	}
	if !script && len(operands) > 0 {
		operands = operands[1:]
	}
	return operands
}

// awkRuns reports an awk program that may run commands: system(), or a pipe to or from
// a command.
func awkRuns(program string) bool {
	return strings.Contains(program, "system") || strings.Contains(program, "|") || strings.Contains(program, "getline")
}

// awkWrites reports an awk program that may write files: print or printf with an
// output redirection (print > "file", printf … >> f).
func awkWrites(program string) bool {
	return awkWriteRE.MatchString(program)
}

var awkWriteRE = regexp.MustCompile(`\bprintf?\b[^;{}]*>`)

// runsOptionText reports an option whose text holds shell syntax that runs commands
// (a ";", "|", "&&" or backtick), which the program may hand to a shell.
func runsOptionText(args []word) bool {
	for _, a := range args {
		if !a.lit || !strings.HasPrefix(a.val, "-") {
			continue
		}
		if strings.ContainsAny(a.val, ";|`") || strings.Contains(a.val, "&&") {
			return true
		}
	}
	return false
}

// unpacks reports a command that writes files named by its input rather than by its
// arguments: an archive extracted, a patch applied.
func unpacks(name string, args []word) bool {
	switch name {
	case "unzip", "patch", "cpio", "7z", "unrar", "ar":
		return true
	case "tar", "bsdtar":
		for i, a := range args {
			if !a.lit {
				continue
			}
			switch {
			case a.val == "--extract" || a.val == "--get":
				return true
			case strings.HasPrefix(a.val, "--"):
			case strings.HasPrefix(a.val, "-") || i == 0:
				if strings.ContainsRune(strings.TrimPrefix(a.val, "-"), 'x') {
					return true
				}
			}
		}
	case "git":
		switch gitSubcommand(args) {
		case "apply", "am":
			return true
		}
	}
	return false
}

// shellTextProgram records the programs that run shell commands from text they are
// given besides their main business: sqlite3's .shell and .system, gdb's shell and !,
// lldb's platform shell, vim's :!, ed's and dc's !, emacs's --eval, m4's esyscmd. They
// read that text from their options or, when given none, from their input. For deny
// rules they are interpreters (Opaque), and a rule for the program does not allow them
// (Dangerous). It reports whether name is one of them.
func (an *analyzer) shellTextProgram(name string, keep, ws []word) bool {
	args := ws[1:]
	why := ""
	switch name {
	case "sqlite3", "sqlite":
		why = an.sqlite(args)
	case "gdb", "gdb-multiarch", "cgdb", "lldb":
		why = debuggerRuns(name, args)
	case "vi", "vim", "nvim", "view", "vimdiff", "nvimdiff", "gvim", "gview", "gvimdiff", "evim", "eview", "ex",
		"rvim", "rview", "vimx", "nvi", "nex", "elvis", "vile":
		if !versionOnly(args) {
			why = "an editor runs the commands of its options (-c, +, --cmd, -S) and of its input, and :! runs shell commands"
		}
	case "ed":
		if !versionOnly(args) {
			why = "ed runs the commands of its input, and ! runs shell commands"
		}
	case "dc":
		if !versionOnly(args) {
			why = "dc runs its program (-e, a file or its input), and ! runs shell commands"
		}
	case "emacs", "emacsclient", "xemacs":
		for _, a := range args {
			opt, _, _ := strings.Cut(a.val, "=")
			if !a.lit || slices.Contains([]string{"--eval", "-eval", "--execute", "-execute", "-e", "-l", "--load", "-load", "-f",
				"--funcall", "-funcall", "--script", "-script", "-x", "-batch", "--batch"}, opt) {
				why = "emacs runs the Lisp of its options or files (--eval, -l, -f, --batch), which can run shell commands"
				break
			}
		}
	case "psql", "mysql", "mariadb":
		why = dbClientRuns(name, args)
	case "at", "batch":
		if !versionOnly(args) && !hasOption(args, 'l') && !hasOption(args, 'r') && !hasOption(args, 'd') && !hasOption(args, 'c') {
			why = name + " runs the commands of its input or file later"
		}
	case "crontab":
		if !hasOption(args, 'l') && !hasOption(args, 'r') {
			why = "crontab installs commands that cron runs later"
		}
	case "m4":
		p := parseArgs(args, argSpec{short: "BDHIILUdglost", long: []string{"define", "undefine", "include", "debug", "debugfile", "trace", "hashsize", "nesting-limit", "arglength"}})
		if len(p.operands) == 0 || slices.ContainsFunc(p.operands, func(w word) bool { return !isScriptFile(w) }) {
			why = "m4 reads its program from its input, and esyscmd runs shell commands"
		}
	default:
		return false
	}
	if why != "" {
		an.opaque(keep, ws)
		an.danger("runs shell commands from text no rule can see: " + shorten(joinWords(append(slices.Clone(keep), ws...))) + " (" + why + ")")
	}
	return true
}

// dbClientRuns returns why a psql or mysql command line runs commands no rule can see:
// its input or a file (-f, source) when no -c or -e gives the commands, or commands
// that reach the shell or write files (\!, system, \o |cmd, pager, tee, COPY …
// PROGRAM, INTO OUTFILE).
func dbClientRuns(name string, args []word) string {
	if versionOnly(args) {
		return ""
	}
	spec := argSpec{short: "cdfhopUvPTLFRS", long: []string{"command", "dbname", "file", "host", "port", "username", "variable", "set", "output", "log-file", "field-separator", "record-separator", "pset"}}
	cmdOpts, fileOpts := []string{"c", "command"}, []string{"f", "file", "o", "output", "L", "log-file"}
	if name != "psql" {
		spec = argSpec{short: "eDhPuSO", optional: "p", long: []string{"execute", "database", "host", "port", "user", "socket", "tee", "pager", "init-command", "defaults-file", "defaults-extra-file", "login-path", "set-variable"}, longOptional: []string{"password"}}
		cmdOpts, fileOpts = []string{"e", "execute", "init-command"}, []string{"tee", "pager", "defaults-file", "defaults-extra-file"}
	}
	p := parseArgs(args, spec)
	given := false
	for _, o := range p.opts {
		switch {
		case slices.Contains(fileOpts, o.name):
			return name + " reads commands or options from a file, or writes one, or runs a pager"
		case slices.Contains(cmdOpts, o.name):
			given = true
			if !o.arg.lit {
				return name + " runs commands not known until run time"
			}
			low := strings.ToLower(o.arg.val)
			for _, risky := range []string{`\!`, "system", `\o`, `\g`, `\w`, `\copy`, "program", "pager", `\p`, "tee", `\t`, "source", `\.`, "outfile", "dumpfile", "lo_export", `\i`, `\ir`} {
				if strings.Contains(low, risky) {
					return name + " runs commands that reach the shell or write files (" + risky + ")"
				}
			}
		}
	}
	if !given {
		return name + " reads commands from its input, and \\! runs shell commands"
	}
	return ""
}

// versionOnly reports a command line that only asks for the program's version or help.
func versionOnly(args []word) bool {
	if len(args) != 1 || !args[0].lit {
		return false
	}
	switch args[0].val {
	case "--version", "-version", "-V", "--help", "-help", "-h":
		return true
	}
	return false
}

// sqliteDotSafe are sqlite3 dot-commands that only show the database or set how it is
// shown. Any other (.shell, .system, .output, .once, .import, .read, .load, .save …,
// also abbreviated, which sqlite3 accepts) runs commands or writes files.
var sqliteDotSafe = []string{"tables", "schema", "fullschema", "indexes", "indices", "headers", "header", "mode",
	"databases", "dbinfo", "help", "show", "width", "nullvalue", "separator", "quit", "exit", "print", "echo", "bail",
	"changes", "timer", "eqp", "explain", "stats", "dump", "version"}

// sqlite judges sqlite3's arguments: it writes its database file (unless -readonly),
// and runs shell commands or writes files through dot-commands, SQL functions
// (writefile, edit, load_extension) and statements (ATTACH, VACUUM INTO), given as
// operands, with -cmd, from a file (-init) or on its input (no SQL operand). It returns
// why the line runs text no rule can see, or "".
func (an *analyzer) sqlite(args []word) string {
	if versionOnly(args) {
		return ""
	}
	p := parseArgs(args, argSpec{oneDash: true, long: []string{"cmd", "init", "separator", "newline", "nullvalue", "vfs", "maxsize", "mmap", "pagecache", "lookaside", "heap", "escape", "zip"}})
	if len(p.operands) > 0 && !p.has("readonly", "A", "archive") {
		db := p.operands[0]
		if !db.lit || db.val != ":memory:" && db.val != "" && !strings.HasPrefix(db.val, "file:") {
			an.write(db)
		}
	}
	var texts []word
	for _, o := range p.opts {
		switch {
		case o.name == "cmd":
			texts = append(texts, o.arg)
		case o.name == "init":
			return "sqlite3 runs the commands of its -init file, and .shell runs shell commands"
		case o.name == "A" || strings.HasPrefix(o.name, "A") && len(o.name) <= 3 || o.name == "archive":
			return "sqlite3 -A writes the files its archive names"
		}
	}
	if len(p.operands) <= 1 {
		return "sqlite3 reads its commands from its input, and .shell runs shell commands"
	}
	texts = append(texts, p.operands[1:]...)
	for _, t := range texts {
		if !t.lit {
			return "sqlite3 runs commands not known until run time"
		}
		s := strings.TrimSpace(t.val)
		if cmd, ok := strings.CutPrefix(s, "."); ok {
			f := strings.Fields(cmd)
			if len(f) == 0 || !slices.Contains(sqliteDotSafe, f[0]) {
				return "sqlite3's dot-commands run shell commands and write files (.shell, .system, .output …)"
			}
			continue
		}
		low := strings.ToLower(s)
		for _, risky := range []string{"writefile", "edit(", "load_extension", "attach", "vacuum", "fts3_tokenizer"} {
			if strings.Contains(low, risky) {
				return "sqlite3 SQL that writes files or loads code (" + risky + ")"
			}
		}
	}
	return ""
}

// debuggerSafe are the first words of gdb and lldb commands that only show the
// program's state.
var debuggerSafe = []string{"bt", "backtrace", "where", "info", "list", "l", "frame", "f", "up", "down", "ptype",
	"whatis", "disassemble", "disas", "di", "quit", "q", "thread", "x", "image", "register", "version", "help"}

// debuggerRuns returns why gdb's or lldb's command line runs commands no rule can see:
// commands given to -ex (lldb: -o) other than those that show state, command files
// (-x, lldb: -s), or, without -batch, its input. thread apply runs any command.
func debuggerRuns(name string, args []word) string {
	if versionOnly(args) {
		return ""
	}
	cmdOpts := []string{"ex", "eval-command", "iex", "init-eval-command"}
	fileOpts := []string{"x", "command", "ix", "init-command"}
	withArg := []string{"p", "pid", "c", "core", "cd", "d", "directory", "s", "symbols", "e", "exec", "se", "b", "l", "tty", "i", "interpreter", "data-directory", "D"}
	if name == "lldb" {
		cmdOpts = []string{"o", "one-line", "O", "one-line-before-file", "k", "one-line-on-crash"}
		fileOpts = []string{"s", "source", "S", "source-before-file", "K", "source-on-crash"}
		withArg = []string{"c", "core", "p", "attach-pid", "n", "attach-name", "a", "arch", "f", "file", "l", "script-language", "r", "repl-language"}
	}
	batch := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			return name + " has arguments not known until run time"
		}
		if !strings.HasPrefix(a.val, "-") {
			continue
		}
		if a.val == "--args" || a.val == "-args" || a.val == "--" {
			break
		}
		opt, val, hasVal := strings.Cut(strings.TrimLeft(a.val, "-"), "=")
		takes := slices.Contains(cmdOpts, opt) || slices.Contains(fileOpts, opt) || slices.Contains(withArg, opt)
		if takes && !hasVal && i+1 < len(args) {
			i++
			if !args[i].lit {
				return name + " has arguments not known until run time"
			}
			val = args[i].val
		}
		switch {
		case opt == "batch" || opt == "b" && name == "lldb":
			batch = true
		case slices.Contains(fileOpts, opt):
			return name + " runs the commands of a file, which can run shell commands"
		case slices.Contains(cmdOpts, opt):
			f := strings.Fields(val)
			if len(f) == 0 || !slices.Contains(debuggerSafe, f[0]) || len(f) > 1 && (f[1] == "apply" || f[0] == "frame" && f[1] == "apply") {
				return name + " runs the commands of its options, which can run shell commands (shell, !, pipe, python …)"
			}
		}
	}
	if !batch {
		return name + " reads commands from its input, which can run shell commands"
	}
	return ""
}
