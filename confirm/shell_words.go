package confirm

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
			// "{}" (find's and xargs's placeholder) is not a brace expansion.
			glob = glob || *openBrace && !(i > 0 && s[i-1] == '{')
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

// rootName is the program of a command whose first word is w: its name for a program
// of the system's ("git" for /usr/bin/git), else as written ("./scripts/git", which an
// "always" for git must not cover).
func rootName(w word) string {
	switch {
	case !w.lit:
		return w.src
	case w.val == "":
		return "''"
	case systemProgram(w.val):
		return baseName(w.val)
	}
	return w.val
}

// systemProgram reports a path to a program in one of the system's own program
// directories, which is the program its name says: /usr/bin/git is git.
func systemProgram(p string) bool {
	switch path.Dir(p) {
	case "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin":
		return true
	}
	return false
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
			name = longOption(spec.long, name)
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

// longOption returns the long option of names that name abbreviates, as GNU getopt
// accepts ("--kill" for "--kill-after"), or name itself.
func longOption(names []string, name string) string {
	if name == "" || slices.Contains(names, name) {
		return name
	}
	for _, n := range names {
		if strings.HasPrefix(n, name) {
			return n
		}
	}
	return name
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
