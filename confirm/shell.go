package confirm

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Analysis describes what a shell command line runs. The policy allowlists shell calls
// by their Roots and asks again about any call with a Substitution or a Dangerous reason.
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
//   - "writes outside the workspace: PATH": a redirection (>, >>, >|, &>, &>>, <>, >&FILE),
//     a tee file, dd's of= or GNU time's -o whose target, resolved against the working
//     directory with .. removed (symlinks are not followed), lies outside every root;
//     /dev/null, /dev/stdout and /dev/stderr are fine;
//   - "writes under a home directory: PATH": such a target starting with ~;
//   - "writes to a path not known until run time: WORD": such a target with expansions;
//   - "command name not known until run time: WORD": a command whose name has expansions,
//     globs or ANSI-C quoting;
//   - "runs a command not known until run time: COMMAND": bash -c, eval or env -S given
//     text with expansions;
//   - "shell commands nested too deeply to analyse": more than eight levels of bash -c,
//     eval or find -exec, or more than sixteen wrappers around one command.
type Analysis struct {
	// Commands holds each simple command's words joined by spaces, in order, after
	// unwrapping wrappers: "git status", "grep -n foo". Literal words appear unquoted and
	// unescaped, words with expansions as written.
	Commands []string
	// Roots holds the program name of each command (the base name for a path, so
	// /usr/bin/git gives "git"), without repeats, in order.
	Roots []string
	// Substitution reports $(...), backticks, <(...) or >(...) anywhere in the line.
	Substitution bool
	// Dangerous holds human-readable reasons to ask again whatever the allowlist says.
	Dangerous []string
}

// maxNesting bounds how many levels of bash -c, eval and find -exec are analysed, and
// maxWrappers how many wrappers (sudo, env, ...) are removed from one command.
const (
	maxNesting  = 8
	maxWrappers = 16
)

// Analyze parses a shell command line and reports the commands it runs. dir is the
// directory it runs in (the first root when empty) and roots are the workspace roots,
// both used to tell whether a redirection writes outside the workspace.
//
// Every simple command counts, wherever it appears: pipelines, lists, subshells,
// blocks, loop and if bodies, function bodies, command substitutions. Leading variable
// assignments are not commands. These wrappers are unwrapped so the command they run is
// what counts: sudo and doas (also reported as Dangerous), env (its options and VAR=val
// words; -S is split on blanks), timeout (its options and duration), nice, xargs (its
// options; nothing after them means xargs itself), command (but not command -v or -V),
// exec, nohup, GNU time; bash, sh, zsh, dash and ksh with -c and eval have their text
// parsed in turn; the command of find -exec and its kin counts too. A wrapper with
// nothing to run is itself the command.
//
// Analyze only parses: it resolves no symlinks and runs nothing. A line that cannot be
// parsed, here or in the text given to bash -c or eval, gives an error saying so.
func Analyze(command, dir string, roots []string) (Analysis, error) {
	a, _, err := analyze(command, dir, roots)
	return a, err
}

// analyze is Analyze that also returns, for each command, the forms it had from the
// outermost wrapper in, ending with the unwrapped command; policy rules match these
// so that a rule for "sudo" or "timeout" still sees the wrapper.
func analyze(command, dir string, roots []string) (Analysis, [][]string, error) {
	an := &analyzer{
		dir:        dir,
		roots:      roots,
		seenRoot:   make(map[string]bool),
		seenDanger: make(map[string]bool),
	}
	err := an.source(command, 0, nil)
	return an.out, an.forms, err
}

// analyzer accumulates the analysis of one command line.
type analyzer struct {
	dir   string
	roots []string

	out        Analysis
	forms      [][]string
	seenRoot   map[string]bool
	seenDanger map[string]bool
}

// source parses src and analyses every command in it. outer holds the forms of the
// wrappers src was given to (bash -c, eval).
func (an *analyzer) source(src string, depth int, outer []string) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return fmt.Errorf("could not parse the shell command: %w", err)
	}
	var first error
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			an.out.Substitution = true
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				break // only assignments
			}
			ws := make([]word, len(n.Args))
			for i, w := range n.Args {
				ws[i] = newWord(src, w)
			}
			if err := an.call(ws, depth, outer); err != nil && first == nil {
				first = err
			}
		case *syntax.DeclClause:
			// export, declare, local, readonly, typeset, nameref: builtins run as commands.
			ws := []word{{val: n.Variant.Value, src: n.Variant.Value, lit: true}}
			for _, a := range n.Args {
				if a.Name == nil && a.Value == nil {
					continue
				}
				t := nodeText(src, a)
				ws = append(ws, word{val: t, src: t})
			}
			an.emit(ws, append(slices.Clone(outer), joinWords(ws)))
		case *syntax.Redirect:
			an.redirect(src, n)
		}
		return true
	})
	return first
}

