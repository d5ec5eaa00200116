package search

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pattern is a validated grep_search pattern in the forms both engines need.
//
// The search is line by line, as ripgrep's is: a match never spans a line break. So the
// parse tree is rewritten before either engine sees it: character classes and "." lose
// "\n", and ^, $, \A and \z match at line boundaries (ripgrep treats all four that
// way). A pattern that would still need a line break to match (a literal "\n") is
// refused, as ripgrep refuses it. Classes and "." also lose U+FFFD: Go reads a byte
// that is not UTF-8 as that character while Rust's regex matches nothing there, and
// this keeps the engines agreeing on lines from files in legacy encodings.
type pattern struct {
	// re is the Go form, searching a buffer of whole lines.
	re *regexp.Regexp
	// rgArgs are the ripgrep arguments that select the same lines: the pattern printed
	// in Rust regex syntax from the rewritten tree, or -F with the literal.
	rgArgs []string
	// literal is set when the whole pattern is one case-sensitive literal, so a needle
	// hit is a match without running re.
	literal bool
	// needles is a set of strings one of which every match contains (nil when there is
	// no useful set); fold says they are to be found ignoring ASCII case.
	needles [][]byte
	fold    bool
}

// maxNeedles bounds the alternatives of the prefilter; beyond it scanning once per
// needle stops paying for itself.
const maxNeedles = 8

// compilePattern validates expr (a Go regular expression, or a literal if fixed) and
// builds both engines' forms of it.
func compilePattern(expr string, fixed, caseSensitive bool) (*pattern, error) {
	if expr == "" {
		return nil, fmt.Errorf("pattern must not be empty")
	}
	if strings.ContainsRune(expr, '\n') {
		return nil, fmt.Errorf("pattern %q contains a line break, but the search runs line by line: search for one line of it", expr)
	}
	src := expr
	if fixed {
		src = regexp.QuoteMeta(expr)
	}
	flags := syntax.Perl
	if !caseSensitive {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(src, flags)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %w", expr, err)
	}
	tree, err = lineOriented(tree)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %w", expr, err)
	}
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %w", expr, err)
	}
	p := &pattern{re: re}
	if fixed {
		p.rgArgs = []string{"--fixed-strings"}
		if caseSensitive {
			p.rgArgs = append(p.rgArgs, "--case-sensitive")
		} else {
			p.rgArgs = append(p.rgArgs, "--ignore-case")
		}
		p.rgArgs = append(p.rgArgs, "--regexp", expr)
	} else {
		// Case folding is already in the tree (folded literals, closed classes), so rg
		// gets the pattern as is and matches case-sensitively.
		var b strings.Builder
		printRust(&b, tree)
		p.rgArgs = []string{"--case-sensitive", "--regexp", b.String()}
	}
	if tree.Op == syntax.OpLiteral && tree.Flags&syntax.FoldCase == 0 {
		p.literal = true
		p.needles = [][]byte{[]byte(string(tree.Rune))}
	} else if n := required(tree); n != nil && n.useful() {
		p.needles, p.fold = n.strs, n.fold
	}
	return p, nil
}

// lineOriented rewrites tree so that no match can span a line break (see pattern).
func lineOriented(re *syntax.Regexp) (*syntax.Regexp, error) {
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		re.Op = syntax.OpCharClass
		re.Rune = removeInvalid(removeNewline([]rune{0, unicode.MaxRune}))
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
		re.Flags &^= syntax.WasDollar
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return nil, fmt.Errorf("the pattern matches a line break (\\n), but the search runs line by line")
			}
		}
	case syntax.OpCharClass:
		re.Rune = removeInvalid(removeNewline(re.Rune))
		if len(re.Rune) == 0 {
			re.Op = syntax.OpNoMatch
		}
	}
	for i, sub := range re.Sub {
		s, err := lineOriented(sub)
		if err != nil {
			return nil, err
		}
		re.Sub[i] = s
	}
	return re, nil
}

// removeNewline returns the class ranges without '\n'.
func removeNewline(ranges []rune) []rune { return removeRune(ranges, '\n') }

// removeInvalid returns the class ranges without U+FFFD, what Go decodes bytes that are
// not UTF-8 to.
func removeInvalid(ranges []rune) []rune { return removeRune(ranges, utf8.RuneError) }

