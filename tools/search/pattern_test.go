package search

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCompilePattern(t *testing.T) {
	tests := []struct {
		pattern       string
		fixed, cs     bool
		literal, fold bool
		needles       string // joined with "|"; "" for none
		rust          string // the pattern rg gets
	}{
		{pattern: "func main", cs: true, literal: true, needles: "func main", rust: `(?:func\x{20}main)`},
		{pattern: "func main", fold: true, needles: "func main", rust: `(?i:FUNC\x{20}MAIN)`},
		{pattern: `func \w+Handler\(`, cs: true, needles: "Handler(", rust: `(?:(?:func\x{20})(?:[0-9A-Z_a-z])+(?:Handler\x{28}))`},
		{pattern: "class", fold: true, needles: "cla", rust: `(?i:CLASS)`},
		{pattern: "foo|bar", cs: true, needles: "foo|bar", rust: `(?:(?:foo)|(?:bar))`},
		{pattern: "a+", cs: true, rust: `(?:(?:a))+`},
		{pattern: "x*", cs: true, rust: `(?:(?:x))*`},
		{pattern: `^a.b$`, cs: true, rust: `(?:(?m:^)(?:a)[\x{0}-\x{9}\x{B}-\x{D7FF}\x{E000}-\x{FFFC}\x{FFFE}-\x{10FFFF}](?:b)(?m:$))`},
		{pattern: `\bk\B`, rust: `(?:(?-u:\b)(?i:K)(?-u:\B))`},
		{pattern: `a.b(`, fixed: true, cs: true, literal: true, needles: "a.b("},
		{pattern: `[\n\r]x`, cs: true, rust: `(?:[\x{D}](?:x))`},
		{pattern: `[^\x00-\x{10FFFF}]`, cs: true, rust: `(?-u:\b)(?-u:\B)`},
	}
	for _, tt := range tests {
		p, err := compilePattern(tt.pattern, tt.fixed, tt.cs)
		if err != nil {
			t.Errorf("%q: %v", tt.pattern, err)
			continue
		}
		var needles []string
		for _, n := range p.needles {
			needles = append(needles, string(n))
		}
		if p.literal != tt.literal || p.fold != tt.fold || strings.Join(needles, "|") != tt.needles {
			t.Errorf("%q: literal %v fold %v needles %q, want %v %v %q", tt.pattern, p.literal, p.fold, needles, tt.literal, tt.fold, tt.needles)
		}
		if tt.rust != "" && p.rgArgs[len(p.rgArgs)-1] != tt.rust {
			t.Errorf("%q: rg pattern %s, want %s", tt.pattern, p.rgArgs[len(p.rgArgs)-1], tt.rust)
		}
	}
	fixed, _ := compilePattern("a.b", true, false)
	if got := strings.Join(fixed.rgArgs, " "); got != "--fixed-strings --ignore-case --regexp a.b" {
		t.Errorf("fixed-string rg arguments: %s", got)
	}
}

func TestIndexFold(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("aAbBcC xX.\n")
	naive := func(data, needle []byte) int {
		return bytes.Index(bytes.ToLower(data), needle)
	}
	for range 2000 {
		data := make([]byte, rnd.IntN(64))
		for i := range data {
			data[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		needle := make([]byte, 1+rnd.IntN(3))
		for i := range needle {
			c := alphabet[rnd.IntN(len(alphabet))]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			needle[i] = c
		}
		if got, want := indexFold(data, needle), naive(data, needle); got != want {
			t.Fatalf("indexFold(%q, %q) = %d, want %d", data, needle, got, want)
		}
	}
}
