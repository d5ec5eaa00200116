package greet

import "testing"

func TestGreeting(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"", "Hello, World!"},
		{"Ada", "Hello, Ada!"},
	} {
		if got := Greeting(tt.name); got != tt.want {
			t.Errorf("Greeting(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
