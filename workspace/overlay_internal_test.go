package workspace

import (
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// decodeEditorTextSlow is what decodeEditorText does for every text it does not take
// as it is: the reference its shortcut must agree with.
func decodeEditorTextSlow(text string) (string, Format) {
	t, f, err := Decode([]byte(text))
	if err != nil {
		return text, Format{Encoding: UTF8}
	}
	return t, f
}

var editorTexts = []string{
	"",
	"a",
	"a\n",
	"package a\n\nfunc f() {}\n",
	"no final newline",
	"a\r\nb\r\n",
	"a\r\nb\nc\n",
	"lone\rCR\n",
	"\uFEFFwith a BOM\n",
	"\uFEFF",
	"é日本😀\n",
	"\xff\xfeinvalid UTF-8\n",
	"\xff\xfea\x00b\x00",
	"a NUL\x00\n",
	"\x01\x02\x03\x04\x05\x06\x07\x0e\x0f\x10",
	"\t\f\b\x1b[31mred\x1b[0m\n",
	strings.Repeat("x", 8192) + "\x00 after the sniffed head\n",
	strings.Repeat("x", 8191) + "\x00 at the end of the sniffed head\n",
	strings.Repeat("line\n", 5000) + "\xc3",
}

// TestDecodeEditorText checks that the shortcut for text already in LF form agrees with
// Decode, and that it takes such text as it is, without a copy.
func TestDecodeEditorText(t *testing.T) {
	for _, text := range editorTexts {
		got, gotFormat := decodeEditorText(text)
		want, wantFormat := decodeEditorTextSlow(text)
		if got != want || gotFormat != wantFormat {
			t.Errorf("decodeEditorText(%.40q) = %.40q, %+v; want %.40q, %+v", text, got, gotFormat, want, wantFormat)
		}
	}
	lf := strings.Repeat("func f() {}\n", 1000)
	if got, _ := decodeEditorText(lf); unsafe.StringData(got) != unsafe.StringData(lf) {
		t.Errorf("decodeEditorText copied a text that is already in LF form")
	}
}

// TestOverlaySharesText checks that the overlay keeps the editor's text, when it needs
// no decoding, without a copy of its own: the language server holds the same text.
func TestOverlaySharesText(t *testing.T) {
	w, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(w.Roots()[0], "a.go")
	for i, text := range []string{strings.Repeat("package a\n", 100), strings.Repeat("package b\n", 100)} {
		if i == 0 {
			w.Open(path, 1, text)
		} else {
			w.Update(path, 2, text)
		}
		d, ok := w.Document(path)
		if !ok || d.Text != text {
			t.Fatalf("step %d: the overlay has %v %.20q, want the text", i, ok, d.Text)
		}
		if unsafe.StringData(d.Text) != unsafe.StringData(text) {
			t.Errorf("step %d: the overlay copied a text that needs no decoding", i)
		}
	}
	w.Close(path)
	if _, ok := w.Document(path); ok {
		t.Error("the document is still in the overlay after Close")
	}
}

// FuzzDecodeEditorText checks the shortcut against Decode on any text.
func FuzzDecodeEditorText(f *testing.F) {
	for _, text := range editorTexts {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, gotFormat := decodeEditorText(text)
		want, wantFormat := decodeEditorTextSlow(text)
		if got != want || gotFormat != wantFormat {
			t.Errorf("decodeEditorText(%q) = %q, %+v; want %q, %+v", text, got, gotFormat, want, wantFormat)
		}
	})
}