// call analyses one simple command, unwrapping wrappers. forms grows by one form per
// wrapper removed.
func (an *analyzer) call(ws []word, depth int, outer []string) error {
	forms := slices.Clone(outer)
	for unwrapped := 0; len(ws) > 0; unwrapped++ {
		if unwrapped == maxWrappers {
			// Each wrapper adds a form as long as the command; bound the work.
			an.emit(ws, append(forms, joinWords(ws)))
			an.danger("shell commands nested too deeply to analyse")
			return nil
		}
		forms = append(forms, joinWords(ws))
		head := ws[0]
		if !head.lit {
			an.emit(ws, forms)
			an.danger("command name not known until run time: " + head.src)
			return nil
		}
		name := baseName(head.val)
		if name != head.val && name != "" {
			// Rules name programs, not their paths: /bin/rm must meet a rule for rm.
			short := append([]word{{val: name, src: name, lit: true}}, ws[1:]...)
			forms = append(forms, joinWords(short))
		}
		var rest []word
		switch name {
		case "sudo", "doas":
			an.danger(name)
			edit := false
			rest = skipAssignments(skipOptions(ws[1:], sudoOptions, func(opt string, _ word) {
				edit = edit || opt == "e" || opt == "edit"
			}))
			if edit {
				rest = nil // sudo -e FILE edits the file, it runs no command
			}
		case "env":
			var ok bool
			if rest, ok = an.env(ws[1:]); !ok {
				an.emit(ws, forms)
				an.danger("runs a command not known until run time: " + joinWords(ws))
				return nil
			}
		case "timeout":
			rest = skipOptions(ws[1:], timeoutOptions, nil)
			if len(rest) > 0 {
				rest = rest[1:] // the duration
			}
		case "nice":
			rest = skipOptions(ws[1:], niceOptions, nil)
		case "xargs":
			rest = skipOptions(ws[1:], xargsOptions, nil)
		case "command":
			lookup := false
			rest = skipOptions(ws[1:], commandOptions, func(opt string, _ word) {
				lookup = lookup || opt == "v" || opt == "V"
			})
			if lookup {
				rest = nil // command -v only looks the name up
			}
		case "exec":
			rest = skipOptions(ws[1:], execOptions, nil)
		case "nohup":
			rest = skipOptions(ws[1:], optionSpec{}, nil)
		case "time":
			rest = skipOptions(ws[1:], timeOptions, func(opt string, arg word) {
				if (opt == "o" || opt == "output") && (arg.lit || arg.src != "") {
					an.write(arg)
				}
			})
		case "bash", "sh", "zsh", "dash", "ksh":
			return an.shell(ws, name, depth, forms)
		case "eval":
			return an.eval(ws, depth, forms)
		default:
			an.emit(ws, forms)
			return an.check(name, ws, depth, forms)
		}
		if len(rest) == 0 {
			an.emit(ws, forms)
			return nil
		}
		ws = rest
	}
	return nil
}

// env skips env's options and assignments and returns the command it runs; ok is false
// when -S gives text with expansions.
func (an *analyzer) env(ws []word) (rest []word, ok bool) {
	var split []word
	ok = true
	rest = skipOptions(ws, envOptions, func(opt string, arg word) {
		if opt != "S" && opt != "split-string" {
			return
		}
		if !arg.lit {
			ok = false
			return
		}
		for _, f := range strings.Fields(arg.val) {
			split = append(split, word{val: f, src: f, lit: !strings.ContainsAny(f, "$\\'\"")})
		}
	})
	if !ok {
		return nil, false
	}
	return skipAssignments(append(split, rest...)), true
}

// shell handles bash, sh, zsh, dash and ksh: with -c, the text is parsed in turn;
// otherwise the shell itself is the command (it runs a script or its input).
func (an *analyzer) shell(ws []word, name string, depth int, forms []string) error {
	withC := false
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
				case 'o', 'O':
					i++ // takes the next word
				}
			}
		default:
			break options
		}
	}
	if !withC || i >= len(ws) {
		an.emit(ws, forms)
		return nil
	}
	script := ws[i]
	if !script.lit {
		an.emit(ws, forms)
		an.danger("runs a command not known until run time: " + joinWords(ws))
		return nil
	}
	if depth >= maxNesting {
		an.emit(ws, forms)
		an.danger("shell commands nested too deeply to analyse")
		return nil
	}
	if err := an.source(script.val, depth+1, forms); err != nil {
		return fmt.Errorf("%s -c: %w", name, err)
	}
	return nil
}

