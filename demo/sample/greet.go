// Package greet says hello.
package greet

import "fmt"

// Greeting returns the greeting for name, or a greeting for the world when name is
// empty.
func Greeting(name string) string {
	if name == "" {
		name = "World"
	}
	return fmt.Sprintf("Hello %s!", name)
}
