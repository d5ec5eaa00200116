package files

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

// numbered returns n lines "line 1\n" … "line n\n".
func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFileText(t *testing.T) {
	long := strings.Repeat("é", 2500)
	ws, root := testutil.Workspace(t, map[string]string{
		"small.txt": "alpha\nbeta\n",
		"nonl.txt":  "alpha\nbeta",
		"empty.txt": "",
		"big.txt":   numbered(1, 2500),
		"long.txt":  "short\n" + long + "\nend\n",
		"crlf.txt":  "one\r\ntwo\r\n",
		"bom.txt":   "\uFEFFwith bom\n",
		"pic.svg":   `<svg xmlns="http://www.w3.org/2000/svg"/>` + "\n",
		"fake.png":  "not really a png\n",
	})
	tool := NewReadFile(ws)
	cases := []struct {
		name   string
		args   string
		output string   // exact, when set
		has    []string // substrings, when output is not set
		hasNot []string
	}{
		{name: "whole", args: `{"file_path": "small.txt"}`, output: "alpha\nbeta\n"},
		{name: "absolute", args: fmt.Sprintf(`{"file_path": %q}`, filepath.Join(root, "small.txt")), output: "alpha\nbeta\n"},
		{name: "no final newline", args: `{"file_path": "nonl.txt"}`, output: "alpha\nbeta"},
		{name: "empty", args: `{"file_path": "empty.txt"}`, output: ""},
		{name: "crlf read as lf", args: `{"file_path": "crlf.txt"}`, output: "one\ntwo\n"},
		{name: "bom dropped", args: `{"file_path": "bom.txt"}`, output: "with bom\n"},
		{name: "svg is text", args: `{"file_path": "pic.svg"}`, output: `<svg xmlns="http://www.w3.org/2000/svg"/>` + "\n"},
		{name: "png name, text content", args: `{"file_path": "fake.png"}`, output: "not really a png\n"},
		{
			name: "default cap",
			args: `{"file_path": "big.txt"}`,
			output: "\nIMPORTANT: The file content has been truncated.\n" +
				"Status: Showing lines 1-2000 of 2500 total lines.\n" +
				"Action: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: 2001.\n" +
				"\n--- FILE CONTENT (truncated) ---\n" + numbered(1, 2000),
		},
		{
			name: "rest of file",
			args: `{"file_path": "big.txt", "start_line": 2001}`,
			output: "\nIMPORTANT: The file content has been truncated.\n" +
				"Status: Showing lines 2001-2500 of 2500 total lines.\n" +
				"Action: This is the end of the file. To read the lines before this section, use start_line: 1 and end_line: 2000 in a subsequent 'read_file' call.\n" +
				"\n--- FILE CONTENT (truncated) ---\n" + numbered(2001, 2500),
		},
		{
			name:   "range",
			args:   `{"file_path": "big.txt", "start_line": 10, "end_line": 12}`,
			has:    []string{"Showing lines 10-12 of 2500", "use start_line: 13", "--- FILE CONTENT (truncated) ---\nline 10\nline 11\nline 12\n"},
			hasNot: []string{"line 9\n", "line 13\n"},
		},
		{
			name:   "range capped at 2000 lines",
			args:   `{"file_path": "big.txt", "start_line": 100, "end_line": 2400}`,
			has:    []string{"Showing lines 100-2099 of 2500", "use start_line: 2100", "line 2099\n"},
			hasNot: []string{"line 2100\n"},
		},
		{name: "end beyond file", args: `{"file_path": "small.txt", "end_line": 99}`, output: "alpha\nbeta\n"},
		{name: "integral float", args: `{"file_path": "small.txt", "start_line": 2.0}`, has: []string{"Showing lines 2-2 of 2", "\nbeta\n"}},
		{name: "last line without newline", args: `{"file_path": "nonl.txt", "start_line": 2}`, has: []string{"--- FILE CONTENT (truncated) ---\nbeta"}},
		{
			name:   "long line cut",
			args:   `{"file_path": "long.txt"}`,
			has:    []string{"Showing all 3 lines, but some long lines were shortened", "short\n" + strings.Repeat("é", 2000) + truncatedMarker + "\nend\n"},
			hasNot: []string{strings.Repeat("é", 2001)},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mustCall(t, tool, c.args)
			if c.output != "" || (c.has == nil && c.hasNot == nil) {
				if res.Output != c.output {
					t.Fatalf("output\n%q\nwant\n%q", res.Output, c.output)
				}
			}
			for _, h := range c.has {
				if !strings.Contains(res.Output, h) {
					t.Errorf("output lacks %q:\n%.500s", h, res.Output)
				}
			}
			for _, h := range c.hasNot {
				if strings.Contains(res.Output, h) {
					t.Errorf("output has %q", h)
				}
			}
			if len(res.Parts) != 0 {
				t.Errorf("text file returned %d parts", len(res.Parts))
			}
			if res.Summary == "" {
				t.Error("no summary")
			}
		})
	}
}

