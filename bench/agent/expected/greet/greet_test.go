package greet

import "testing"

func TestGreet(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"world", "Hello, world!"},
		{"  ", "Hello, stranger!"},
	} {
		if got := Greet(tt.in); got != tt.want {
			t.Errorf("Greet(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
