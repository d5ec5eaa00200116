package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tools/web/redact"
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
	logger := newLogger(stderr)
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "agentls serve: %v\n", err)
			return exitFailure
		}
		defer f.Close()
		// A log file is asked for to be read: it gets the info level unless
		// AGENTLS_LOG_LEVEL says otherwise.
		level := slog.LevelInfo
		if v := os.Getenv("AGENTLS_LOG_LEVEL"); v != "" {
			_ = level.UnmarshalText([]byte(v)) // an unknown level keeps the default
		}
		logger = slog.New(redact.NewHandler(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level})))
	}
	logger.Info("agentls serve", "version", version(), "pid", os.Getpid(), "started", time.Now().Format(time.RFC3339))
	srv := rpc.New(rpc.Options{Version: version(), ConfirmTimeout: *confirmTimeout, Logger: logger, NewClient: modelClients(logger)})
	return srv.Serve(ctx, stdin, stdout)
}