func TestReadFileUTF16(t *testing.T) {
	ws, root := testutil.Workspace(t, nil)
	for _, order := range []string{"le", "be"} {
		var b bytes.Buffer
		bom := []byte{0xFF, 0xFE}
		if order == "be" {
			bom = []byte{0xFE, 0xFF}
		}
		b.Write(bom)
		for _, u := range utf16.Encode([]rune("héllo\r\nwörld\r\n")) {
			if order == "le" {
				b.Write([]byte{byte(u), byte(u >> 8)})
			} else {
				b.Write([]byte{byte(u >> 8), byte(u)})
			}
		}
		name := "utf16" + order + ".txt"
		writeDisk(t, filepath.Join(root, name), b.String())
		res := mustCall(t, NewReadFile(ws), fmt.Sprintf(`{"file_path": %q}`, name))
		if res.Output != "héllo\nwörld\n" {
			t.Errorf("%s: %q", name, res.Output)
		}
	}
}

func TestReadFileMedia(t *testing.T) {
	wav := append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 32)...)
	pdf := []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n")
	ws, _ := testutil.Workspace(t, map[string]string{
		"img/logo.png":  string(tinyPNG),
		"img/misnamed":  string(tinyPNG),
		"img/wrong.jpg": string(tinyPNG),
		"doc.pdf":       string(pdf),
		"sound.wav":     string(wav),
	})
	cases := []struct {
		path, mime string
		data       []byte
	}{
		{"img/logo.png", "image/png", tinyPNG},
		{"img/misnamed", "image/png", tinyPNG},
		{"img/wrong.jpg", "image/png", tinyPNG},
		{"doc.pdf", "application/pdf", pdf},
		{"sound.wav", "audio/wav", wav},
	}
	for _, c := range cases {
		res := mustCall(t, NewReadFile(ws), fmt.Sprintf(`{"file_path": %q}`, c.path))
		if len(res.Parts) != 1 || res.Parts[0].MIMEType != c.mime || !bytes.Equal(res.Parts[0].Data, c.data) {
			t.Errorf("%s: parts %+v, want one %s part with the file's bytes", c.path, res.Parts, c.mime)
			continue
		}
		if !strings.Contains(res.Output, c.path) || !strings.Contains(res.Output, c.mime) {
			t.Errorf("%s: output %q does not name the file and type", c.path, res.Output)
		}
	}
}

func TestReadFileRefusals(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{
		"bin.dat":    "\x00\x01\x02binary\x00",
		"latin1.txt": "caf\xe9\nna\xefve\n",
		"small.txt":  "a\nb\nc\n",
		"badbom.txt": "\xFF\xFEx",
	})
	big := filepath.Join(root, "huge.log")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(21 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(root, "huge.png"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(root, "huge.png"), 21<<20); err != nil {
		t.Fatal(err)
	}
	dirs := []string{root}
	tool := NewReadFile(ws)
	mustFail(t, tool, `{"file_path": "bin.dat"}`, tools.ErrReadContentFailure, dirs, "bin.dat", "binary")
	mustFail(t, tool, `{"file_path": "latin1.txt"}`, tools.ErrReadContentFailure, dirs, "latin1.txt", "not valid UTF-8", "0xE9 on line 1", "Latin-1")
	mustFail(t, tool, `{"file_path": "badbom.txt"}`, tools.ErrReadContentFailure, dirs, "UTF-16")
	mustFail(t, tool, `{"file_path": "huge.log"}`, tools.ErrFileTooLarge, dirs, "huge.log", "21.0 MB", "20.0 MB")
	mustFail(t, tool, `{"file_path": "huge.png"}`, tools.ErrFileTooLarge, dirs, "huge.png")
	mustFail(t, tool, `{"file_path": "small.txt", "start_line": 4}`, tools.ErrInvalidParams, dirs, "has 3 lines")
	mustFail(t, tool, `{"file_path": "small.txt", "start_line": 5, "end_line": 9}`, tools.ErrInvalidParams, dirs, "start_line 5", "has 3 lines")
}

// TestReadFileOverlay checks that a document open in the editor is read as the editor
// holds it, saved or not.
func TestReadFileOverlay(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"a.go": "package disk\n"})
	ws.Open(filepath.Join(root, "a.go"), 4, "package editor\r\n\r\nfunc F() {}\r\n")
	ws.Open(filepath.Join(root, "unsaved.go"), 1, "package unsaved\n")
	if res := mustCall(t, NewReadFile(ws), `{"file_path": "a.go"}`); res.Output != "package editor\n\nfunc F() {}\n" {
		t.Errorf("open document: %q", res.Output)
	}
	if res := mustCall(t, NewReadFile(ws), `{"file_path": "unsaved.go"}`); res.Output != "package unsaved\n" {
		t.Errorf("unsaved document: %q", res.Output)
	}
	ws.Close(filepath.Join(root, "a.go"))
	if res := mustCall(t, NewReadFile(ws), `{"file_path": "a.go"}`); res.Output != "package disk\n" {
		t.Errorf("closed document: %q", res.Output)
	}
}

func TestReadFileDescribe(t *testing.T) {
	ws, root := testutil.Workspace(t, map[string]string{"a.txt": "x\n"})
	inv, err := testutil.Build(t, NewReadFile(ws), `{"file_path": "a.txt", "start_line": 3, "end_line": 9}`)
	if err != nil {
		t.Fatal(err)
	}
	if d := inv.Describe(); d != "Read a.txt (lines 3-9)" {
		t.Errorf("Describe = %q", d)
	}
	if l := inv.Locations(); len(l) != 1 || l[0].Path != filepath.Join(root, "a.txt") || l[0].Line != 3 {
		t.Errorf("Locations = %+v", l)
	}
	if d, err := inv.Confirmation(t.Context()); d != nil || err != nil {
		t.Errorf("Confirmation = %v, %v; a read needs none", d, err)
	}
}
