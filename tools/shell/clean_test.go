package shell

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello\nworld\n", "hello\nworld\n"},
		{"colours", "\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[m\n", "red and bold green\n"},
		{"cursor movement", "a\x1b[2K\x1b[1Gb\x1b[?25l\n", "ab\n"},
		{"window title, BEL", "\x1b]0;my title\x07text\n", "text\n"},
		{"hyperlink, ST", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
		{"charset selection", "\x1b(Bplain\x1b)0\n", "plain\n"},
		{"DCS string", "\x1bPq#0;2;0;0;0\x1b\\after\n", "after\n"},
		{"keypad mode", "\x1b=x\x1b>\n", "x\n"},
		{"other controls dropped", "a\x00b\x07c\x0ed\x7fe\tf\n", "abcde\tf\n"},
		{"progress bar", "10%\r50%\r100%\ndone\n", "100%\ndone\n"},
		{"CRLF is a newline", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"CR CR LF", "one\r\r\ntwo", "one\ntwo"},
		{"trailing CR keeps line", "downloading\r", "downloading"},
		{"backspace", "ab\bc\n", "ac\n"},
		{"backspace over a character", "né\bx\n", "nx\n"},
		{"backspace at line start", "\bx\n", "x\n"},
		{"UTF-8 kept", "héllo → 世界 🎉\n", "héllo → 世界 🎉\n"},
		{"invalid UTF-8 replaced", "a\xffb\n", "a\uFFFDb\n"},
		{"unterminated escape at end", "text\x1b[3", "text"},
		{"no trailing newline", "last", "last"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cleanText([]byte(tt.in)); got != tt.want {
				t.Errorf("cleanText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestCleanSplit feeds text split at every position, as pipe reads may split it, and
// expects the same text as from one piece; every piece must be whole UTF-8.
func TestCleanSplit(t *testing.T) {
	in := "\x1b[31mréd\x1b[0m 世界\r\nbar 10%\rbar 99%\rbar 100%\n\x1b]0;t\x1b\\ok🎉\bX\n"
	want := cleanText([]byte(in))
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var c cleaner
			var got []byte
			e := lineEditor{emit: func(p []byte) { got = append(got, p...) }, lineMax: lineLimit}
			for _, piece := range []string{in[:i], in[i:j], in[j:]} {
				chunk := c.clean([]byte(piece))
				if incompleteSuffix(chunk) != 0 {
					t.Fatalf("split %d,%d: chunk %q ends inside a character", i, j, chunk)
				}
				e.write(chunk)
			}
			e.write(c.flush())
			e.flush()
			if string(got) != want {
				t.Fatalf("split %d,%d: got %q, want %q", i, j, got, want)
			}
		}
	}
}

func TestLineEditorLongLine(t *testing.T) {
	var got bytes.Buffer
	e := lineEditor{emit: func(p []byte) { got.Write(p) }, lineMax: 10}
	// The line is passed on when it outgrows the limit; the carriage return can only
	// start over what came after.
	e.write([]byte("0123456789abc\rXY\n"))
	e.flush()
	if want := "0123456789abcXY\n"; got.String() != want {
		t.Errorf("got %q, want %q", got.String(), want)
	}
}

func TestHeadTail(t *testing.T) {
	line := strings.Repeat("x", 9) + "\n" // 10 bytes
	const marker = 300
	tests := []struct {
		name      string
		size      int
		limit     int
		shortened bool
	}{
		{"small", 100, outputLimit, false},
		{"exactly the limit", outputLimit, outputLimit, false},
		{"one line over", outputLimit + 10, outputLimit, true},
		{"large", 10 * outputLimit, outputLimit, true},
		{"within the bytes kept, over the budget", 30_000, 20_000, true},
		{"within the head, over the budget", 6_000, 4_000, true},
		{"large, small budget", 10 * outputLimit, 4_000, true},
		{"exactly a small budget", 4_000, 4_000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h headTail
			var all strings.Builder
			for i := 0; all.Len() < tt.size; i++ {
				s := line
				all.WriteString(s)
				// Write in uneven pieces to exercise the ring's wrap-around.
				for len(s) > 0 {
					k := min(len(s), 1+i%7)
					h.write([]byte(s[:k]))
					s = s[k:]
				}
			}
			whole := all.String()
			if got, want := h.lineCount(), int64(strings.Count(whole, "\n")); got != want {
				t.Errorf("lineCount %d, want %d", got, want)
			}
			head, tail, omitted, omittedLines := h.result(tt.limit, marker)
			if !tt.shortened {
				if omitted != 0 || omittedLines != 0 || head != whole || tail != "" {
					t.Fatalf("got head %d bytes, tail %d, omitted %d; want the whole %d bytes", len(head), len(tail), omitted, all.Len())
				}
				return
			}
			if len(head)+len(tail) > tt.limit-marker {
				t.Errorf("kept %d bytes, more than %d", len(head)+len(tail), tt.limit-marker)
			}
			if len(head) > (tt.limit-marker)/5 {
				t.Errorf("head is %d bytes, more than a fifth of %d", len(head), tt.limit-marker)
			}
			if !strings.HasPrefix(whole, head) || !strings.HasSuffix(whole, tail) {
				t.Errorf("head or tail is not the start or end of the output")
			}
			if int64(len(head)+len(tail))+omitted != int64(len(whole)) {
				t.Errorf("head %d + tail %d + omitted %d != %d", len(head), len(tail), omitted, len(whole))
			}
			gap := whole[len(head) : len(whole)-len(tail)]
			if want := int64(strings.Count(gap, "\n")); omittedLines != want {
				t.Errorf("omitted lines %d, want %d", omittedLines, want)
			}
			if !strings.HasSuffix(head, "\n") || len(tail) > 0 && tail[0] != 'x' {
				t.Errorf("head or tail cut inside a line")
			}
		})
	}
}

// TestHeadTailCharacters checks that a shortened output is cut between characters and
// that the omitted count is in characters, and the lines in one long line.
func TestHeadTailCharacters(t *testing.T) {
	for _, limit := range []int{outputLimit, 5_000} {
		var h headTail
		const n = outputLimit // characters, each 3 bytes, no newlines
		h.write([]byte(strings.Repeat("世", n)))
		head, tail, omitted, lines := h.result(limit, 0)
		if strings.ContainsRune(head+tail, '\uFFFD') {
			t.Fatal("a character was cut")
		}
		shown := int64(len([]rune(head)) + len([]rune(tail)))
		if shown+omitted != n {
			t.Errorf("limit %d: shown %d + omitted %d != %d characters", limit, shown, omitted, n)
		}
		if shown > int64(limit) {
			t.Errorf("limit %d: shown %d characters", limit, shown)
		}
		if lines != 1 || h.lineCount() != 1 {
			t.Errorf("limit %d: omitted lines %d, line count %d; want 1 (part of the one line)", limit, lines, h.lineCount())
		}
	}
}

// TestIndexSpecial checks the word-at-a-time search against a byte-by-byte one, for
// every byte value at every position of blocks longer and shorter than a word.
func TestIndexSpecial(t *testing.T) {
	naive := func(p []byte) int {
		for i, b := range p {
			if special[b] {
				return i
			}
		}
		return -1
	}
	for _, size := range []int{1, 7, 8, 31, 32, 33, 70} {
		for pos := range size {
			for b := range 256 {
				p := bytes.Repeat([]byte("x"), size)
				p[pos] = byte(b)
				if size > 2 {
					p[size/2] = '\n' // a harmless control elsewhere in the block
				}
				if pos == size/2 && b != '\n' {
					p[pos] = byte(b)
				}
				if got, want := indexSpecial(p), naive(p); got != want {
					t.Fatalf("size %d, byte %#x at %d: got %d, want %d", size, b, pos, got, want)
				}
			}
		}
	}
}

func TestCountRunes(t *testing.T) {
	for _, s := range []string{"", "a", "héllo wörld", strings.Repeat("世界🎉x", 37), strings.Repeat("é", 9)} {
		for i := range len(s) + 1 {
			if i < len(s) && !utf8.RuneStart(s[i]) {
				continue
			}
			if got, want := countRunes([]byte(s[i:])), utf8.RuneCountInString(s[i:]); got != want {
				t.Errorf("countRunes(%q) = %d, want %d", s[i:], got, want)
			}
		}
	}
}