// eval parses the text eval is given, which is its words joined by spaces.
func (an *analyzer) eval(ws []word, depth int, forms []string) error {
	if len(ws) == 1 {
		an.emit(ws, forms)
		return nil
	}
	if slices.ContainsFunc(ws[1:], func(w word) bool { return !w.lit }) {
		an.emit(ws, forms)
		an.danger("runs a command not known until run time: " + joinWords(ws))
		return nil
	}
	if depth >= maxNesting {
		an.emit(ws, forms)
		an.danger("shell commands nested too deeply to analyse")
		return nil
	}
	text := make([]string, len(ws)-1)
	for i, w := range ws[1:] {
		text[i] = w.val
	}
	if err := an.source(strings.Join(text, " "), depth+1, forms); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// check records the Dangerous reasons of an unwrapped command named name, and analyses
// the commands find runs.
func (an *analyzer) check(name string, ws []word, depth int, forms []string) error {
	args := ws[1:]
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
	case name == "su":
		an.danger("su")
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
	case name == "find":
		return an.find(args, depth, forms)
	}
	return nil
}

// find records find's actions that run or delete, and analyses the commands that
// -exec, -execdir, -ok and -okdir run.
func (an *analyzer) find(args []word, depth int, forms []string) error {
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
			end := i + 1
			for end < len(args) && !(args[end].lit && (args[end].val == ";" || args[end].val == "+")) {
				end++
			}
			if sub := args[i+1 : end]; len(sub) > 0 {
				if depth >= maxNesting {
					an.danger("shell commands nested too deeply to analyse")
				} else if err := an.call(sub, depth+1, forms); err != nil && first == nil {
					first = err
				}
			}
			i = end
		}
	}
	return first
}

// redirect records a redirection that writes to a file.
func (an *analyzer) redirect(src string, r *syntax.Redirect) {
	if r.Word == nil {
		return
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		an.write(newWord(src, r.Word))
	case syntax.DplOut:
		w := newWord(src, r.Word)
		if fd := strings.TrimSuffix(w.val, "-"); w.lit && (fd == "" || isDigits(fd)) {
			return // >&2, >&-, >&3-: file descriptors, not files
		}
		an.write(w)
	}
}

// write records a write to the file w names when it lies outside the workspace.
func (an *analyzer) write(w word) {
	if !w.lit {
		an.danger("writes to a path not known until run time: " + w.src)
		return
	}
	p := w.val
	switch {
	case p == "" || p == "/dev/null" || p == "/dev/stdout" || p == "/dev/stderr":
		return
	case strings.HasPrefix(p, "~"):
		an.danger("writes under a home directory: " + p)
		return
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(an.base(), p)
	}
	p = filepath.Clean(p)
	if !an.inside(p) {
		an.danger("writes outside the workspace: " + p)
	}
}

// base is the directory relative paths resolve against.
func (an *analyzer) base() string {
	dir := an.dir
	if len(an.roots) > 0 && !filepath.IsAbs(dir) {
		dir = filepath.Join(an.roots[0], dir)
	}
	return dir
}

// inside reports whether the clean path p lies in one of the roots.
func (an *analyzer) inside(p string) bool {
	for _, r := range an.roots {
		if r == "" {
			continue
		}
		rel, err := filepath.Rel(filepath.Clean(r), p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// emit records a command; forms are its forms from the outermost wrapper in.
func (an *analyzer) emit(ws []word, forms []string) {
	an.out.Commands = append(an.out.Commands, joinWords(ws))
	an.forms = append(an.forms, slices.Clone(forms))
	root := rootName(ws[0])
	if !an.seenRoot[root] {
		an.seenRoot[root] = true
		an.out.Roots = append(an.out.Roots, root)
	}
}

// danger records a Dangerous reason once.
func (an *analyzer) danger(reason string) {
	if !an.seenDanger[reason] {
		an.seenDanger[reason] = true
		an.out.Dangerous = append(an.out.Dangerous, reason)
	}
}

// word is a shell word: its value when it is literal (no expansions, globs or ANSI-C
// quoting; quotes and escapes removed), and its source text.
type word struct {
	val string
	src string
	lit bool
}

// text is the word's value if literal, otherwise its source.
func (w word) text() string {
	if w.lit {
		return w.val
	}
	return w.src
}

// newWord reads w, whose source is src.
func newWord(src string, w *syntax.Word) word {
	out := word{src: nodeText(src, w), lit: true}
	var b strings.Builder
	// Globs and brace expansion only happen outside quotes, and a brace or bracket
	// expression may span parts ({a,"b"}), so their characters are tracked across parts.
	var openBrace, openBracket bool
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v, glob := unescape(p.Value, &openBrace, &openBracket)
			b.WriteString(v)
			out.lit = out.lit && !glob
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
			out.lit = out.lit && !p.Dollar
		case *syntax.DblQuoted:
			out.lit = out.lit && !p.Dollar
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					out.lit = false
					break
				}
				b.WriteString(unescapeQuoted(l.Value))
			}
		default:
			out.lit = false
		}
	}
	if out.lit {
		out.val = b.String()
	} else {
		out.val = out.src
	}
	return out
}

