// Command agentls is the tool system of an AI coding agent. Editors launch it as a
// language server; from a terminal it lists and runs its tools.
//
// Usage:
//
//	agentls [serve [--log-file FILE] [--confirm-timeout DURATION]]
//	agentls acp [--log-file FILE]
//	agentls tools [--json] [--root DIR]
//	agentls run TOOL ['JSON'] [--approval-mode MODE] [--root DIR] [--json]
//	agentls prompt "…" [--model M] [--approval-mode MODE] [--session ID] [--output text|json|stream-json] [--root DIR]
//	agentls undo [--session ID] [--turn N] [--force] [--diff] [--redo] [--root DIR]
//	agentls rules [remove N] [--root DIR]
//	agentls trust [DIR] [--parent | --distrust | --revoke]
//	agentls trust --list
//	agentls mcp auth|logout SERVER [--root DIR]
//	agentls login [--provider gemini|openai]
//	agentls logout
//	agentls version
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	// First: a sandbox helper becomes its command before the rest initialises.
	_ "github.com/agentls/agentls/sandbox/reexec"
)

// Exit codes of the command line.
const (
	exitOK       = 0
	exitFailure  = 1 // a tool error or a refusal
	exitBadUsage = 2
)

const usage = `usage:
  agentls [serve [--log-file FILE] [--confirm-timeout DURATION]]
      run the language server on stdin and stdout (what editors launch; see
      docs/protocol.md); logs go to stderr, or to FILE
  agentls acp [--log-file FILE]
      serve the Agent Client Protocol on stdin and stdout (what Zed, the JetBrains
      IDEs, CodeCompanion and agent-shell launch; see docs/acp.md)
  agentls sandbox [--json] [--root DIR] [-- COMMAND [ARG...]]
      print what this machine supports to contain commands and the policy in
      force for the workspace, or run COMMAND contained by it
  agentls tools [--json] [--root DIR]
      list the tools (with --json, as the editor protocol's ToolInfo objects)
  agentls run TOOL ['JSON'] [--approval-mode MODE] [--root DIR] [--json]
      run one tool call through the scheduler, asking on the terminal where consent
      is needed; prints the output for the model (with --json, the ToolResult)
  agentls prompt "PROMPT" [--model M] [--approval-mode MODE] [--session ID]
                 [--output text|json|stream-json] [--root DIR]
      run one prompt through the agent: the model's answer streams to stdout, tool
      calls are shown on stderr, consent is asked on the terminal (refused without
      one, unless MODE allows); --session continues a stored session
  agentls undo [--session ID] [--turn N] [--force] [--diff] [--redo] [--root DIR]
      take back, on disk, what one prompt of a stored session changed, its edits and
      its shell commands' changes (default: the newest session of the workspace, its
      last prompt that changed files): each file gets back what it held before the
      prompt, its mode too, and what the prompt created is deleted; nothing is undone
      where a file changed since, unless --force (then only those stay); --redo
      brings back what an undo took back; --diff shows the prompt's changes instead
  agentls rules [remove N] [--root DIR]
      list the policy rules of the user's settings file and the workspace's, with
      their files and numbers ("always, and save" answers add them there); remove N
      removes rule N of the list
  agentls stats [--session ID] [--json] [--root DIR]
      per tool, the calls, errors, cancellations and p50/p95 execution times of
      the workspace's stored sessions (or of the session ID); a running editor
      server reports its own with the command agentls.metrics
  agentls extensions list [--json] [--root DIR]
      list the Gemini CLI extensions agentls reads (~/.gemini/extensions, its
      configuration folder's extensions) with what each brings: MCP servers,
      context files, excluded tools, commands, skills, hooks and policies; one
      disabled in Gemini CLI's extension-enablement.json is shown disabled
  agentls trust [DIR] [--parent | --distrust | --revoke]
      trust the folder DIR (default: the current directory), so that its settings
      files may set the approval mode and allow rules; --parent trusts DIR and every
      folder under it, --distrust records that DIR and every folder under it must
      not be trusted, --revoke removes the entry for DIR
  agentls trust --list
      show the trusted folders
  agentls mcp auth SERVER [--root DIR]
      authorize agentls with the MCP server SERVER of the settings (the user's, and
      the workspace's when trusted) by OAuth: the authorization page's URL is
      printed, and opened with $BROWSER when set
  agentls mcp logout SERVER [--root DIR]
      forget the OAuth token of SERVER (kept in $XDG_STATE_HOME/agentls/mcp-tokens)
  agentls login [--provider gemini|openai]
      ask for the model's API key (without echo on a terminal; else the first
      line of stdin) and store it in $XDG_CONFIG_HOME/agentls/keys.json, readable
      by you alone; the settings' provider.apiKey and the environment's key come
      first (what an ACP client runs in its terminal to authenticate)
  agentls logout
      remove the API keys agentls login stored
  agentls version
      print the version

MODE is default, auto_edit, yolo or plan. DIR is the workspace root (default: the
current directory). Settings are read from $XDG_CONFIG_HOME/agentls/settings.json and
the workspace's .agentls/settings.json and .gemini/settings.json; the workspace's
files may only tighten consent unless the folder is trusted. Trust is kept in
$XDG_CONFIG_HOME/agentls/trusted-folders.json, where the most specific entry decides.
For CI and tests, AGENTLS_TRUST_WORKSPACE=1 trusts the workspace of that process.

The model is Gemini (GEMINI_API_KEY or GOOGLE_API_KEY, else the key of agentls
login; GOOGLE_GEMINI_BASE_URL overrides the endpoint) unless settings name another
provider ("provider": {"type": "openai", "baseUrl": …} with OPENAI_API_KEY or the key
of agentls login --provider openai, or "scripted" with a script file).
Sessions are kept under $XDG_STATE_HOME/agentls/sessions.
`

