package workspace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// Encoding is the character encoding of a text file.
type Encoding string

// The encodings agentls reads and writes back unchanged.
const (
	UTF8    Encoding = "utf-8"
	UTF16LE Encoding = "utf-16le"
	UTF16BE Encoding = "utf-16be"
)

// Format is how a text file is stored, so that a tool can work on plain text and the
// file be written back the way it was: encoding, byte-order mark, CRLF line endings and
// whether it ends with a newline.
type Format struct {
	Encoding     Encoding
	BOM          bool
	CRLF         bool
	FinalNewline bool
}

// DefaultFormat returns the format of a new file: UTF-8, no BOM, LF.
func DefaultFormat() Format { return Format{Encoding: UTF8} }

// ErrBinary reports content that is not text.
var ErrBinary = errors.New("binary content")

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// IsBinary reports whether data looks like binary rather than text: a NUL byte in its
// first 8 KiB (text in UTF-16 with a BOM is not binary), or mostly control bytes.
func IsBinary(data []byte) bool {
	if bytes.HasPrefix(data, bomUTF16LE) || bytes.HasPrefix(data, bomUTF16BE) {
		return false
	}
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if len(head) == 0 {
		return false
	}
	ctrl := 0
	for _, b := range head {
		if b < 0x20 && b != '\n' && b != '\r' && b != '\t' && b != '\f' && b != '\b' && b != 0x1b {
			ctrl++
		}
	}
	return ctrl*10 > len(head)
}

// Decode turns stored bytes into text with LF line endings and reports the format to
// write it back in. Content that is binary, or not valid UTF-8 or UTF-16, is ErrBinary.
//
// A file may end its lines in a mix of CRLF and LF; the text has LF throughout, and the
// format's CRLF reports the ending most of its lines use (LF on a tie). Encode gives every
// line that ending, as an editor that loaded the file would when saving it; the disk
// writer instead keeps the stored ending of every line a change leaves alone (see
// DiskWriter).
func Decode(data []byte) (string, Format, error) {
	stored, f, err := decodeStored(data)
	if err != nil {
		return "", f, err
	}
	return lfText(stored), f, nil
}

// decodeStored is Decode without the conversion of line endings: it returns the text with
// the line endings the file stores, and the format Decode reports.
func decodeStored(data []byte) (string, Format, error) {
	var f Format
	var text string
	switch {
	case bytes.HasPrefix(data, bomUTF16LE), bytes.HasPrefix(data, bomUTF16BE):
		order := binary.ByteOrder(binary.LittleEndian)
		f.Encoding = UTF16LE
		if data[0] == 0xFE {
			order, f.Encoding = binary.BigEndian, UTF16BE
		}
		f.BOM = true
		body := data[2:]
		if len(body)%2 != 0 {
			return "", f, ErrBinary
		}
		u := make([]uint16, len(body)/2)
		for i := range u {
			u[i] = order.Uint16(body[2*i:])
		}
		if !validUTF16(u) {
			return "", f, ErrBinary
		}
		text = string(utf16.Decode(u))
		if strings.IndexByte(text, 0) >= 0 {
			// Also what a UTF-32LE BOM (FF FE 00 00) looks like.
			return "", f, ErrBinary
		}
	default:
		f.Encoding = UTF8
		if bytes.HasPrefix(data, bomUTF8) {
			f.BOM = true
			data = data[3:]
		}
		if IsBinary(data) || !utf8.Valid(data) {
			return "", f, ErrBinary
		}
		text = string(data)
	}
	if crlf := strings.Count(text, "\r\n"); crlf > 0 {
		f.CRLF = 2*crlf > strings.Count(text, "\n")
	}
	f.FinalNewline = strings.HasSuffix(text, "\n")
	return text, f, nil
}

// lfText returns stored text with its CRLF line endings turned into LF.
func lfText(stored string) string {
	if !strings.Contains(stored, "\r\n") {
		return stored
	}
	return strings.ReplaceAll(stored, "\r\n", "\n")
}

// validUTF16 reports whether every surrogate in u is half of a pair. utf16.Decode would
// turn a lone one into U+FFFD, and writing the text back would lose it.
func validUTF16(u []uint16) bool {
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case c >= 0xD800 && c < 0xDC00:
			if i+1 == len(u) || u[i+1] < 0xDC00 || u[i+1] > 0xDFFF {
				return false
			}
			i++
		case c >= 0xDC00 && c <= 0xDFFF:
			return false
		}
	}
	return true
}

// Encode turns text with LF line endings into bytes in format f. The final newline is
// made to match f.FinalNewline when keepFinalNewline is set (writing back an existing
// file), and left as the text has it otherwise.
func (f Format) Encode(text string, keepFinalNewline bool) []byte {
	if keepFinalNewline {
		text = f.WithFinalNewline(text)
	}
	return f.encodeStored(f.lineEndings(text))
}

