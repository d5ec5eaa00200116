package acp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTail(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abcdef", 3, "def"},
		{"aé", 1, ""},    // the last byte of é is no start
		{"aéb", 2, "b"},  // nor its second
		{"aéb", 3, "éb"}, // a whole character
		{strings.Repeat("x", 10), 10, strings.Repeat("x", 10)},
	}
	for _, tt := range tests {
		got := tail(tt.s, tt.n)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("tail(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