func removeRune(ranges []rune, r rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= r && r <= hi {
			if lo < r {
				out = append(out, lo, r-1)
			}
			if hi > r {
				out = append(out, r+1, hi)
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// printRust writes re in the syntax of Rust's regex crate, which ripgrep uses, so that
// it matches exactly what re matches in Go: every construct is spelled out (classes as
// explicit ranges, word boundaries as ASCII ones, as Go's are), never left to a default
// that differs between the two libraries.
func printRust(b *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpNoMatch:
		// Rust refuses an empty class; a word boundary that is also not one never holds.
		b.WriteString(`(?-u:\b)(?-u:\B)`)
	case syntax.OpEmptyMatch:
		b.WriteString(`(?:)`)
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString("(?i:")
		} else {
			b.WriteString("(?:")
		}
		for _, r := range re.Rune {
			writeRustRune(b, r)
		}
		b.WriteString(")")
	case syntax.OpCharClass:
		ranges := withoutSurrogates(re.Rune)
		if len(ranges) == 0 {
			b.WriteString(`(?-u:\b)(?-u:\B)`)
			return
		}
		b.WriteString("[")
		for i := 0; i+1 < len(ranges); i += 2 {
			writeRustRune(b, ranges[i])
			if ranges[i+1] != ranges[i] {
				b.WriteString("-")
				writeRustRune(b, ranges[i+1])
			}
		}
		b.WriteString("]")
	case syntax.OpAnyCharNotNL:
		b.WriteString(`[^\n]`)
	case syntax.OpAnyChar:
		b.WriteString(`(?s:.)`)
	case syntax.OpBeginLine:
		b.WriteString(`(?m:^)`)
	case syntax.OpEndLine:
		b.WriteString(`(?m:$)`)
	case syntax.OpBeginText:
		b.WriteString(`\A`)
	case syntax.OpEndText:
		b.WriteString(`\z`)
	case syntax.OpWordBoundary:
		b.WriteString(`(?-u:\b)`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`(?-u:\B)`)
	case syntax.OpCapture:
		b.WriteString("(?:")
		printRust(b, re.Sub[0])
		b.WriteString(")")
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		b.WriteString("(?:")
		printRust(b, re.Sub[0])
		b.WriteString(")")
		switch re.Op {
		case syntax.OpStar:
			b.WriteString("*")
		case syntax.OpPlus:
			b.WriteString("+")
		case syntax.OpQuest:
			b.WriteString("?")
		default:
			b.WriteString("{" + strconv.Itoa(re.Min))
			switch {
			case re.Max < 0:
				b.WriteString(",")
			case re.Max != re.Min:
				b.WriteString("," + strconv.Itoa(re.Max))
			}
			b.WriteString("}")
		}
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteString("?")
		}
	case syntax.OpConcat:
		b.WriteString("(?:")
		for _, sub := range re.Sub {
			printRust(b, sub)
		}
		b.WriteString(")")
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for i, sub := range re.Sub {
			if i > 0 {
				b.WriteString("|")
			}
			printRust(b, sub)
		}
		b.WriteString(")")
	default:
		// Unreachable for trees from syntax.Parse; a pattern that matches nothing is the
		// safe reading of an operator this printer does not know.
		b.WriteString(`(?-u:\b)(?-u:\B)`)
	}
}

// writeRustRune writes r so that it is a literal in any Rust regex context.
func writeRustRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
		b.WriteRune(r)
		return
	}
	fmt.Fprintf(b, `\x{%X}`, r)
}

// withoutSurrogates clips class ranges to Unicode scalar values: Rust rejects surrogate
// code points in a class, and no text contains them.
func withoutSurrogates(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges))
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo >= 0xD800 && lo <= 0xDFFF {
			lo = 0xE000
		}
		if hi >= 0xD800 && hi <= 0xDFFF {
			hi = 0xD7FF
		}
		if lo < 0xD800 && hi > 0xDFFF {
			out = append(out, lo, 0xD7FF, 0xE000, hi)
			continue
		}
		if lo <= hi {
			out = append(out, lo, hi)
		}
	}
	return out
}

// needleSet is a set of strings one of which every match must contain.
type needleSet struct {
	strs [][]byte
	fold bool // compare ignoring ASCII case (strs are lower case)
}

// useful reports whether scanning for the set is worth it: a few needles, none so short
// that nearly every line holds one.
func (n *needleSet) useful() bool {
	if len(n.strs) == 0 || len(n.strs) > maxNeedles {
		return false
	}
	for _, s := range n.strs {
		if len(s) < 2 {
			return false
		}
	}
	return true
}

// score ranks sets: longer shortest needles and fewer of them are better.
func (n *needleSet) score() int {
	if n == nil || len(n.strs) == 0 {
		return 0
	}
	short := len(n.strs[0])
	for _, s := range n.strs[1:] {
		short = min(short, len(s))
	}
	return short*16 - len(n.strs)
}

