package confirm

import (
	"slices"
	"strings"
)

// unwrapped is what a wrapper command runs.
type unwrapped struct {
	// rest is the command the wrapper runs; empty when it runs none (sudo -e, ionice
	// -p) or when text or opaque says otherwise.
	rest []word
	// keep are the wrapper's words that change what rest does (assignments, env -i,
	// exec -c, unshare's namespaces): they stay in front of rest in its exact forms.
	keep []word
	// text is shell text the wrapper runs instead (su -c, script -c, watch).
	text *word
	// opaque reports a wrapper that runs a command its words do not show: a shell it
	// starts, or one whose options cannot be told apart from its command.
	opaque bool
	// danger is a Dangerous reason the wrapper itself gives.
	danger string
	// writes are files the wrapper writes.
	writes []word
}

// The option syntax of the wrappers that Analyze sees through.
var (
	sudoOptions = optionSpec{
		arg:  "CDghprtTUuR",
		long: []string{"chdir", "chroot", "close-from", "command-timeout", "group", "host", "other-user", "prompt", "role", "type", "user"},
	}
	envOptions     = optionSpec{arg: "uCS", long: []string{"unset", "chdir", "split-string"}, dash: true}
	timeoutOptions = optionSpec{arg: "ks", long: []string{"kill-after", "signal"}}
	niceOptions    = optionSpec{arg: "n", long: []string{"adjustment"}}
	xargsOptions   = optionSpec{
		arg:      "adEILnPs",
		attached: "eil",
		long:     []string{"arg-file", "delimiter", "max-args", "max-chars", "max-lines", "max-procs", "process-slot-var"},
	}
	execOptions    = optionSpec{arg: "a"}
	timeOptions    = optionSpec{arg: "fo", long: []string{"format", "output"}}
	stdbufOptions  = optionSpec{arg: "ioe", long: []string{"input", "output", "error"}}
	ioniceOptions  = optionSpec{arg: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}}
	chrtOptions    = optionSpec{arg: "TPD", long: []string{"sched-runtime", "sched-period", "sched-deadline"}}
	tasksetOptions = optionSpec{}
	flockOptions   = optionSpec{arg: "wEc", long: []string{"timeout", "wait", "conflict-exit-code", "command"}}
	unshareOptions = optionSpec{
		arg:      "RwSG",
		attached: "muinpUCT",
		long:     []string{"propagation", "setgroups", "root", "wd", "setuid", "setgid", "map-user", "map-group", "map-users", "map-groups", "monotonic", "boottime", "load-interp"},
	}
	nsenterOptions = optionSpec{
		arg:      "tGSW",
		attached: "muinpUCTrw",
		long:     []string{"target", "setgid", "setuid", "wdns", "env"},
	}
	scriptOptions = optionSpec{arg: "cEIOBTmo", long: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"}}
	watchOptions  = optionSpec{arg: "nq", long: []string{"interval", "equexit"}}
	suOptions     = optionSpec{arg: "cgGsw", long: []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment"}, dash: true}
	chrootOptions = optionSpec{long: []string{"groups", "userspec"}}
)

// xargsInput stands for the words xargs adds from its input.
const xargsInput = "{xargs input}"

// unwrap reports whether the command ws, named name, is a wrapper, and what it runs.
func unwrap(name string, ws []word) (unwrapped, bool) {
	args := ws[1:]
	var u unwrapped
	switch name {
	case "sudo", "doas", "pkexec", "run0":
		u.danger = name
		if name == "pkexec" || name == "run0" {
			u.danger = "sudo"
		}
		edit, info := false, false
		rest := skipOptions(args, sudoOptions, func(opt string, _ word) {
			edit = edit || opt == "e" || opt == "edit"
			info = info || strings.Contains("lvkKVh", opt) && len(opt) == 1 || opt == "list" || opt == "validate" || opt == "version" || opt == "help"
		})
		if edit {
			return u, true // sudo -e FILE edits the file, it runs no command
		}
		u.keep, u.rest = splitAssignments(rest)
		if len(u.rest) == 0 && !info {
			u.opaque = true // sudo -s, sudo -i: a shell
		}
	case "env":
		return unwrapEnv(ws), true
	case "timeout":
		u.rest = skipOptions(args, timeoutOptions, nil)
		if len(u.rest) > 0 {
			u.rest = u.rest[1:] // the duration
		}
	case "nice":
		u.rest = skipOptions(args, niceOptions, nil)
	case "nohup", "builtin", "busybox", "setsid":
		u.rest = skipOptions(args, optionSpec{}, nil)
	case "xargs":
		replace := false
		u.rest = skipOptions(args, xargsOptions, func(opt string, _ word) {
			replace = replace || opt == "I" || opt == "i" || opt == "replace"
		})
		if replace && len(u.rest) > 0 && runsText(u.rest) {
			// The input is put into the text a shell runs: code from the input.
			u.opaque = true
		}
		if len(u.rest) > 0 {
			// xargs adds words from its input, which may be options, a command for a
			// wrapper or a destination: words not known until run time.
			u.rest = append(slices.Clone(u.rest), word{src: xargsInput})
		}
	case "command":
		lookup := false
		u.rest = skipOptions(args, optionSpec{}, func(opt string, _ word) {
			lookup = lookup || opt == "v" || opt == "V"
		})
		if lookup {
			u.rest = nil // command -v only looks the name up
		}
	case "exec":
		u.rest = skipOptions(args, execOptions, nil)
		if n := len(ws) - len(u.rest); n > 1 && len(u.rest) > 0 {
			// exec -c empties the environment, exec -a renames the program.
			u.keep = slices.Clone(ws[:n])
		}
	case "time":
		u.rest = skipOptions(args, timeOptions, func(opt string, arg word) {
			if (opt == "o" || opt == "output") && (arg.lit || arg.src != "") {
				u.writes = append(u.writes, arg)
			}
		})
	case "stdbuf":
		u.rest = skipOptions(args, stdbufOptions, nil)
	case "ionice", "chrt", "taskset":
		spec := map[string]optionSpec{"ionice": ioniceOptions, "chrt": chrtOptions, "taskset": tasksetOptions}[name]
		pid := false
		u.rest = skipOptions(args, spec, func(opt string, _ word) {
			pid = pid || opt == "p" || opt == "pid" || opt == "P" || opt == "pgid" || opt == "u" || opt == "uid" || opt == "all-tasks" && name == "taskset"
		})
		if pid {
			return unwrapped{danger: u.danger}, true // changes running processes, runs nothing
		}
		if name != "ionice" {
			// chrt PRIORITY COMMAND, taskset MASK COMMAND
			if len(u.rest) == 0 || !u.rest[0].lit {
				return unwrapped{opaque: len(u.rest) > 0}, true
			}
			u.rest = u.rest[1:]
		}
	case "flock":
		var text *word
		rest := skipOptions(args, flockOptions, func(opt string, arg word) {
			if opt == "c" || opt == "command" {
				text = &arg
			}
		})
		if len(rest) > 0 {
			rest = rest[1:] // the lock file or descriptor
		}
		if text == nil && len(rest) > 1 && rest[0].lit && (rest[0].val == "-c" || rest[0].val == "--command") {
			text = &rest[1]
		}
		if text != nil {
			u.text = text
			return u, true
		}
		u.rest = rest
	case "unshare", "chroot", "nsenter":
		spec := unshareOptions
		switch name {
		case "chroot":
			spec = chrootOptions
		case "nsenter":
			spec = nsenterOptions
		}
		rest := skipOptions(args, spec, nil)
		if name == "chroot" && len(rest) > 0 {
			rest = rest[1:] // the new root
		}
		if len(rest) == 0 {
			u.opaque = true // starts the user's shell
			return u, true
		}
		u.keep = slices.Clone(ws[:len(ws)-len(rest)])
		u.rest = rest
	case "script":
		var text *word
		rest := skipOptions(args, scriptOptions, func(opt string, arg word) {
			switch opt {
			case "c", "command":
				text = &arg
			case "I", "O", "B", "T", "log-in", "log-out", "log-io", "log-timing":
				u.writes = append(u.writes, arg)
			}
		})
		if len(rest) > 0 {
			u.writes = append(u.writes, rest[0]) // the typescript
		}
		if text == nil {
			u.opaque = true // starts the user's shell
			return u, true
		}
		u.text = text
	case "watch":
		execMode := false
		rest := skipOptions(args, watchOptions, func(opt string, _ word) {
			execMode = execMode || opt == "x" || opt == "exec"
		})
		if execMode || len(rest) == 0 {
			u.rest = rest
			return u, true
		}
		// watch runs its words, joined by spaces, through sh -c.
		t := word{lit: true}
		parts := make([]string, len(rest))
		for i, w := range rest {
			parts[i] = w.val
			t.lit = t.lit && w.lit
		}
		t.val = strings.Join(parts, " ")
		t.src = joinWords(rest)
		u.text = &t
	case "su", "runuser":
		u.danger = "su"
		var text *word
		skipOptions(args, suOptions, func(opt string, arg word) {
			if opt == "c" || opt == "command" || opt == "session-command" {
				text = &arg
			}
		})
		if text == nil {
			u.opaque = true // starts the user's shell
			return u, true
		}
		u.text = text
	case "firejail", "bwrap", "systemd-run", "fakeroot", "proot", "torsocks",
		"proxychains", "proxychains4", "sg", "newgrp", "xvfb-run", "dbus-run-session",
		"caffeinate", "strace", "ltrace", "valgrind", "numactl", "cgexec", "prlimit",
		"setpriv", "parallel", "entr", "nix-shell", "direnv", "setarch", "linux32", "linux64",
		"i386", "x86_64", "uname26", "choom", "uclampset", "runcon", "sandbox-exec", "chpst",
		"softlimit", "envdir", "setuidgid", "tini", "dumb-init", "faketime", "eatmydata",
		"catchsegv", "rr", "perf", "ld.so", "tmux", "screen", "byobu":
		// They run a command, but their options cannot be told apart from it here.
		u.opaque = true
	default:
		if isLoader(name) {
			return unwrapped{opaque: true}, true
		}
		return unwrapped{}, false
	}
	return u, true
}

// unwrapEnv handles env: its assignments, and any option (which empties, unsets or
// changes directory) stay in front of the command it runs; -S text is split on blanks.
func unwrapEnv(ws []word) unwrapped {
	var split []word
	ok := true
	optioned := false
	rest := skipOptions(ws[1:], envOptions, func(opt string, arg word) {
		if opt != "S" && opt != "split-string" {
			optioned = true
			return
		}
		if !arg.lit {
			ok = false
			return
		}
		for _, f := range strings.Fields(arg.val) {
			split = append(split, word{val: f, src: f, lit: !strings.ContainsAny(f, "$\\'\"`")})
		}
	})
	if !ok {
		return unwrapped{opaque: true}
	}
	if len(rest) > 0 && rest[0].lit && rest[0].val == "--" {
		rest = rest[1:]
	}
	var u unwrapped
	u.keep, u.rest = splitAssignments(append(split, rest...))
	if optioned && len(u.rest) > 0 {
		u.keep = slices.Clone(ws[:len(ws)-len(rest)])
		u.keep = append(u.keep, split...)
		u.keep, u.rest = appendAssignments(u.keep, rest)
	}
	return u
}

// splitAssignments returns the leading assignment words of ws and the rest. As env and
// sudo do, any word with "=" counts (env 'A-B=1' cmd sets a variable "A-B").
func splitAssignments(ws []word) (assigns, rest []word) {
	i := 0
	for i < len(ws) && strings.Contains(ws[i].text(), "=") && !strings.HasPrefix(ws[i].text(), "=") {
		i++
	}
	return slices.Clone(ws[:i]), ws[i:]
}

// appendAssignments appends the leading assignments of ws to keep.
func appendAssignments(keep, ws []word) ([]word, []word) {
	assigns, rest := splitAssignments(ws)
	return append(keep, assigns...), rest
}

// setsVariables reports the builtins whose effect on later commands depends on their
// every word (read PATH, unset GIT_DIR, set -a, alias ls=…): an "always" for one must
// not allow the others, so their root is the whole command.
func setsVariables(name string, ws []word) bool {
	switch name {
	case "read", "mapfile", "readarray", "unset", "getopts", "set", "shopt", "alias",
		"hash", "enable", "source", ".", "trap", "umask", "ulimit", "declare", "typeset",
		"local", "export", "readonly", "let":
		return true
	case "printf":
		return hasOption(ws[1:], 'v')
	}
	return false
}

// dropGlobalOptions returns the command ws of git or go without the global options
// before its subcommand ("git -C dir -c k=v commit -m x" as "git commit -m x"), so that
// deny and ask rules written for the subcommand see it.
func dropGlobalOptions(name string, ws []word) (string, bool) {
	rest, ok := dropGlobalWords(name, ws)
	if !ok {
		return "", false
	}
	return joinWords(append([]word{{val: name, src: name, lit: true}}, rest...)), true
}

// dropGlobalWords returns the words of the command ws of git or go from its
// subcommand on, and whether there were global options before it.
func dropGlobalWords(name string, ws []word) ([]word, bool) {
	var withArg []string
	switch name {
	case "git":
		withArg = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source"}
	case "go":
		withArg = []string{"-C"}
	default:
		return ws[min(1, len(ws)):], false
	}
	i := 1
	for i < len(ws) {
		w := ws[i]
		if !w.lit || !strings.HasPrefix(w.val, "-") || w.val == "--" {
			break
		}
		opt, _, hasVal := strings.Cut(w.val, "=")
		if slices.Contains(withArg, opt) && !hasVal {
			i++
		} else if name == "go" && !strings.HasPrefix(w.val, "-C") {
			break
		}
		i++
	}
	if i > len(ws) {
		return nil, false
	}
	return ws[i:], i > 1
}

// runsText reports whether the command ws runs shell text: a shell with -c, or eval.
func runsText(ws []word) bool {
	if !ws[0].lit {
		return true
	}
	switch baseName(ws[0].val) {
	case "eval":
		return true
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh":
		return hasOption(ws[1:], 'c')
	}
	return false
}

// isLoader reports the dynamic loader run as a program (ld-linux-x86-64.so.2 PROG),
// which runs the program it is given.
func isLoader(name string) bool {
	return strings.HasPrefix(name, "ld-linux") || strings.HasPrefix(name, "ld.so") || strings.HasPrefix(name, "ld64.so")
}
