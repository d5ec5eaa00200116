package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"unicode/utf8"
)

// A collector keeps at most outputLimit bytes of text (so at most that many
// characters): the first headLimit bytes and the last tailLimit. What the model receives
// is cut from them to the budget of the call's result (see Shell.textBudget).
const (
	outputLimit = 40_000
	headLimit   = outputLimit / 5
	tailLimit   = outputLimit - headLimit
	// lineLimit bounds the current line the line editor keeps to apply carriage returns.
	lineLimit = 8 << 10
)

// collector takes a command's raw output as it arrives and keeps only bounded amounts of
// it in memory: the cleaned text goes to the live writer and into a head and a ring-buffer
// tail for the model, and the raw bytes go to a file in dir once there are more than
// outputLimit of them. It is used by one goroutine at a time.
type collector struct {
	live    io.Writer
	liveErr error
	clean   cleaner
	lines   lineEditor
	text    headTail
	raw     spill
}

func newCollector(live io.Writer, dir string) *collector {
	c := &collector{live: live, raw: spill{dir: dir}}
	c.lines = lineEditor{emit: c.text.write, lineMax: lineLimit}
	return c
}

// write takes one chunk of raw output.
func (c *collector) write(p []byte) {
	c.raw.write(p)
	c.written(c.clean.clean(p))
}

func (c *collector) written(t []byte) {
	if len(t) == 0 {
		return
	}
	if c.live != nil && c.liveErr == nil {
		if _, err := c.live.Write(t); err != nil {
			// A front end that stops listening must not stop the command: keep
			// collecting for the model.
			c.liveErr = err
			slog.Warn("shell: live output writer failed; output is still collected", "err", err)
		}
	}
	c.lines.write(t)
}

// output is what a collector made of a command's output.
type output struct {
	// Head is the cleaned output, or its beginning if it was too long; Tail is then its
	// end, and Omitted counts the characters left out between them, OmittedLines the
	// lines they belong to, whole or in part.
	Head, Tail   string
	Omitted      int64
	OmittedLines int64
	// Chars and Lines measure the whole cleaned output.
	Chars, Lines int64
	// File holds the complete raw output when the text was shortened ("" if it could
	// not be saved, in which case FileErr says why).
	File    string
	FileErr error
	// RawBytes is the size of the complete raw output.
	RawBytes int64
}

// finish ends the output and returns what the model is to see: the whole text if it
// has at most limit characters, else a head and a tail that leave room for the note of
// what was omitted within limit. It closes or removes the spill file: the file is kept
// only if the text had to be shortened.
func (c *collector) finish(limit int) output {
	c.written(c.clean.flush())
	c.lines.flush()
	o := output{RawBytes: c.raw.n, Chars: c.text.runes, Lines: c.text.lineCount()}
	o.Head, o.Tail, o.Omitted, o.OmittedLines = c.text.result(limit, markerAllowance(c.raw.dir))
	if o.Omitted > 0 {
		o.File, o.FileErr = c.raw.keep()
	} else if err := c.raw.discard(); err != nil {
		slog.Warn("shell: removing an unneeded output file", "err", err)
	}
	return o
}

// markerAllowance is the room the note of omitted output takes, with the name of a
// file in dir: the text around the numbers and the name, and the numbers.
func markerAllowance(dir string) int { return 300 + utf8.RuneCountInString(dir) }

// headTail keeps the first headLimit bytes written to it and a ring buffer of the last
// tailLimit bytes, and counts the characters and lines of everything.
type headTail struct {
	head     []byte
	ring     []byte // allocated once the head is full
	pos      int    // next write position in ring
	full     bool   // ring has wrapped
	n        int64  // bytes written
	runes    int64  // characters written
	newlines int64  // newlines written
	last     byte   // the last byte written
}

// lineCount is the number of lines written: a last line without a newline counts.
func (h *headTail) lineCount() int64 {
	if h.n > 0 && h.last != '\n' {
		return h.newlines + 1
	}
	return h.newlines
}