// required returns a set of needles one of which every match of re contains, or nil.
func required(re *syntax.Regexp) *needleSet {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			s := foldNeedle(re.Rune)
			if s == nil {
				return nil
			}
			return &needleSet{strs: [][]byte{s}, fold: true}
		}
		return &needleSet{strs: [][]byte{[]byte(string(re.Rune))}}
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best *needleSet
		for _, sub := range re.Sub {
			if n := required(sub); n != nil && n.useful() && n.score() > best.score() {
				best = n
			}
		}
		return best
	case syntax.OpAlternate:
		var all needleSet
		for i, sub := range re.Sub {
			n := required(sub)
			if n == nil || !n.useful() || (i > 0 && n.fold != all.fold) {
				return nil
			}
			all.fold = n.fold
			all.strs = append(all.strs, n.strs...)
			if len(all.strs) > maxNeedles {
				return nil
			}
		}
		return &all
	}
	return nil
}

// foldNeedle returns the longest run of a case-folded literal that an ASCII-only,
// case-insensitive comparison finds exactly, lower-cased: the run may hold only ASCII
// characters whose case variants are all ASCII (so not k or s, which also fold to the
// Kelvin sign and the long s).
func foldNeedle(lit []rune) []byte {
	var best, cur []byte
	for _, r := range lit {
		ok := r < utf8.RuneSelf
		if ok {
			l := unicode.ToLower(r)
			ok = l != 'k' && l != 's'
		}
		if !ok {
			if len(cur) > len(best) {
				best = cur
			}
			cur = nil
			continue
		}
		cur = append(cur, byte(unicode.ToLower(r)))
	}
	if len(cur) > len(best) {
		best = cur
	}
	if len(best) == 0 {
		return nil
	}
	return best
}

// indexNeedle returns the offset of the first needle of p in data, or -1.
func (p *pattern) indexNeedle(data []byte) int {
	if len(p.needles) == 1 {
		if p.fold {
			return indexFold(data, p.needles[0])
		}
		return bytes.Index(data, p.needles[0])
	}
	longest := 0
	for _, n := range p.needles {
		longest = max(longest, len(n))
	}
	first := -1
	for _, n := range p.needles {
		var i int
		if p.fold {
			i = indexFold(data, n)
		} else {
			i = bytes.Index(data, n)
		}
		if i >= 0 && (first < 0 || i < first) {
			first = i
			// Only a hit starting before this one matters to the needles still to come.
			data = data[:min(len(data), i+longest)]
		}
	}
	return first
}

// indexFold returns the offset of the first occurrence of needle (lower-case ASCII) in
// data, comparing ASCII letters without regard to case, or -1. It scans for the needle's
// rarest byte with bytes.IndexByte (vectorised) in both cases and verifies around hits.
func indexFold(data, needle []byte) int {
	if len(needle) == 0 {
		return 0
	}
	at := rarest(needle)
	lo := needle[at]
	up := lo
	if lo >= 'a' && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	nextLo, nextUp := -2, -2 // -2: not yet looked for; -1: none left
	for pos := at; pos < len(data); {
		if nextLo != -1 && nextLo < pos {
			if i := bytes.IndexByte(data[pos:], lo); i >= 0 {
				nextLo = pos + i
			} else {
				nextLo = -1
			}
		}
		if up != lo && nextUp != -1 && nextUp < pos {
			if i := bytes.IndexByte(data[pos:], up); i >= 0 {
				nextUp = pos + i
			} else {
				nextUp = -1
			}
		}
		cand := nextLo
		if up != lo && nextUp >= 0 && (cand < 0 || nextUp < cand) {
			cand = nextUp
		}
		if cand < 0 {
			return -1
		}
		start := cand - at
		if start+len(needle) <= len(data) && equalFoldASCII(data[start:start+len(needle)], needle) {
			return start
		}
		pos = cand + 1
	}
	return -1
}

// equalFoldASCII reports whether s equals lower (lower-case ASCII) ignoring ASCII case.
func equalFoldASCII(s, lower []byte) bool {
	for i, c := range lower {
		d := s[i]
		if d >= 'A' && d <= 'Z' {
			d += 'a' - 'A'
		}
		if d != c {
			return false
		}
	}
	return true
}

// rarest returns the index of the byte of needle least likely to occur in source code,
// so that scanning for it stops as seldom as possible.
func rarest(needle []byte) int {
	best, bestRank := 0, 256
	for i, c := range needle {
		if r := byteRank(c); r < bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

// commonBytes lists bytes from most to least frequent in typical source code (letters
// counting both cases); bytes not listed are rarer than all of them.
const commonBytes = " etn\nrioasl\tcdupmf.h(),g\"=b_y;:v/w-*{}0x1k>[]'2<#&+q3j!z\\%4|5$"

// byteRank is the rarity rank of c: lower is rarer.
func byteRank(c byte) int {
	if c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	if i := strings.IndexByte(commonBytes, c); i >= 0 {
		return 255 - i
	}
	return 0
}
