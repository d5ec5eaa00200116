package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// hitLine is one line of a file's search result.
type hitLine struct {
	num  int    // 1-based line number
	text string // the line without its "\n" (a trailing "\r" stays)
	col  int    // byte offset in text of the first match; -1 for a context line
}

func (h hitLine) isMatch() bool { return h.col >= 0 }

// lineSearch finds the matching lines of one file, with context, the way ripgrep
// reports them (see grep.go for what both engines share after that).
type lineSearch struct {
	pat           *pattern
	before, after int
	// perFile stops a file's search after this many matching lines (0: no limit); the
	// after-context of the last one is still reported.
	perFile int
	// chunk is the initial read buffer size; files that fit are searched in one piece.
	chunk int
}

// Byte-order marks.
const (
	bomUTF8    = "\xEF\xBB\xBF"
	bomUTF16LE = "\xFF\xFE"
	bomUTF16BE = "\xFE\xFF"
)

// errBinary reports a file holding a NUL byte, which the search skips as ripgrep does.
var errBinary = errors.New("binary file")

// search reads r to the end (or to the per-file limit) and returns the lines to report.
// A NUL byte in what it read makes the file binary: errBinary, and no lines. buf is a
// scratch buffer, returned (possibly grown) for reuse. stop is polled between chunks
// so that an abandoned search of a large file ends early; it may be nil.
func (s *lineSearch) search(r io.Reader, buf []byte, stop func() bool) ([]hitLine, []byte, error) {
	chunk := max(s.chunk, len(bomUTF8)) // the first read must see a byte-order mark whole
	if cap(buf) < chunk {
		buf = make([]byte, chunk)
	}
	buf = buf[:cap(buf)]
	st := scanState{s: s, curLine: 1}
	n, from := 0, 0
	first := true
	for {
		k, err := readFull(r, buf[n:])
		if err != nil && err != io.EOF {
			return nil, buf, err
		}
		eof := err == io.EOF
		if first {
			first = false
			head := buf[:n+k]
			switch {
			case bytes.HasPrefix(head, []byte(bomUTF16LE)), bytes.HasPrefix(head, []byte(bomUTF16BE)):
				lines, err := s.searchUTF16(head, r, eof, stop)
				return lines, buf, err
			case bytes.HasPrefix(head, []byte(bomUTF8)):
				copy(buf, buf[3:n+k])
				k -= 3
			}
		}
		if bytes.IndexByte(buf[n:n+k], 0) >= 0 {
			return nil, buf, errBinary
		}
		n += k
		if eof {
			st.scan(buf, from, n)
			return st.lines, buf, nil
		}
		if stop != nil && stop() {
			return nil, buf, errStopped
		}
		end := from
		if i := bytes.LastIndexByte(buf[from:n], '\n'); i >= 0 {
			end = from + i + 1
		}
		st.scan(buf, from, end)
		if st.done() {
			return st.lines, buf, nil
		}
		from = end
		keep := st.shiftPoint(buf, from)
		st.shift(buf, keep, from)
		copy(buf, buf[keep:n])
		n -= keep
		from -= keep
		if n == len(buf) {
			// One line (or the context kept before it) fills the buffer: grow it.
			grown := make([]byte, 2*len(buf))
			copy(grown, buf[:n])
			buf = grown
		}
	}
}

// errStopped reports a search abandoned because the caller no longer needs it.
var errStopped = errors.New("search stopped")

// searchUTF16 transcodes a file with a UTF-16 byte-order mark to UTF-8 and searches
// that, as ripgrep does. head is what was read so far.
func (s *lineSearch) searchUTF16(head []byte, r io.Reader, eof bool, stop func() bool) ([]hitLine, error) {
	data := append([]byte(nil), head...)
	if !eof {
		rest, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		data = append(data, rest...)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if data[0] == 0xFE {
		order = binary.BigEndian
	}
	body := data[2:]
	u := make([]uint16, len(body)/2)
	for i := range u {
		u[i] = order.Uint16(body[2*i:])
	}
	text := make([]byte, 0, len(body))
	for _, c := range utf16.Decode(u) {
		text = utf8.AppendRune(text, c)
	}
	if len(body)%2 != 0 {
		text = utf8.AppendRune(text, utf8.RuneError)
	}
	lines, _, err := s.search(bytes.NewReader(text), nil, stop)
	return lines, err
}

// readFull reads into p until it is full or the reader is exhausted (io.EOF).
func readFull(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := r.Read(p[n:])
		n += k
		if err != nil {
			return n, err
		}
		if k == 0 {
			// A reader that returns nothing without an error would spin us; treat it as
			// the end.
			return n, io.EOF
		}
	}
	return n, nil
}

// scanState carries a file's search across buffer refills.
type scanState struct {
	s       *lineSearch
	lines   []hitLine
	matches int
	// lastEmitted is the number of the last line reported and lastEnd the buffer offset
	// just past it; afterUntil is the last line owed as after-context.
	lastEmitted, lastEnd, afterUntil int
	capped                           bool
	// The line that starts at buffer offset curOff has number curLine.
	curOff, curLine int
}

