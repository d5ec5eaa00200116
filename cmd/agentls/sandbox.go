package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"syscall"

	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/session/toolbox"
)

// cmdSandbox is `agentls sandbox`: what this machine supports and the policy in force
// for a workspace, or, after --, one command run contained by that policy.
func cmdSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the status as JSON")
	root := fs.String("root", "", "workspace root (default: the current directory)")
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i+1:]
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "agentls sandbox: unexpected argument %q (a command goes after --)\n", pos[0])
		return exitBadUsage
	}
	box, err := sandboxFor(*root, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	if command != nil {
		if len(command) == 0 {
			fmt.Fprintln(stderr, "agentls sandbox: no command after --")
			return exitBadUsage
		}
		return runContained(ctx, box, command, stderr)
	}
	st := box.Status()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(st); err != nil {
			fmt.Fprintf(stderr, "agentls: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	printSandbox(stdout, st)
	return exitOK
}

// sandboxFor returns the sandbox of the workspace at root, or the one the environment
// carries (sandbox.EnvPolicy: an agentls that runs a command in an ACP client's
// terminal passes its own).
func sandboxFor(root string, stderr io.Writer) (*sandbox.Sandbox, error) {
	if text, ok := os.LookupEnv(sandbox.EnvPolicy); ok {
		os.Unsetenv(sandbox.EnvPolicy)
		return sandbox.Decode(text, sandbox.Helper())
	}
	tb, err := newToolbox(toolbox.Options{Roots: []string{root}, Logger: newLogger(stderr)})
	if err != nil {
		return nil, err
	}
	defer tb.Close()
	return tb.Config().Sandbox, nil
}

// printSandbox writes st for a person.
func printSandbox(w io.Writer, st sandbox.Status) {
	m := st.Machine
	fmt.Fprintf(w, "Commands: %s\n\nThis machine (%s):\n", st.Summary, m.OS)
	if m.LandlockABI > 0 {
		fmt.Fprintf(w, "  Landlock:         ABI %d\n", m.LandlockABI)
	} else {
		fmt.Fprintf(w, "  Landlock:         no (%s)\n", m.LandlockError)
	}
	if m.UserNamespaces {
		fmt.Fprintln(w, "  user namespaces:  yes")
	} else {
		fmt.Fprintf(w, "  user namespaces:  no (%s)\n", m.UserNamespacesError)
	}
	fmt.Fprintf(w, "  seccomp:          %s\n", map[bool]string{true: "yes", false: "no"}[m.Seccomp])
	if !st.Contained {
		return
	}
	list := func(title string, paths []string) {
		if len(paths) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, p := range paths {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	list("Writable", st.Writable)
	list("Read-only inside them", st.ReadOnly)
	list("Hidden", st.Hidden)
	fmt.Fprintf(w, "\nNetwork: %s\nautoAllow: %t\n", map[bool]string{true: "allowed", false: "off"}[st.Network], st.AutoAllow)
}

// runContained runs command in box with agentls's standard streams and returns its
// exit status (128 + the signal that ended it, as a shell reports it).
func runContained(ctx context.Context, box *sandbox.Sandbox, command []string, stderr io.Writer) int {
	if err := box.Err(); err != nil {
		fmt.Fprintf(stderr, "agentls sandbox: %v\n", err)
		return sandbox.ExitSetup
	}
	if !box.Contained() {
		fmt.Fprintf(stderr, "agentls sandbox: %s\n", box.Status().Summary)
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Killed with agentls: a client that kills the terminal's process (agentls) ends
	// the command too. The signal comes when the thread that started it ends, so that
	// thread is this goroutine's until agentls exits.
	runtime.LockOSThread()
	dieWithParent(cmd)
	if err := box.Wrap(cmd); err != nil {
		fmt.Fprintf(stderr, "agentls sandbox: %v\n", err)
		return sandbox.ExitSetup
	}
	// A terminal's interrupt reaches the command itself, which shares our process
	// group; a termination sent to agentls alone is passed on.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, os.Interrupt)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "agentls sandbox: %v\n", err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			if sig != os.Interrupt {
				_ = cmd.Process.Signal(sig)
			}
			continue
		case <-ctx.Done():
			// main's context ends on SIGINT or SIGTERM, which sigs has already seen.
			ctx = context.Background()
			continue
		case err := <-done:
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				fmt.Fprintf(stderr, "agentls sandbox: %v\n", err)
				return 127
			}
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return cmd.ProcessState.ExitCode()
		}
	}
}
