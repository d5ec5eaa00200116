package shell

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// cleaner turns a command's raw output into text for people and the model as it streams:
// it removes ANSI escape sequences (colours, cursor movement, window titles) and the
// control characters that are not white space, backspace or carriage return, and never
// ends a chunk in the middle of a UTF-8 sequence, so every chunk it returns is whole text
// even when the pipe split a sequence or a character between two reads.
type cleaner struct {
	state escState
	// pend holds the first bytes of a UTF-8 sequence that ended the previous chunk.
	pend [utf8.UTFMax]byte
	npen int
	buf  []byte
}

// escState is where the cleaner is in an escape sequence.
type escState uint8

const (
	stGround    escState = iota
	stEsc                // after ESC
	stEscInter           // after ESC and intermediate bytes (0x20–0x2F), e.g. ESC ( B
	stCSI                // after ESC [
	stString             // inside OSC, DCS, SOS, PM or APC, ended by BEL or ESC \
	stStringEsc          // after ESC inside a string
)

// special marks the bytes that end the fast path in the ground state: ESC and the
// control characters that are dropped. Backspace, tab, newline, vertical tab, form
// feed and carriage return (0x08 to 0x0d) pass; the line editor interprets backspace
// and carriage return.
var special = func() (t [256]bool) {
	for b := range 0x20 {
		t[b] = b < 0x08 || b > 0x0d
	}
	t[0x7f] = true
	return t
}()

// clean returns the text of p. The result aliases p or an internal buffer and is valid
// until the next call.
func (c *cleaner) clean(p []byte) []byte {
	if c.state == stGround && c.npen == 0 {
		i := indexSpecial(p)
		if i < 0 {
			return c.holdBack(p)
		}
		c.buf = append(c.buf[:0], p[:i]...)
		p = p[i:]
	} else {
		c.buf = append(c.buf[:0], c.pend[:c.npen]...)
		c.npen = 0
	}
	for _, b := range p {
		switch c.state {
		case stGround:
			switch {
			case b == 0x1b:
				c.state = stEsc
			case !special[b]:
				c.buf = append(c.buf, b)
			}
		case stEsc:
			switch {
			case b == '[':
				c.state = stCSI
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				c.state = stString
			case b >= 0x20 && b <= 0x2f:
				c.state = stEscInter
			case b == 0x1b:
				// ESC ESC: the first one was stray; stay in the escape.
			default:
				c.state = stGround
			}
		case stEscInter:
			if b < 0x20 || b > 0x2f {
				c.state = stGround
			}
		case stCSI:
			if b >= 0x40 && b <= 0x7e {
				c.state = stGround
			}
		case stString:
			switch b {
			case 0x07:
				c.state = stGround
			case 0x1b:
				c.state = stStringEsc
			}
		case stStringEsc:
			if b == '\\' {
				c.state = stGround
			} else if b != 0x1b {
				c.state = stString
			}
		}
	}
	return c.holdBack(c.buf)
}

// flush returns what clean held back: an incomplete UTF-8 sequence at the very end of
// the output.
func (c *cleaner) flush() []byte {
	p := c.pend[:c.npen]
	c.npen = 0
	return p
}

// holdBack keeps an incomplete UTF-8 sequence at the end of p for the next chunk and
// returns the rest.
func (c *cleaner) holdBack(p []byte) []byte {
	n := incompleteSuffix(p)
	if n == 0 {
		return p
	}
	c.npen = copy(c.pend[:], p[len(p)-n:])
	return p[:len(p)-n]
}

// incompleteSuffix returns the length of the start of a multi-byte UTF-8 sequence that
// ends p without its continuation bytes, or 0.
func incompleteSuffix(p []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(p); i++ {
		b := p[len(p)-i]
		if b < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(b) {
			var need int
			switch {
			case b&0xe0 == 0xc0:
				need = 2
			case b&0xf0 == 0xe0:
				need = 3
			case b&0xf8 == 0xf0:
				need = 4
			default:
				return 0 // not a valid lead byte: leave it for replacement later
			}
			if need > i {
				return i
			}
			return 0
		}
	}
	return 0
}

