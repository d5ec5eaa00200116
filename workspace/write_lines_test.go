package workspace_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
)

// TestDiskWriterKeepsLineBytes edits files through the disk writer the way replace does
// (a change to the text as read, with LF line endings) and checks the bytes written: every
// line the change leaves alone keeps its stored bytes, line ending included, in files
// that mix CRLF and LF; changed lines take the ending of the lines they replace when
// those agree, and inserted ones the ending most of the file's lines use.
func TestDiskWriterKeepsLineBytes(t *testing.T) {
	le := []byte{0xFF, 0xFE}
	tests := []struct {
		name     string
		stored   string // the file before, as stored
		from, to string // the change, in the LF text
		want     string // the file after, as stored
	}{
		{
			name:   "mixed, CRLF line in the middle",
			stored: "a\r\nb\nc\r\nd\ne\r\n",
			from:   "c\n", to: "C\n",
			want: "a\r\nb\nC\r\nd\ne\r\n",
		},
		{
			name:   "mixed, LF line in a mostly CRLF file",
			stored: "a\r\nb\nc\r\nd\ne\r\n",
			from:   "d\n", to: "D\n",
			want: "a\r\nb\nc\r\nD\ne\r\n",
		},
		{
			name:   "mixed, one line becomes three",
			stored: "a\r\nb\nc\r\nd\ne\r\n",
			from:   "b\n", to: "b1\nb2\nb3\n",
			want: "a\r\nb1\nb2\nb3\nc\r\nd\ne\r\n",
		},
		{
			name:   "mixed, run of lines with both endings replaced: the usual ending",
			stored: "a\r\nb\nc\r\nd\ne\r\n",
			from:   "b\nc\n", to: "x\ny\n",
			want: "a\r\nx\r\ny\r\nd\ne\r\n",
		},
		{
			name:   "mixed, line inserted: the usual ending",
			stored: "a\r\nb\nc\r\nd\ne\r\n",
			from:   "b\nc\n", to: "b\nnew\nc\n",
			want: "a\r\nb\nnew\r\nc\r\nd\ne\r\n",
		},
		{
			name:   "mixed, mostly LF, line inserted",
			stored: "a\nb\r\nc\nd\n",
			from:   "b\nc\n", to: "b\nnew\nc\n",
			want: "a\nb\r\nnew\nc\nd\n",
		},
		{
			name:   "mixed, line deleted",
			stored: "a\r\nb\nc\r\nd\ne\r\n",
			from:   "c\n", to: "",
			want: "a\r\nb\nd\ne\r\n",
		},
		{
			name:   "mixed, change inside a line",
			stored: "func f() {\r\n\treturn 1\n}\r\n",
			from:   "return 1", to: "return 2",
			want: "func f() {\r\n\treturn 2\n}\r\n",
		},
		{
			name:   "lone CR inside a line kept",
			stored: "a\rb\r\nc\n",
			from:   "c\n", to: "C\n",
			want: "a\rb\r\nC\n",
		},
		{
			name:   "line with a lone CR changed",
			stored: "a\rb\r\nc\n",
			from:   "a\rb", to: "a\rB",
			want: "a\rB\r\nc\n",
		},
		{
			name:   "lone CR line endings",
			stored: "one\rtwo\rthree\r",
			from:   "two", to: "2",
			want: "one\r2\rthree\r",
		},
		{
			name:   "CR CR LF kept where untouched",
			stored: "x\r\r\ny\r\n",
			from:   "y\n", to: "Y\n",
			want: "x\r\r\nY\r\n",
		},
		{
			name:   "no final newline, last line changed",
			stored: "a\r\nb\nc",
			from:   "c", to: "C",
			want: "a\r\nb\nC",
		},
		{
			name:   "no final newline, line added at the end",
			stored: "a\r\nb\r\nc",
			from:   "c", to: "c\nd",
			want: "a\r\nb\r\nc\r\nd",
		},
		{
			name:   "final newline kept when the new text drops it",
			stored: "a\r\nb\n",
			from:   "b\n", to: "B",
			want: "a\r\nB\n",
		},
		{
			name:   "all CRLF as before",
			stored: "a\r\nb\r\nc\r\n",
			from:   "b\n", to: "B\nB2\n",
			want: "a\r\nB\r\nB2\r\nc\r\n",
		},
		{
			name:   "all LF as before",
			stored: "a\nb\nc\n",
			from:   "b\n", to: "B\nB2\n",
			want: "a\nB\nB2\nc\n",
		},
		{
			name:   "UTF-8 BOM, mixed",
			stored: "\uFEFFa\r\nb\nc\r\n",
			from:   "b", to: "B",
			want: "\uFEFFa\r\nB\nc\r\n",
		},
		{
			name:   "UTF-16LE, mixed",
			stored: string(utf16Bytes("a\r\nb\nc\r\n", binary.LittleEndian, le)),
			from:   "c", to: "日本",
			want: string(utf16Bytes("a\r\nb\n日本\r\n", binary.LittleEndian, le)),
		},
		{
			name:   "UTF-16BE, mixed",
			stored: string(utf16Bytes("a\nb\r\nc\n", binary.BigEndian, []byte{0xFE, 0xFF})),
			from:   "a", to: "A",
			want: string(utf16Bytes("A\nb\r\nc\n", binary.BigEndian, []byte{0xFE, 0xFF})),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, root := testutil.Workspace(t, nil)
			path := filepath.Join(root, "f")
			if err := os.WriteFile(path, []byte(tt.stored), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := ws.ReadText(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(f.Text, tt.from) {
				t.Fatalf("the text read, %q, lacks %q", f.Text, tt.from)
			}
			if err := edit(t, ws, path, strings.Replace(f.Text, tt.from, tt.to, 1)); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.want {
				t.Errorf("disk holds %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDiskWriterRewriteOfMixedFile writes a whole new text over a file that mixes CRLF
// and LF, as write_file does, with changes far apart: the lines between them keep their
// bytes.
func TestDiskWriterRewriteOfMixedFile(t *testing.T) {
	var stored, want strings.Builder
	for i := range 200 {
		ending := "\n"
		if i%3 == 0 {
			ending = "\r\n"
		}
		line := "line " + strings.Repeat("x", i%7)
		stored.WriteString(line + ending)
		switch i {
		case 10:
			want.WriteString("first change" + ending)
		case 150:
			want.WriteString("second change" + ending + "and one more" + ending)
		default:
			want.WriteString(line + ending)
		}
	}
	ws, root := testutil.Workspace(t, map[string]string{"f": stored.String()})
	path := filepath.Join(root, "f")
	f, err := ws.ReadText(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(f.Text, "\n")
	lines[10] = "first change\n"
	lines[150] = "second change\nand one more\n"
	if err := edit(t, ws, path, strings.Join(lines, "")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != want.String() {
		gotLines, wantLines := strings.SplitAfter(string(got), "\n"), strings.SplitAfter(want.String(), "\n")
		for i := range min(len(gotLines), len(wantLines)) {
			if gotLines[i] != wantLines[i] {
				t.Fatalf("line %d is %q, want %q", i+1, gotLines[i], wantLines[i])
			}
		}
		t.Fatalf("disk holds %d lines, want %d", len(gotLines), len(wantLines))
	}
}
