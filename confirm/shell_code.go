package confirm

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file finds what bash evaluates as code besides command and process
// substitution. Bash evaluates the value of a variable as an arithmetic expression in
// every arithmetic context, and an array subscript in that value runs any $(…) it holds:
//
//	x='a[$(touch pwned)]'; echo $((x))
//
// runs touch although the line shows no substitution. The same holds for names given to
// builtins (printf -v, read, declare, unset, test -v: a subscript in the name is
// evaluated), for ${!x} (the name in x is expanded, subscript included) and for ${x@P}
// (prompt expansion runs substitutions in the value). So any arithmetic or subscript
// that is not a plain number, and any such name that is not a plain literal name,
// counts as code.

// arithm records the arithmetic expression e of the construct what when it does more
// than combine numbers.
func (an *analyzer) arithm(src string, e syntax.ArithmExpr, what string) {
	if e == nil || arithLiteral(e) {
		return
	}
	an.code("arithmetic evaluation in " + what + ": " + shorten(nodeText(src, e)))
}

// arithLiteral reports whether e is made of numbers and operators only: no variable,
// expansion or subscript whose value bash would evaluate in turn.
func arithLiteral(e syntax.ArithmExpr) bool {
	ok := true
	syntax.Walk(e, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			if !isNumberWord(n) {
				ok = false
			}
			return false
		case *syntax.BinaryArithm, *syntax.UnaryArithm, *syntax.ParenArithm:
			return ok
		case nil:
			return false
		default:
			ok = false
			return false
		}
	})
	return ok
}

// isNumberWord reports a word that is one integer constant as bash's arithmetic reads
// them: decimal, 0x hex, octal, or BASE#DIGITS.
func isNumberWord(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || l.Value == "" {
		return false
	}
	for i := 0; i < len(l.Value); i++ {
		c := l.Value[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '#' || c == '@' || c == '_') {
			return false
		}
	}
	// A number starts with a digit; "x" or "a_b" are names.
	return l.Value[0] >= '0' && l.Value[0] <= '9'
}

// indexLiteral reports a subscript that needs no evaluation: a number, @ or *.
func indexLiteral(e syntax.ArithmExpr) bool {
	if w, ok := e.(*syntax.Word); ok && len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && (l.Value == "@" || l.Value == "*" || isDigits(l.Value) && l.Value != "") {
			return true
		}
	}
	return false
}

// isAllIndex reports the subscript @ or *.
func isAllIndex(e syntax.ArithmExpr) bool {
	w, ok := e.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && (l.Value == "@" || l.Value == "*")
}

// subscript records an array subscript that bash evaluates.
func (an *analyzer) subscript(src string, idx syntax.ArithmExpr) {
	if idx != nil && !indexLiteral(idx) {
		an.code("array subscript: " + shorten(nodeText(src, idx)))
	}
}

// param records the parameter expansions that evaluate a value as code.
func (an *analyzer) param(src string, p *syntax.ParamExp) {
	// ${!a[@]} and ${!a[*]} list keys and ${!pre*} names; ${!x[0]} is indirect.
	listing := p.Names != 0 || p.Index != nil && isAllIndex(p.Index)
	switch {
	case p.Excl && !listing:
		an.code("indirect expansion: " + shorten(nodeText(src, p)))
	case p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && strings.Contains(nodeText(src, p.Exp.Word), "P"):
		an.code("prompt expansion: " + shorten(nodeText(src, p)))
	}
	if p.Exp != nil && (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) && p.Param != nil {
		// ${NAME:=value} assigns NAME, as NAME=value would.
		an.assigned(p.Param.Value)
		if !plainVariable(p.Param.Value) {
			an.code("assignment in an expansion: " + shorten(nodeText(src, p)))
		}
	}
	an.subscript(src, p.Index)
	if p.Slice != nil {
		an.arithm(src, p.Slice.Offset, "${…:offset}")
		an.arithm(src, p.Slice.Length, "${…:offset:length}")
	}
}

// binaryTest records the arithmetic comparisons of [[ … ]], whose operands bash
// evaluates as arithmetic expressions (test and [ only accept integers).
func (an *analyzer) binaryTest(src string, t *syntax.BinaryTest) {
	switch t.Op {
	case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
	default:
		return
	}
	for _, x := range []syntax.TestExpr{t.X, t.Y} {
		if w, ok := x.(*syntax.Word); ok && (isNumberWord(w) || isSignedNumber(w)) {
			continue
		}
		an.code("arithmetic evaluation in [[ … " + t.Op.String() + " … ]]: " + shorten(nodeText(src, t)))
		return
	}
}