// done reports whether nothing more is to be reported: the per-file limit is reached
// and its after-context complete.
func (st *scanState) done() bool {
	return st.capped && st.afterUntil <= st.lastEmitted
}

// lineAt returns the number of the line starting at off (at or after the cursor).
func (st *scanState) lineAt(buf []byte, off int) int {
	st.curLine += bytes.Count(buf[st.curOff:off], []byte{'\n'})
	st.curOff = off
	return st.curLine
}

// scan reports the matching lines in buf[from:end], which holds whole lines (the last
// one may lack its "\n" only at the end of the file), with their context.
func (st *scanState) scan(buf []byte, from, end int) {
	pos := from
	for !st.capped && pos < end {
		ls, le, col, ok := st.s.findLine(buf, pos, end)
		if !ok {
			break
		}
		num := st.lineAt(buf, ls)
		st.emitBetween(buf, ls, num)
		st.emit(num, buf[ls:le], col, min(le+1, end))
		st.matches++
		st.afterUntil = num + st.s.after
		if st.s.perFile > 0 && st.matches >= st.s.perFile {
			st.capped = true
		}
		pos = le + 1
	}
	// After-context owed in the rest of the region.
	for st.afterUntil > st.lastEmitted && st.lastEnd < end {
		le := bytes.IndexByte(buf[st.lastEnd:end], '\n')
		if le < 0 {
			le = end
		} else {
			le += st.lastEnd
		}
		st.emit(st.lastEmitted+1, buf[st.lastEnd:le], -1, min(le+1, end))
	}
}

// emitBetween reports the context lines between the last reported line and the match
// at line num starting at offset ls: after-context of the previous match, then
// before-context of this one.
func (st *scanState) emitBetween(buf []byte, ls, num int) {
	for st.afterUntil > st.lastEmitted && st.lastEmitted+1 < num {
		le := st.lastEnd + bytes.IndexByte(buf[st.lastEnd:ls], '\n')
		st.emit(st.lastEmitted+1, buf[st.lastEnd:le], -1, le+1)
	}
	firstBefore := max(st.lastEmitted+1, num-st.s.before, 1)
	if firstBefore >= num {
		return
	}
	// Walk back from the match to the first before-context line, then report forward.
	starts := make([]int, 0, num-firstBefore)
	start := ls
	for l := num - 1; l >= firstBefore; l-- {
		start = bytes.LastIndexByte(buf[:start-1], '\n') + 1
		starts = append(starts, start)
	}
	for i := len(starts) - 1; i >= 0; i-- {
		s := starts[i]
		le := s + bytes.IndexByte(buf[s:ls], '\n')
		st.emit(num-1-i, buf[s:le], -1, le+1)
	}
}

func (st *scanState) emit(num int, text []byte, col, next int) {
	st.lines = append(st.lines, hitLine{num: num, text: string(text), col: col})
	st.lastEmitted, st.lastEnd = num, next
}

// shiftPoint returns the offset from which the buffer must be kept when refilling:
// the before-context lines preceding from (the first unsearched byte).
func (st *scanState) shiftPoint(buf []byte, from int) int {
	keep := from
	for i := 0; i < st.s.before && keep > 0; i++ {
		keep = bytes.LastIndexByte(buf[:keep-1], '\n') + 1
	}
	return keep
}

// shift moves the state's offsets for a buffer whose first keep bytes are dropped.
func (st *scanState) shift(buf []byte, keep, from int) {
	st.lineAt(buf, from)
	st.curOff -= keep
	st.lastEnd -= keep
	if st.lastEnd < 0 {
		st.lastEnd = 0 // only read again when after-context is owed, which keeps it
	}
}

// findLine returns the first line in buf[pos:end] that matches: its start and end (the
// offset of its "\n", or end) and the offset in it of the leftmost match.
func (s *lineSearch) findLine(buf []byte, pos, end int) (ls, le, col int, ok bool) {
	p := s.pat
	if p.needles != nil {
		for pos < end {
			i := p.indexNeedle(buf[pos:end])
			if i < 0 {
				return 0, 0, 0, false
			}
			hit := pos + i
			ls = pos + bytes.LastIndexByte(buf[pos:hit], '\n') + 1
			le = lineEnd(buf, hit, end)
			if p.literal {
				return ls, le, hit - ls, true
			}
			if loc := p.re.FindIndex(buf[ls:le]); loc != nil {
				return ls, le, loc[0], true
			}
			pos = le + 1
		}
		return 0, 0, 0, false
	}
	loc := p.re.FindIndex(buf[pos:end])
	if loc == nil {
		return 0, 0, 0, false
	}
	hit := pos + loc[0]
	if hit == end && (hit == pos || buf[end-1] == '\n') {
		// An empty match after the last line break: the start of a line that is not
		// there (end of file) or not yet read.
		return 0, 0, 0, false
	}
	ls = pos + bytes.LastIndexByte(buf[pos:hit], '\n') + 1
	return ls, lineEnd(buf, hit, end), hit - ls, true
}

// lineEnd returns the offset of the first "\n" at or after off, or end.
func lineEnd(buf []byte, off, end int) int {
	if i := bytes.IndexByte(buf[off:end], '\n'); i >= 0 {
		return off + i
	}
	return end
}
