// Command agentls-sandbox is agentls's sandbox helper on its own: a small program that
// starts faster than agentls, which agentls runs, when it finds it beside itself, to
// contain each command (see package sandbox). It does nothing when started otherwise.
package main

import (
	"fmt"
	"os"

	"github.com/agentls/agentls/sandbox"
)

func main() {
	sandbox.Enter()
	fmt.Fprintln(os.Stderr, "agentls-sandbox is started by agentls to contain a command; run `agentls sandbox -- COMMAND` instead")
	os.Exit(2)
}