// isSignedNumber reports a word such as -1.
func isSignedNumber(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && len(l.Value) > 1 && (l.Value[0] == '-' || l.Value[0] == '+') && isDigits(l.Value[1:])
}

// testWord returns the word of a [[ … ]] operand.
func testWord(src string, x syntax.TestExpr) word {
	if w, ok := x.(*syntax.Word); ok {
		return newWord(src, w)
	}
	return word{val: nodeText(src, x), src: nodeText(src, x)}
}

// varName records a variable name given to a builtin (what) that bash evaluates: one
// not known until run time, or one with a subscript. A NAME=value word is judged by
// its name.
func (an *analyzer) varName(w word, what string) {
	if !w.lit {
		an.code(what + " with a name not known until run time: " + shorten(w.src))
		return
	}
	name, _, _ := strings.Cut(w.val, "=")
	an.assigned(name)
	open := strings.IndexByte(name, '[')
	if open < 0 {
		return
	}
	if idx := strings.TrimSuffix(name[open+1:], "]"); idx == "@" || idx == "*" || idx != "" && isDigits(idx) {
		return
	}
	an.code(what + " with a subscript: " + shorten(w.val))
}

// builtin records what the builtins that evaluate text or names do: source and .,
// trap, test -v, printf -v, read, mapfile, getopts, unset, wait -p, let, the declare
// family reached through builtin or command, enable -f, hash -p, alias and compgen -C.
func (an *analyzer) builtin(name string, keep, ws []word) {
	args := ws[1:]
	switch name {
	case "source", ".":
		if len(args) > 0 {
			an.code(name)
			an.opaque(keep, ws)
		}
	case "trap":
		an.trap(keep, ws)
	case "test", "[":
		for i, a := range args {
			if a.lit && (a.val == "-v" || a.val == "-R") && i+1 < len(args) {
				an.varName(args[i+1], name+" "+a.val)
			}
		}
	case "printf":
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.lit || !strings.HasPrefix(a.val, "-") || a.val == "--" {
				break
			}
			switch {
			case a.val == "-v" && i+1 < len(args):
				an.varName(args[i+1], "printf -v")
				i++
			case strings.HasPrefix(a.val, "-v") && len(a.val) > 2:
				an.varName(word{val: a.val[2:], src: a.val[2:], lit: true}, "printf -v")
			}
		}
	case "read", "mapfile", "readarray", "unset", "wait":
		an.nameOperands(name, args)
	case "getopts":
		if len(args) > 1 {
			an.varName(args[1], "getopts")
		}
	case "let":
		for _, a := range args {
			if !a.lit || !isDigits(strings.TrimLeft(a.val, "+-")) {
				an.code("let")
				break
			}
		}
	case "declare", "typeset", "local", "export", "readonly":
		for _, a := range args {
			switch {
			case a.lit && strings.HasPrefix(a.val, "-") && strings.ContainsAny(a.val, "in"):
				an.code(name + " " + a.val)
			case a.lit && strings.HasPrefix(a.val, "-"):
			default:
				an.varName(a, name)
			}
		}
	case "enable":
		if hasOption(args, 'f') {
			an.code("enable -f")
		}
	case "hash":
		if hasOption(args, 'p') {
			an.code("hash -p")
		}
	case "alias":
		for _, a := range args {
			if strings.Contains(a.text(), "=") {
				an.code("alias")
				break
			}
		}
	case "compgen", "complete":
		// -C runs a command, -F a function, and -W's word list is expanded ($(…) runs).
		for _, c := range []byte{'C', 'F', 'W'} {
			if hasOption(args, c) {
				an.code(name + " -" + string(c))
			}
		}
	}
}

