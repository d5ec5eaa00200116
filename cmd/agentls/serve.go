package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentls/agentls/rpc"
)

// cmdServe runs the language server on stdin and stdout until the editor sends exit
// or closes the connection.
func cmdServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logFile := fs.String("log-file", "", "append the log to this file instead of stderr")
	confirmTimeout := fs.Duration("confirm-timeout", rpc.DefaultConfirmTimeout,
		"how long a confirmation asked with window/showMessageRequest waits for an answer")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "agentls serve: unexpected argument %q\n\n%s", pos[0], usage)
		return exitBadUsage
	}
	if *confirmTimeout <= 0 {
		fmt.Fprintf(stderr, "agentls serve: --confirm-timeout must be positive, got %s\n", *confirmTimeout)
		return exitBadUsage
	}
	logger, closeLog, err := serverLogger(*logFile, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentls serve: %v\n", err)
		return exitFailure
	}
	defer closeLog()
	logger.Info("agentls serve", "version", version(), "pid", os.Getpid(), "started", time.Now().Format(time.RFC3339))
	srv := rpc.New(rpc.Options{Version: version(), ConfirmTimeout: *confirmTimeout, Logger: logger, NewClient: modelClients(logger)})
	return srv.Serve(ctx, stdin, stdout)
}
