package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentls/agentls/rpc/acp"
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
	logger, closeLog, err := serverLogger(*logFile, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentls acp: %v\n", err)
		return exitFailure
	}
	defer closeLog()
	logger.Info("agentls acp", "version", version(), "pid", os.Getpid())
	srv := acp.New(acp.Options{Version: version(), NewClient: modelClients(logger), Logger: logger})
	if err := srv.Serve(ctx, stdin, stdout); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "agentls acp: %v\n", err)
		return exitFailure
	}
	return exitOK
}