// Word-at-a-time constants: a 1 and a high bit in every byte of a uint64.
const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// indexSpecial returns the index of the first special byte of p, or -1. Output is
// megabytes of plain text far more often than not, so it tests 32 bytes at a time and
// looks at single bytes only in a block that has a special one.
func indexSpecial(p []byte) int {
	i := 0
	for q := p; len(q) >= 32; q = q[32:] {
		if specialIn(binary.LittleEndian.Uint64(q))|
			specialIn(binary.LittleEndian.Uint64(q[8:]))|
			specialIn(binary.LittleEndian.Uint64(q[16:]))|
			specialIn(binary.LittleEndian.Uint64(q[24:])) != 0 {
			break
		}
		i += 32
	}
	for j, b := range p[i:] {
		if special[b] {
			return i + j
		}
	}
	return -1
}

// specialIn is non-zero if one of the eight bytes of x is special: below 0x08, from
// 0x0e to 0x1f, or DEL. (Tests from "Bit Twiddling Hacks", exact about whether there
// is such a byte, not about which.)
func specialIn(x uint64) uint64 {
	low := x &^ msbs
	below08 := (x - 0x08*lsbs) &^ x
	from0e := ((0x7f+0x20)*lsbs - low) &^ x & (low + (0x7f-0x0d)*lsbs)
	del := x ^ 0x7f*lsbs
	del = (del - lsbs) &^ del
	return (below08 | from0e | del) & msbs
}

// countRunes returns the number of characters in p as utf8.RuneCount counts them for
// valid UTF-8: the bytes that are not continuation bytes (10xxxxxx), eight at a time.
func countRunes(p []byte) int {
	cont := 0
	i := 0
	for ; i+8 <= len(p); i += 8 {
		x := binary.LittleEndian.Uint64(p[i:])
		if x&msbs == 0 {
			continue
		}
		cont += bits.OnesCount64(x &^ (x << 1) & msbs)
	}
	for _, b := range p[i:] {
		if b&0xc0 == 0x80 {
			cont++
		}
	}
	return len(p) - cont
}

// lineEditor applies what carriage returns and backspaces do on a terminal to text, so
// that a progress bar redrawn a thousand times ends up as its last state rather than a
// thousand lines: text after a carriage return replaces the line it is on, a backspace
// removes the character before it, and CR LF is a newline. It holds at most lineMax
// bytes of the current line; a longer line is passed on in pieces and a later carriage
// return on it starts over only the part not yet passed on.
type lineEditor struct {
	emit    func([]byte)
	line    []byte
	pendCR  bool // the last byte was a carriage return whose meaning depends on the next
	lineMax int
}

func (e *lineEditor) write(p []byte) {
	if !e.pendCR && bytes.IndexByte(p, '\r') < 0 && bytes.IndexByte(p, '\b') < 0 {
		i := bytes.LastIndexByte(p, '\n')
		if i < 0 {
			e.appendLine(p)
			return
		}
		if len(e.line) > 0 {
			e.emit(e.line)
			e.line = e.line[:0]
		}
		e.emit(p[:i+1])
		e.appendLine(p[i+1:])
		return
	}
	for len(p) > 0 {
		if e.pendCR {
			e.pendCR = false
			if p[0] != '\n' && p[0] != '\r' {
				e.line = e.line[:0] // the line is redrawn from its start
			}
		}
		i := bytes.IndexAny(p, "\n\r\b")
		if i < 0 {
			e.appendLine(p)
			return
		}
		e.appendLine(p[:i])
		switch p[i] {
		case '\n':
			e.line = append(e.line, '\n')
			e.emit(e.line)
			e.line = e.line[:0]
		case '\r':
			e.pendCR = true
		case '\b':
			if len(e.line) > 0 {
				_, n := utf8.DecodeLastRune(e.line)
				e.line = e.line[:len(e.line)-n]
			}
		}
		p = p[i+1:]
	}
}

func (e *lineEditor) appendLine(p []byte) {
	e.line = append(e.line, p...)
	if len(e.line) > e.lineMax {
		e.emit(e.line)
		e.line = e.line[:0]
	}
}

// flush passes on the unterminated last line. A trailing carriage return with nothing
// after it leaves the line as it was.
func (e *lineEditor) flush() {
	e.pendCR = false
	if len(e.line) > 0 {
		e.emit(e.line)
		e.line = e.line[:0]
	}
}

// cleanText returns s as the model should see it: escape sequences removed and carriage
// returns and backspaces applied.
func cleanText(s []byte) string {
	var c cleaner
	var out []byte
	e := lineEditor{emit: func(p []byte) { out = append(out, p...) }, lineMax: len(s) + 1}
	e.write(c.clean(s))
	e.write(c.flush())
	e.flush()
	return string(bytes.ToValidUTF8(out, []byte("\uFFFD")))
}
