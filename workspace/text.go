package workspace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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

// DefaultFormat is the format of a new file: UTF-8, no BOM, LF.
var DefaultFormat = Format{Encoding: UTF8}

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
// A file whose lines end in a mix of CRLF and LF is normalised to the ending most of its
// lines use (LF on a tie), as editors do when they load such a file: writing it back then
// gives every line that ending.
func Decode(data []byte) (string, Format, error) {
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
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	f.FinalNewline = strings.HasSuffix(text, "\n")
	return text, f, nil
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
		has := strings.HasSuffix(text, "\n")
		switch {
		case f.FinalNewline && !has && text != "":
			text += "\n"
		case !f.FinalNewline && has:
			text = strings.TrimSuffix(text, "\n")
		}
	}
	if f.CRLF {
		// A CRLF already in the text must not become CR CR LF.
		text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n")
	}
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
