// Command inittime times ACP agents from spawn to the first line of their answer to
// initialize, for bench/acp.sh: a Go program, because Node.js's own spawn costs about
// 100 ms on the test machine, more than the figure measured.
//
//	inittime -n 15 -- COMMAND ARGS...
//
// It prints one line: "init_ms=MEDIAN min=… max=…" over n spawns, each ended by
// closing its input (and killed after 10 s).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"slices"
	"time"
)

func main() {
	n := flag.Int("n", 15, "spawns")
	dir := flag.String("dir", "", "the working directory of the agent")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: inittime [-n N] [-dir DIR] -- COMMAND ARGS...")
	}
	const req = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"
	var ms []float64
	for range *n {
		cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
		cmd.Dir = *dir
		stdin, err := cmd.StdinPipe()
		if err != nil {
			log.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			log.Fatal(err)
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			log.Fatal(err)
		}
		if _, err := io.WriteString(stdin, req); err != nil {
			log.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			log.Fatalf("no answer to initialize: %v", err)
		}
		d := time.Since(t0)
		if len(line) < 20 {
			log.Fatalf("answer %q", line)
		}
		ms = append(ms, float64(d.Microseconds())/1000)
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	slices.Sort(ms)
	fmt.Printf("init_ms=%.1f min=%.1f max=%.1f\n", ms[len(ms)/2], ms[0], ms[len(ms)-1])
	os.Exit(0)
}