// unescape removes the backslashes of an unquoted literal and reports whether it holds
// a glob or brace expansion; openBrace and openBracket carry state between parts.
func unescape(s string, openBrace, openBracket *bool) (string, bool) {
	var b strings.Builder
	glob := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
				continue
			}
		case '*', '?':
			glob = true
		case '[':
			*openBracket = true
		case ']':
			glob = glob || *openBracket
		case '{':
			*openBrace = true
		case '}':
			glob = glob || *openBrace
		}
		b.WriteByte(c)
	}
	return b.String(), glob
}

// unescapeQuoted removes the backslashes that escape within double quotes.
func unescapeQuoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// nodeText returns the source of n, printing it when its position does not fit src.
func nodeText(src string, n syntax.Node) string {
	start, end := n.Pos().Offset(), n.End().Offset()
	if n.Pos().IsValid() && n.End().IsValid() && start < end && end <= uint(len(src)) {
		return src[start:end]
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil || b.Len() == 0 {
		return "''"
	}
	return b.String()
}

// joinWords renders words as a command line, showing an empty word as a pair of
// single quotes.
func joinWords(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text()
		if parts[i] == "" {
			parts[i] = "''"
		}
	}
	return strings.Join(parts, " ")
}

// rootName is the program name of a command whose first word is w.
func rootName(w word) string {
	if !w.lit {
		return w.src
	}
	if name := baseName(w.val); name != "" {
		return name
	}
	return "''"
}

// baseName is the last element of a slash-separated path, "/" for "/".
func baseName(p string) string {
	t := strings.TrimRight(p, "/")
	if t == "" {
		return p
	}
	return t[strings.LastIndexByte(t, '/')+1:]
}

// options returns the literal option words of args, up to "--".
func options(args []word) []string {
	var opts []string
	for _, a := range args {
		if !a.lit || len(a.val) < 2 || a.val[0] != '-' {
			continue
		}
		if a.val == "--" {
			break
		}
		opts = append(opts, a.val)
	}
	return opts
}

// isDigits reports whether s is made of ASCII digits only.
func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// optionSpec describes a wrapper's options, for skipping them.
type optionSpec struct {
	// arg lists the short options taking an argument, attached or in the next word.
	arg string
	// attached lists the short options whose optional argument can only be attached.
	attached string
	// long lists the long options taking an argument in the next word unless given
	// with "=".
	long []string
	// dash makes a lone "-" an option, as for env.
	dash bool
}

// The options of the wrappers.
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
	commandOptions = optionSpec{}
	execOptions    = optionSpec{arg: "a"}
	timeOptions    = optionSpec{arg: "fo", long: []string{"format", "output"}}
)

// skipOptions returns the words after the options at the start of ws. onArg, when not
// nil, sees each option (a short option's letter or a long option's name) with its
// argument, the zero word if it has none.
func skipOptions(ws []word, spec optionSpec, onArg func(opt string, arg word)) []word {
	if onArg == nil {
		onArg = func(string, word) {}
	}
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if !w.lit {
			return ws[i:]
		}
		v := w.val
		switch {
		case v == "--":
			return ws[i+1:]
		case v == "-" && spec.dash:
		case strings.HasPrefix(v, "--"):
			name, val, hasVal := strings.Cut(v[2:], "=")
			switch {
			case hasVal:
				onArg(name, word{val: val, src: val, lit: true})
			case slices.Contains(spec.long, name) && i+1 < len(ws):
				i++
				onArg(name, ws[i])
			default:
				onArg(name, word{})
			}
		case len(v) > 1 && v[0] == '-':
			for j := 1; j < len(v); j++ {
				c := v[j : j+1]
				if strings.Contains(spec.arg, c) {
					if j+1 < len(v) {
						onArg(c, word{val: v[j+1:], src: v[j+1:], lit: true})
					} else if i+1 < len(ws) {
						i++
						onArg(c, ws[i])
					}
					break
				}
				if strings.Contains(spec.attached, c) {
					onArg(c, word{val: v[j+1:], src: v[j+1:], lit: true})
					break
				}
				onArg(c, word{})
			}
		default:
			return ws[i:]
		}
	}
	return nil
}

// skipAssignments returns ws after its leading NAME=value words.
func skipAssignments(ws []word) []word {
	for len(ws) > 0 && isAssignment(ws[0].text()) {
		ws = ws[1:]
	}
	return ws
}

// isAssignment reports whether s has the form NAME=value.
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