func (h *headTail) write(p []byte) {
	if len(p) == 0 {
		return
	}
	h.n += int64(len(p))
	h.runes += int64(countRunes(p))
	h.newlines += countNewlines(p)
	h.last = p[len(p)-1]
	if len(h.head) < headLimit {
		k := min(headLimit-len(h.head), len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
		if len(p) == 0 {
			return
		}
	}
	if h.ring == nil {
		h.ring = make([]byte, tailLimit)
	}
	if len(p) >= tailLimit {
		copy(h.ring, p[len(p)-tailLimit:])
		h.pos, h.full = 0, true
		return
	}
	k := copy(h.ring[h.pos:], p)
	if k < len(p) {
		copy(h.ring, p[k:])
		h.full = true
	}
	h.pos = (h.pos + len(p)) % tailLimit
	if h.pos == 0 && len(p) > 0 {
		h.full = true
	}
}

func (h *headTail) tail() []byte {
	if !h.full {
		return h.ring[:h.pos]
	}
	t := make([]byte, 0, tailLimit)
	t = append(t, h.ring[h.pos:]...)
	return append(t, h.ring[:h.pos]...)
}

// countNewlines counts the newlines in p, by which lines are counted.
func countNewlines(p []byte) int64 { return int64(bytes.Count(p, []byte{'\n'})) }

// result returns the text if it has at most limit characters, else its head and tail,
// together at most limit-marker characters, how many characters were left out between
// them and how many lines those belong to. A shortened text is cut at line boundaries
// where that loses little, and never inside a character.
func (h *headTail) result(limit, marker int) (head, tail string, omitted, omittedLines int64) {
	t := h.tail()
	if h.n <= outputLimit && h.runes <= int64(limit) {
		return validText(append(h.head, t...)), "", 0, 0
	}
	return h.cut(t, max(limit-marker, 0))
}

// cut returns a head of at most a fifth of budget characters and a tail of the rest.
func (h *headTail) cut(tail []byte, budget int) (string, string, int64, int64) {
	headSrc := h.head
	if h.n <= outputLimit {
		// All of the text is held: cut head and tail from the whole of it.
		headSrc = append(h.head[:len(h.head):len(h.head)], tail...)
		tail = headSrc
	}
	head := headSrc[:prefixRunes(headSrc, budget/5)]
	head = head[:len(head)-incompleteSuffix(head)]
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	from := suffixRunes(tail, budget-countRunes(head))
	atLine := from > 0 && tail[from-1] == '\n'
	tail = tail[from:]
	if i := bytes.IndexByte(tail, '\n'); !atLine && i >= 0 && i < len(tail)/2 && i+1 < len(tail) {
		tail, atLine = tail[i+1:], true
	}
	omitted := h.runes - int64(countRunes(head)) - int64(countRunes(tail))
	// The lines omitted are those whose newlines were, and the one the tail starts
	// inside, if it does.
	lines := h.newlines - countNewlines(head) - countNewlines(tail)
	if !atLine && omitted > 0 {
		lines++
	}
	return validText(head), validText(tail), omitted, lines
}

// prefixRunes returns the length in bytes of the first n characters of p (all of p if
// it has fewer).
func prefixRunes(p []byte, n int) int {
	off := 0
	for ; n > 0 && off < len(p); n-- {
		_, size := utf8.DecodeRune(p[off:])
		off += size
	}
	return off
}

// suffixRunes returns the offset in p where its last n characters start (0 if it has
// fewer).
func suffixRunes(p []byte, n int) int {
	off := len(p)
	for ; n > 0 && off > 0; n-- {
		_, size := utf8.DecodeLastRune(p[:off])
		off -= size
	}
	return off
}

func validText(p []byte) string { return string(bytes.ToValidUTF8(p, []byte("\uFFFD"))) }

// spill holds raw output in memory until there is more than outputLimit bytes of it,
// then in a file.
type spill struct {
	dir string
	mem []byte
	f   *os.File
	// w buffers writes to f: pipe reads are often a few kilobytes, and a write per
	// read would double the system calls of a long run.
	w   *bufio.Writer
	n   int64
	err error // the first failure to write the file; the file is then incomplete
}

// spillBuffer is the size of the spill file's write buffer.
const spillBuffer = 256 << 10

func (s *spill) write(p []byte) {
	s.n += int64(len(p))
	if s.err != nil {
		return
	}
	if s.f == nil {
		if len(s.mem)+len(p) <= outputLimit {
			s.mem = append(s.mem, p...)
			return
		}
		if s.err = s.open(); s.err != nil {
			return
		}
	}
	if _, err := s.w.Write(p); err != nil {
		s.err = fmt.Errorf("saving the full output: %w", err)
	}
}

func (s *spill) open() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("saving the full output: %w", err)
	}
	f, err := os.CreateTemp(s.dir, "shell-*.log")
	if err != nil {
		return fmt.Errorf("saving the full output: %w", err)
	}
	s.f = f
	s.w = bufio.NewWriterSize(f, spillBuffer)
	_, err = s.w.Write(s.mem)
	s.mem = nil
	if err != nil {
		return fmt.Errorf("saving the full output: %w", err)
	}
	return nil
}

// keep closes the file, writing it first if the output never outgrew memory, and returns
// its name.
func (s *spill) keep() (string, error) {
	if s.f == nil && s.err == nil {
		s.err = s.open()
	}
	if s.f == nil {
		return "", s.err
	}
	name := s.f.Name()
	if s.err == nil {
		if err := s.w.Flush(); err != nil {
			s.err = fmt.Errorf("saving the full output: %w", err)
		}
	}
	err := s.f.Close()
	s.f = nil
	if s.err != nil {
		err = s.err
	}
	if err != nil {
		if rmErr := os.Remove(name); rmErr != nil {
			err = errors.Join(err, rmErr)
		}
		return "", err
	}
	return name, nil
}

// discard removes the file, if any: the text shown is the whole output.
func (s *spill) discard() error {
	s.mem = nil
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	s.f = nil
	return errors.Join(err, os.Remove(name))
}

// plural returns one if n is 1, else many.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