// nameOperands checks the variable names given to read, mapfile, readarray, unset and
// wait -p, skipping their options' arguments. mapfile -C runs its callback as code.
func (an *analyzer) nameOperands(name string, args []word) {
	argOpts := map[string]string{"read": "adinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc", "unset": "", "wait": "p"}[name]
	names := name == "read" || name == "mapfile" || name == "readarray" || name == "unset"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			if names {
				an.varName(a, name)
			}
			continue
		}
		if !strings.HasPrefix(a.val, "-") || a.val == "-" {
			if names {
				an.varName(a, name)
			}
			continue
		}
		if a.val == "--" {
			names = name != "wait"
			continue
		}
		for j := 1; j < len(a.val); j++ {
			c := a.val[j]
			if !strings.ContainsRune(argOpts, rune(c)) {
				continue
			}
			arg := word{val: a.val[j+1:], src: a.val[j+1:], lit: true}
			if j+1 == len(a.val) {
				if i+1 >= len(args) {
					break
				}
				i++
				arg = args[i]
			}
			switch {
			case c == 'C' && name != "read":
				an.code(name + " -C")
			case c == 'a' && name == "read", c == 'p' && name == "wait":
				an.varName(arg, name+" -"+string(c))
			}
			break
		}
	}
}

// trap records a trap that installs an action: its text runs later as shell code.
func (an *analyzer) trap(keep, ws []word) {
	args := ws[1:]
	if len(args) > 0 && args[0].lit && args[0].val == "--" {
		args = args[1:]
	}
	if len(args) < 2 {
		return // trap, trap -p, trap -l, trap SIG (reset)
	}
	if a := args[0]; a.lit && (a.val == "" || a.val == "-" || strings.HasPrefix(a.val, "-")) {
		return // ignore or reset the signals
	}
	an.code("trap")
	an.opaque(keep, ws)
}

// hasOption reports whether the options at the start of args include the short
// option c, alone or in a cluster.
func hasOption(args []word, c byte) bool {
	for _, o := range options(args) {
		if !strings.HasPrefix(o, "--") && strings.IndexByte(o[1:], c) >= 0 {
			return true
		}
	}
	return false
}

// shorten keeps reasons readable: long expressions are cut.
func shorten(s string) string {
	const limit = 60
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// plainVariable reports a variable name that no program reads from the environment and
// bash gives no meaning: lower case, and not one of the proxy variables. Assigning to
// others (PATH, HOME, CDPATH, RANDOM, whose values bash evaluates as arithmetic) changes
// what later commands run.
func plainVariable(name string) bool {
	switch name {
	case "http_proxy", "https_proxy", "ftp_proxy", "no_proxy", "all_proxy":
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return name != ""
}

// assigned records an assignment to the variable name: bash evaluates what is assigned
// to its integer variables (RANDOM, OPTIND …) as arithmetic, and an assignment to PATH,
// BASH_CMDS, BASH_ALIASES, BASH_ENV or ENV changes which program a command name runs,
// as GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n, GIT_CONFIG_PARAMETERS, the
// GIT_CONFIG files and the variables that say where git reads configuration (GIT_DIR,
// HOME …) change what git runs (git -c spelled in the environment), so no deny rule
// can tell what the line's commands are.
func (an *analyzer) assigned(name string) {
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	switch name {
	case "RANDOM", "SRANDOM", "SECONDS", "OPTIND", "HISTCMD", "LINENO", "EPOCHSECONDS", "EPOCHREALTIME":
		an.code("assignment to " + name + ", whose value bash evaluates as arithmetic")
	case "BASH_CMDS", "BASH_ALIASES":
		an.code("assignment to " + name + ", which maps command names to programs")
		an.out.Opaque = append(an.out.Opaque, name+"=…")
	case "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "GLOBIGNORE", "CDPATH",
		// git -c spelled in the environment: configuration that runs commands
		// (alias.x=!cmd, core.pager, core.fsmonitor), as git -c is.
		"GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
		// Where git finds its configuration and programs: a repository's config
		// (GIT_DIR, GIT_COMMON_DIR), the user's (HOME, XDG_CONFIG_HOME), git-*
		// programs (GIT_EXEC_PATH) and the hooks a new repository gets; and the
		// transports it may use (ext:: runs a command).
		"GIT_DIR", "GIT_COMMON_DIR", "HOME", "XDG_CONFIG_HOME", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR",
		"GIT_ALLOW_PROTOCOL":
		an.out.Opaque = append(an.out.Opaque, name+"=…")
	case "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND":
		an.code("assignment to " + name + ", which bash expands as a prompt ($(…) runs)")
		an.out.Opaque = append(an.out.Opaque, name+"=…")
	default:
		if strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
			an.out.Opaque = append(an.out.Opaque, name+"=…")
		}
		if strings.HasPrefix(name, "BASH_FUNC_") {
			an.code("assignment to " + name + ", a function a child bash defines")
			an.out.Opaque = append(an.out.Opaque, name+"=…")
		}
	}
}