// WithFinalNewline returns text, with LF line endings, ending in a newline if and only if
// f.FinalNewline says so; empty text stays empty. It is the final-newline state the disk
// writer gives a file stored in format f, so a tool that shows a diff first applies it
// for the diff a person approves to be what lands.
func (f Format) WithFinalNewline(text string) string {
	has := strings.HasSuffix(text, "\n")
	switch {
	case f.FinalNewline && !has && text != "":
		return text + "\n"
	case !f.FinalNewline && has:
		return strings.TrimSuffix(text, "\n")
	}
	return text
}

// lineEndings returns text, with LF line endings, with the line ending f gives new lines.
func (f Format) lineEndings(text string) string {
	return withEnding(text, f.CRLF)
}

// withEnding returns text, with LF line endings, with CRLF line endings if crlf is set.
func withEnding(text string, crlf bool) string {
	if !crlf {
		return text
	}
	// A CRLF already in the text must not become CR CR LF.
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n")
}

// encodeStored turns text, whose line endings are already those to store, into bytes in
// f's encoding, with f's byte-order mark.
func (f Format) encodeStored(text string) []byte {
	switch f.Encoding {
	case UTF16LE, UTF16BE:
		u := utf16.Encode([]rune(text))
		out := make([]byte, 0, 2+2*len(u))
		var order binary.AppendByteOrder = binary.LittleEndian
		bom := bomUTF16LE
		if f.Encoding == UTF16BE {
			order, bom = binary.BigEndian, bomUTF16BE
		}
		if f.BOM {
			out = append(out, bom...)
		}
		for _, c := range u {
			out = order.AppendUint16(out, c)
		}
		return out
	default:
		if f.BOM {
			return append(append([]byte(nil), bomUTF8...), text...)
		}
		return []byte(text)
	}
}

// encodeOver turns newText (LF line endings, final newline already as it is to be
// stored) into bytes in format f, written over a file that held stored: oldText with
// its line endings as stored. A line that newText keeps from oldText keeps its stored
// bytes, line ending included, so that an edit of a file that mixes CRLF and LF changes
// only the lines it changes. Each run of changed lines takes the ending of the lines it
// replaces when they all end alike, and f's ending (that of most of the file's lines)
// otherwise, as do lines inserted between unchanged ones.
//
// The lines kept are those of a line diff of the two texts (see UnifiedDiff): below 100
// changed lines it is a shortest diff, so no unchanged line is taken for a changed one;
// past that, some unchanged lines inside the changed region may be written with the
// run's ending.
func (f Format) encodeOver(stored, oldText, newText string) []byte {
	if stored == oldText {
		// No CRLF at all: the lines are the same bytes in both forms.
		return f.encodeStored(f.lineEndings(newText))
	}
	pre, oldEnd, newEnd := commonLines(oldText, newText)
	a := splitLines(oldText[pre:oldEnd])
	b := splitLines(newText[pre:newEnd])
	diffs := lcs.DiffLines(a, b)

	// Line k of oldText is line k of stored, which differs from it at most by a CR
	// before the LF. s is the offset in stored of line i of a.
	s := skipLines(stored, 0, strings.Count(oldText[:pre], "\n"))
	var out strings.Builder
	out.Grow(len(stored) + len(newText) - len(oldText) + 64)
	out.WriteString(stored[:s])
	i := 0
	for _, d := range diffs {
		next := skipLines(stored, s, d.Start-i)
		out.WriteString(stored[s:next])
		s = next
		// The lines replaced decide the ending of those that replace them.
		crlf, lf := 0, 0
		for range d.End - d.Start {
			next = skipLines(stored, s, 1)
			switch line := stored[s:next]; {
			case strings.HasSuffix(line, "\r\n"):
				crlf++
			case strings.HasSuffix(line, "\n"):
				lf++
			}
			s = next
		}
		useCRLF := f.CRLF
		switch {
		case crlf > 0 && lf == 0:
			useCRLF = true
		case lf > 0 && crlf == 0:
			useCRLF = false
		}
		for _, line := range b[d.ReplStart:d.ReplEnd] {
			out.WriteString(withEnding(line, useCRLF))
		}
		i = d.End
	}
	out.WriteString(stored[s:])
	return f.encodeStored(out.String())
}

// skipLines returns the offset in s of the start of the line n lines after the one that
// starts at offset i, or len(s) if s has fewer lines.
func skipLines(s string, i, n int) int {
	for range n {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return len(s)
		}
		i += j + 1
	}
	return i
}
