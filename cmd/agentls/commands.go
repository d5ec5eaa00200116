package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/mcp"
	"github.com/agentls/agentls/tools/web/redact"
	"golang.org/x/term"
)

// parseArgs parses flags that may stand before, between or after the positional
// arguments, and returns the positional ones.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newLogger(stderr io.Writer) *slog.Logger { return leveledLogger(stderr, slog.LevelWarn) }

// leveledLogger logs to w from AGENTLS_LOG_LEVEL, else from level.
func leveledLogger(w io.Writer, level slog.Level) *slog.Logger {
	if v := os.Getenv("AGENTLS_LOG_LEVEL"); v != "" {
		_ = level.UnmarshalText([]byte(v)) // an unknown level keeps the default
	}
	// Secrets in URLs (a password, an api_key parameter) never reach the log.
	return slog.New(redact.NewHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})))
}

// serverLogger is the log of a protocol server (serve, acp): stderr, or the file the
// user named with --log-file, which gets the info level since it is asked for to be
// read. close closes the file.
func serverLogger(logFile string, stderr io.Writer) (logger *slog.Logger, close func(), err error) {
	if logFile == "" {
		return newLogger(stderr), func() {}, nil
	}
	f, err := os.OpenFile(logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return leveledLogger(f, slog.LevelInfo), func() { f.Close() }, nil
}

// newToolbox builds the tool system for the workspace at o.Roots[0] (the current
// directory when empty).
func newToolbox(o toolbox.Options) (*toolbox.Toolbox, error) {
	if len(o.Roots) == 0 || o.Roots[0] == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		o.Roots = []string{wd}
	}
	o.Roots = workspaceRoots(o.Roots)
	// The session core's invoke_agent is listed too; run outside a session it says why
	// it cannot run.
	o.Extra = session.ListedTools
	tb, err := toolbox.New(o)
	if err != nil {
		return nil, err
	}
	// A command of the command line runs with the whole setup: its commands, skills
	// and extensions.
	tb.WaitAddons()
	return tb, nil
}

// workspaceRoots returns roots, or the current directory when they name none.
func workspaceRoots(roots []string) []string {
	if len(roots) == 0 || roots[0] == "" {
		if wd, err := os.Getwd(); err == nil {
			return []string{wd}
		}
	}
	return roots
}

func cmdTools(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls tools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print ToolInfo objects as JSON")
	root := fs.String("root", "", "workspace root (default: the current directory)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "agentls tools: unexpected argument %q\n", pos[0])
		return exitBadUsage
	}
	tb, err := newToolbox(toolbox.Options{Roots: []string{*root}, Logger: newLogger(stderr)})
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	defer tb.Close()
	if err := tb.StartExternal(ctx); err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
	}
	noteExternal(tb, stderr)
	infos := tb.Config().Registry.List()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(infos); err != nil {
			fmt.Fprintf(stderr, "agentls: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tSOURCE\tDESCRIPTION")
	for _, in := range infos {
		desc, _, _ := strings.Cut(in.Description, "\n")
		if len(desc) > 80 {
			desc = desc[:77] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", in.Name, in.Kind, in.Source, desc)
	}
	tw.Flush()
	return exitOK
}

func cmdRun(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the ToolResult as JSON")
	root := fs.String("root", "", "workspace root (default: the current directory)")
	mode := fs.String("approval-mode", "", "default, auto_edit, yolo or plan (default: from settings, else default)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadUsage
	}
	if len(pos) < 1 || len(pos) > 2 {
		fmt.Fprintf(stderr, "agentls run: want a tool name and its JSON arguments\n\n%s", usage)
		return exitBadUsage
	}
	raw := json.RawMessage("{}")
	if len(pos) == 2 {
		raw = json.RawMessage(pos[1])
		if !json.Valid(raw) {
			fmt.Fprintf(stderr, "agentls run: the arguments are not valid JSON: %s\n", pos[1])
			return exitBadUsage
		}
	}
	if _, err := confirm.ParseMode(*mode); err != nil {
		fmt.Fprintf(stderr, "agentls run: %v\n", err)
		return exitBadUsage
	}
	logger := newLogger(stderr)
	// Without a terminal there is nobody to ask: a nil Asker makes the scheduler refuse
	// a call that needs consent, saying how to allow it, and MCP servers' questions are
	// declined.
	var asker confirm.Asker
	var elicit mcp.Elicitor
	var ta *terminalAsker
	if in, ok := stdin.(*os.File); ok && term.IsTerminal(int(in.Fd())) {
		ta = &terminalAsker{in: in, out: stderr}
		asker, elicit = ta, ta
	}
	tb, err := newToolbox(toolbox.Options{Roots: []string{*root}, Mode: *mode, Logger: logger,
		MCPAuthorize: terminalAuthorize(stderr), MCPElicit: elicit})
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return exitFailure
	}
	defer tb.Close()
	if err := tb.StartExternal(ctx); err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
	}
	liveOutput := false
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		// Live output shows on the terminal while the call runs; stdout stays the result.
		liveOutput = true
	}
	var (
		mu     sync.Mutex
		needed *confirm.Details // the question nobody could answer
	)
	observe := func(ev tools.Event) {
		if ev.Note != nil {
			fmt.Fprintf(stderr, "agentls: %s\n", visible(ev.Note.Text))
		}
		if liveOutput && ev.Output != "" {
			io.WriteString(stderr, ev.Output)
		}
		if ev.Status == tools.StatusAwaitingApproval && asker == nil {
			mu.Lock()
			needed = ev.Details
			mu.Unlock()
		}
	}
	sched := tb.Scheduler(nil, asker, observe)
	res := sched.RunOne(ctx, tools.Request{CallID: "cli-1", Name: pos[0], Args: raw})
	mu.Lock()
	unasked := needed
	mu.Unlock()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "agentls: %v\n", err)
			return exitFailure
		}
	} else {
		if res.Output != "" {
			io.WriteString(stdout, res.Output)
			if !strings.HasSuffix(res.Output, "\n") {
				io.WriteString(stdout, "\n")
			}
		}
		if res.Error != nil {
			fmt.Fprintf(stderr, "agentls: %s: %s\n", res.Error.Type, res.Error.Message)
		}
	}
	if unasked != nil && res.Status != tools.StatusSuccess {
		how := "--approval-mode yolo"
		if unasked.Type == confirm.TypeEdit {
			how = "--approval-mode auto_edit"
		}
		fmt.Fprintf(stderr, "agentls: there is no terminal to ask on: run it from a terminal, or pass %s\n", how)
	}
	if res.Status != tools.StatusSuccess {
		if res.Error != nil && res.Error.Type == tools.ErrNotRegistered {
			return exitBadUsage
		}
		return exitFailure
	}
	return exitOK
}

// noteExternal says on stderr which workspace tool sources were skipped because the
// folder is untrusted, and which MCP servers failed.
func noteExternal(tb *toolbox.Toolbox, stderr io.Writer) {
	if u := tb.Untrusted(); u != nil && len(u.Skipped) > 0 {
		fmt.Fprintf(stderr, "agentls: workspace tools skipped because the folder is untrusted: %s\n  %s\n",
			strings.Join(u.Skipped, ", "), u.Hint)
	}
	for _, st := range tb.MCPStatuses() {
		if !st.Connected() {
			fmt.Fprintf(stderr, "agentls: MCP server %s: %s %s\n", st.Name, st.State, st.Error)
		}
	}
}