func main() {
	// The genai SDK prints through the standard logger what it also returns as errors
	// ("Error context canceled" on every cancelled stream): keep that for debugging.
	if !strings.EqualFold(os.Getenv("AGENTLS_LOG_LEVEL"), "debug") {
		log.SetOutput(io.Discard)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command line, with its streams passed in.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return cmdServe(ctx, nil, stdin, stdout, stderr)
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], stdin, stdout, stderr)
	case "acp":
		return cmdACP(ctx, args[1:], stdin, stdout, stderr)
	case "tools":
		return cmdTools(ctx, args[1:], stdout, stderr)
	case "prompt", "-p":
		return cmdPrompt(ctx, args[1:], stdin, stdout, stderr)
	case "run":
		return cmdRun(ctx, args[1:], stdin, stdout, stderr)
	case "extensions":
		return cmdExtensions(ctx, args[1:], stdout, stderr)
	case "trust":
		return cmdTrust(ctx, args[1:], stdout, stderr)
	case "undo":
		return cmdUndo(ctx, args[1:], stdout, stderr)
	case "mcp":
		return cmdMCP(ctx, args[1:], stdin, stdout, stderr)
	case "rules":
		return cmdRules(ctx, args[1:], stdout, stderr)
	case "stats":
		return cmdStats(ctx, args[1:], stdout, stderr)
	case "sandbox":
		return cmdSandbox(ctx, args[1:], stdout, stderr)
	case "login":
		return cmdLogin(ctx, args[1:], stdin, stdout, stderr)
	case "logout":
		return cmdLogout(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "agentls %s\n", version())
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "agentls: unknown command %q\n\n%s", args[0], usage)
	return exitBadUsage
}

// releaseVersion is the version of a release build, set by make dist
// (-ldflags "-X main.releaseVersion=V").
var releaseVersion string

// version reports the release's version, else the module version the binary was built
// from, or the VCS revision for a development build.
func version() string {
	if releaseVersion != "" {
		return releaseVersion
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel-" + s.Value[:12]
		}
	}
	return "devel"
}
