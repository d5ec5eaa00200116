package files

import "testing"

func TestSniffMedia(t *testing.T) {
	cases := []struct {
		name string
		data string
		want string
	}{
		{"png", string(tinyPNG), "image/png"},
		{"jpeg", "\xFF\xD8\xFF\xE0\x00\x10JFIF", "image/jpeg"},
		{"gif", "GIF89a\x01\x00", "image/gif"},
		{"webp", "RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"wav", "RIFF\x10\x00\x00\x00WAVEfmt ", "audio/wav"},
		{"bmp", "BM" + string(make([]byte, 30)), "image/bmp"},
		{"pdf", "%PDF-1.7\n", "application/pdf"},
		{"aiff", "FORM\x00\x00\x00\x10AIFFCOMM", "audio/aiff"},
		{"ogg", "OggS\x00\x02", "audio/ogg"},
		{"flac", "fLaC\x00\x00", "audio/flac"},
		{"mp3 with id3", "ID3\x04\x00", "audio/mpeg"},
		{"mp3 frame", "\xFF\xFB\x90\x64\x00", "audio/mpeg"},
		{"aac adts", "\xFF\xF1\x50\x80\x02\x1F\xFC", "audio/aac"},
		{"utf-16 text is not audio", "\xFF\xFE\x90\x00\x41\x00", ""},
		{"short BM text", "BM", ""},
		{"text", "hello", ""},
		{"empty", "", ""},
	}
	for _, c := range cases {
		if got := sniffMedia([]byte(c.data)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestLines(t *testing.T) {
	for _, c := range []struct {
		text        string
		lines       int
		first, last int
		want        string
	}{
		{"", 0, 0, 0, ""},
		{"\n", 1, 1, 1, "\n"},
		{"a", 1, 1, 1, "a"},
		{"a\nb\nc\n", 3, 2, 3, "b\nc\n"},
		{"a\nb\nc", 3, 3, 3, "c"},
		{"a\nb\nc", 3, 1, 2, "a\nb\n"},
	} {
		if n := countLines(c.text); n != c.lines {
			t.Errorf("countLines(%q) = %d, want %d", c.text, n, c.lines)
		}
		if c.first == 0 {
			continue
		}
		if from, to := lineRange(c.text, c.first, c.last); c.text[from:to] != c.want {
			t.Errorf("lineRange(%q, %d, %d) = %q, want %q", c.text, c.first, c.last, c.text[from:to], c.want)
		}
	}
}
