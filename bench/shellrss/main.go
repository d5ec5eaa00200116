// Command shellrss measures the peak resident memory of one run_shell_command call: it
// runs a command through the shell tool (or, with -raw, through os/exec with its output
// discarded, for a baseline) and prints the call's time, the size of its output and the
// process's peak resident set (VmHWM from /proc/self/status).
//
// bench/shell.sh runs it; by hand:
//
//	go run ./bench/shellrss -command 'yes | head -c 50M'
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/shell"
	"github.com/agentls/agentls/workspace"
)

func main() {
	command := flag.String("command", `head -c 52428800 /dev/zero | tr '\0' 'x' | fold -w 100`, "the shell command to run")
	raw := flag.Bool("raw", false, "run the command through os/exec with its output discarded instead of through the tool")
	flag.Parse()
	if err := run(*command, *raw); err != nil {
		slog.Error("shellrss", "err", err)
		os.Exit(1)
	}
}

// counter counts the bytes written to it.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

func run(command string, raw bool) (err error) {
	dir, err := os.MkdirTemp("", "shellrss-")
	if err != nil {
		return err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = rerr
		}
	}()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		return err
	}

	var live counter
	start := time.Now()
	var saved string
	if raw {
		cmd := exec.Command("bash", "-c", command)
		cmd.Stdout = &live
		cmd.Stderr = &live
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("running %q: %w", command, err)
		}
	} else {
		ws, err := workspace.New(root)
		if err != nil {
			return err
		}
		s := shell.New(ws, shell.Options{OutputDir: filepath.Join(dir, "output")})
		defer func() {
			if cerr := s.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		res, err := call(s, command, &live)
		if err != nil {
			return fmt.Errorf("running %q: %w", command, err)
		}
		saved = res.OutputFile
	}
	elapsed := time.Since(start)

	hwm, rss, err := memory()
	if err != nil {
		return err
	}
	mode := "tool"
	if raw {
		mode = "raw"
	}
	fmt.Printf("mode=%s time=%s live_bytes=%d vm_hwm_kb=%d vm_rss_kb=%d", mode, elapsed.Round(time.Millisecond), live.n, hwm, rss)
	if saved != "" {
		fi, err := os.Stat(saved)
		if err != nil {
			return err
		}
		fmt.Printf(" saved_bytes=%d", fi.Size())
	}
	fmt.Println()
	return nil
}

// call runs command through run_shell_command, validated as the scheduler would.
func call(s *shell.Shell, command string, live io.Writer) (*tools.Result, error) {
	var t tools.Tool
	for _, tl := range s.Tools() {
		if tl.Info().Name == shell.RunToolName {
			t = tl
		}
	}
	args, err := json.Marshal(map[string]any{"command": command})
	if err != nil {
		return nil, err
	}
	v, err := tools.NewValidator(t.Info().Parameters)
	if err != nil {
		return nil, err
	}
	if err := v.Validate(args); err != nil {
		return nil, err
	}
	inv, err := t.Build(args)
	if err != nil {
		return nil, err
	}
	return inv.Execute(context.Background(), live)
}

// memory returns the peak and current resident set of this process, in kB.
func memory() (hwm, rss int64, err error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(val), "%d kB", &kb); err != nil {
			continue
		}
		switch name {
		case "VmHWM":
			hwm = kb
		case "VmRSS":
			rss = kb
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if hwm == 0 {
		return 0, 0, fmt.Errorf("no VmHWM in /proc/self/status")
	}
	return hwm, rss, nil
}
