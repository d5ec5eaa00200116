package workspace_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/agentls/agentls/workspace"
)

func utf16Bytes(s string, order binary.AppendByteOrder, bom []byte) []byte {
	out := append([]byte(nil), bom...)
	for _, u := range utf16.Encode([]rune(s)) {
		out = order.AppendUint16(out, u)
	}
	return out
}

func TestDecodeRoundTrip(t *testing.T) {
	le, be := []byte{0xFF, 0xFE}, []byte{0xFE, 0xFF}
	tests := []struct {
		name   string
		data   []byte
		text   string
		format workspace.Format
	}{
		{"empty", nil, "", workspace.Format{Encoding: workspace.UTF8}},
		{"LF", []byte("a\nb\n"), "a\nb\n", workspace.Format{Encoding: workspace.UTF8, FinalNewline: true}},
		{"no final newline", []byte("a\nb"), "a\nb", workspace.Format{Encoding: workspace.UTF8}},
		{"multi-byte", []byte("é 日本 😀\n"), "é 日本 😀\n", workspace.Format{Encoding: workspace.UTF8, FinalNewline: true}},
		{"UTF-8 BOM", []byte("\xEF\xBB\xBFhé\n"), "hé\n", workspace.Format{Encoding: workspace.UTF8, BOM: true, FinalNewline: true}},
		{"BOM only", []byte("\xEF\xBB\xBF"), "", workspace.Format{Encoding: workspace.UTF8, BOM: true}},
		{"CRLF", []byte("a\r\nb\r\n"), "a\nb\n", workspace.Format{Encoding: workspace.UTF8, CRLF: true, FinalNewline: true}},
		{"CRLF, no final newline", []byte("a\r\nb"), "a\nb", workspace.Format{Encoding: workspace.UTF8, CRLF: true}},
		{"lone CR kept", []byte("a\rb\n"), "a\rb\n", workspace.Format{Encoding: workspace.UTF8, FinalNewline: true}},
		{"UTF-16LE", utf16Bytes("hé 😀\r\nx\r\n", binary.LittleEndian, le), "hé 😀\nx\n",
			workspace.Format{Encoding: workspace.UTF16LE, BOM: true, CRLF: true, FinalNewline: true}},
		{"UTF-16BE", utf16Bytes("日本\n", binary.BigEndian, be), "日本\n",
			workspace.Format{Encoding: workspace.UTF16BE, BOM: true, FinalNewline: true}},
		{"UTF-16LE empty", le, "", workspace.Format{Encoding: workspace.UTF16LE, BOM: true}},
		{"tabs and escapes are text", []byte("\ta\x1b[0m\f\n"), "\ta\x1b[0m\f\n", workspace.Format{Encoding: workspace.UTF8, FinalNewline: true}},
	}
	for _, tt := range tests {
		text, f, err := workspace.Decode(tt.data)
		if err != nil {
			t.Errorf("%s: Decode: %v", tt.name, err)
			continue
		}
		if text != tt.text || f != tt.format {
			t.Errorf("%s: Decode = %q, %+v; want %q, %+v", tt.name, text, f, tt.text, tt.format)
		}
		if got := f.Encode(text, true); !bytes.Equal(got, tt.data) && !(len(got) == 0 && len(tt.data) == 0) {
			t.Errorf("%s: Encode(Decode(data)) = %q, want %q", tt.name, got, tt.data)
		}
	}
}

func TestDecodeMixedLineEndings(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantCRLF bool
		written  string // Encode of the decoded text
	}{
		{"mostly CRLF", "a\r\nb\r\nc\n", true, "a\r\nb\r\nc\r\n"},
		{"mostly LF", "a\nb\nc\r\n", false, "a\nb\nc\n"},
		{"a tie is LF", "a\r\nb\n", false, "a\nb\n"},
		{"first line LF, rest CRLF", "a\nb\r\nc\r\n", true, "a\r\nb\r\nc\r\n"},
	}
	for _, tt := range tests {
		text, f, err := workspace.Decode([]byte(tt.data))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, "\r") {
			t.Errorf("%s: decoded text %q keeps a CR", tt.name, text)
		}
		if f.CRLF != tt.wantCRLF {
			t.Errorf("%s: CRLF = %v, want %v", tt.name, f.CRLF, tt.wantCRLF)
		}
		if got := string(f.Encode(text, true)); got != tt.written {
			t.Errorf("%s: written back as %q, want %q", tt.name, got, tt.written)
		}
	}
}

func TestDecodeBinary(t *testing.T) {
	le := []byte{0xFF, 0xFE}
	tests := []struct {
		name string
		data []byte
	}{
		{"NUL byte", []byte("abc\x00def")},
		{"NUL after a UTF-8 BOM", []byte("\xEF\xBB\xBFa\x00")},
		{"mostly control bytes", []byte("\x01\x02\x03\x04abc")},
		{"invalid UTF-8", []byte("caf\xE9\n")},
		{"truncated UTF-8", []byte("日本"[:4])},
		{"PNG header", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")},
		{"UTF-16 of odd length", append(append([]byte(nil), le...), 'a', 0, 'b')},
		{"UTF-16 lone high surrogate", append(append([]byte(nil), le...), 0x3D, 0xD8, 'a', 0)},
		{"UTF-16 lone low surrogate", append(append([]byte(nil), le...), 0x00, 0xDC)},
		{"UTF-32LE BOM", []byte{0xFF, 0xFE, 0, 0, 'a', 0, 0, 0}},
	}
	for _, tt := range tests {
		if _, _, err := workspace.Decode(tt.data); !errors.Is(err, workspace.ErrBinary) {
			t.Errorf("%s: Decode error = %v, want ErrBinary", tt.name, err)
		}
	}
	if !workspace.IsBinary([]byte("a\x00")) || workspace.IsBinary([]byte("plain text\n")) || workspace.IsBinary(nil) {
		t.Error("IsBinary misjudges NUL, plain text or empty input")
	}
	if workspace.IsBinary(utf16Bytes("text", binary.LittleEndian, le)) {
		t.Error("IsBinary calls UTF-16 with a BOM binary")
	}
}

func TestEncodeFinalNewline(t *testing.T) {
	with := workspace.Format{Encoding: workspace.UTF8, FinalNewline: true}
	without := workspace.Format{Encoding: workspace.UTF8}
	crlf := workspace.Format{Encoding: workspace.UTF8, CRLF: true, FinalNewline: true}
	tests := []struct {
		name   string
		format workspace.Format
		text   string
		keep   bool
		want   string
	}{
		{"kept", with, "a\n", true, "a\n"},
		{"added", with, "a", true, "a\n"},
		{"removed", without, "a\n", true, "a"},
		{"only one removed", without, "a\n\n", true, "a\n"},
		{"kept absent", without, "a", true, "a"},
		{"empty text stays empty", with, "", true, ""},
		{"not kept: as the text has it", without, "a\n", false, "a\n"},
		{"not kept: none added", with, "a", false, "a"},
		{"CRLF added", crlf, "a\nb", true, "a\r\nb\r\n"},
		{"CRLF in the text not doubled", crlf, "a\r\nb\n", true, "a\r\nb\r\n"},
	}
	for _, tt := range tests {
		if got := string(tt.format.Encode(tt.text, tt.keep)); got != tt.want {
			t.Errorf("%s: Encode(%q, %v) = %q, want %q", tt.name, tt.text, tt.keep, got, tt.want)
		}
	}
}
