package confirm

import (
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
// command); without a program (awk -f FILE) the file's commands are not seen.
func (an *analyzer) awk(keep, ws []word) {
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if !w.lit {
			an.opaque(keep, ws)
			return
		}
		switch {
		case w.val == "-f" || strings.HasPrefix(w.val, "--file") || w.val == "-E" || strings.HasPrefix(w.val, "--exec"):
			return
		case (w.val == "-e" || w.val == "--source") && i+1 < len(ws):
			// gawk's program text given as an option.
			i++
			if !ws[i].lit || awkRuns(ws[i].val) {
				an.opaque(keep, ws)
				return
			}
		case strings.HasPrefix(w.val, "--source="):
			if awkRuns(w.val) {
				an.opaque(keep, ws)
				return
			}
		case w.val == "-v" || w.val == "-F":
			i++
		case strings.HasPrefix(w.val, "-") && w.val != "-":
		default:
			if awkRuns(w.val) {
				an.opaque(keep, ws)
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
	return false
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
