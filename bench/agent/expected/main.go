// Command greeter prints a greeting.
package main

import (
	"fmt"
	"os"

	"example.com/greeter/greet"
)

func main() {
	name := "world"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	fmt.Println(greet.Greet(name))
}
