package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/agentls/agentls/rpc/acp"
	"github.com/agentls/agentls/tools/web/redact"
)

// cmdACP serves the Agent Client Protocol on stdin and stdout (what Zed, the JetBrains
// IDEs, CodeCompanion and agent-shell launch) until the client closes stdin.
//
//	agentls acp [--log-file FILE]
func cmdACP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls acp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logFile := fs.String("log-file", "", "append the log to this file instead of stderr")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "agentls acp: unexpected argument %q\n", pos[0])
		return exitBadUsage
	}
	logger := newLogger(stderr)
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "agentls acp: %v\n", err)
			return exitFailure
		}
		defer f.Close()
		level := slog.LevelInfo
		if v := os.Getenv("AGENTLS_LOG_LEVEL"); v != "" {
			_ = level.UnmarshalText([]byte(v)) // an unknown level keeps the default
		}
		logger = slog.New(redact.NewHandler(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level})))
	}
	logger.Info("agentls acp", "version", version(), "pid", os.Getpid())
	srv := acp.New(acp.Options{Version: version(), NewClient: modelClients(logger), Logger: logger})
	if err := srv.Serve(ctx, stdin, stdout); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "agentls acp: %v\n", err)
		return exitFailure
	}
	return exitOK
}
