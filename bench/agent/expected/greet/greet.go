// Package greet makes greetings.
package greet

import "strings"

// Greet returns a greeting for name.
func Greet(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "stranger"
	}
	return "Hello, " + name + "!"
}
