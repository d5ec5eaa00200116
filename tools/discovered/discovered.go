// Package discovered provides the tools a project declares through the settings
// tools.discoveryCommand and tools.callCommand, as Gemini CLI does.
//
// Discover runs the discovery command in the workspace root. Its standard output is a
// JSON array of function declarations, in any of three forms per item:
//
//	{"function_declarations": [DECLARATION, …]}
//	{"functionDeclarations": [DECLARATION, …]}
//	DECLARATION
//
// where a DECLARATION is {"name": …, "description": …, "parametersJsonSchema": …} or
// the same with "parameters" (Gemini's OpenAPI-style schema, which is turned into JSON
// Schema: upper-case types become lower-case ones, "nullable" a type list). Gemini CLI
// ignores "parameters"; agentls reads it when "parametersJsonSchema" is absent.
//
// Each declaration becomes a tool whose call runs CALLCOMMAND NAME in the workspace
// root with the call's arguments as a JSON object on standard input. Exit status 0
// makes standard output the result; anything else is a failure reporting both output
// streams, the exit code and the signal.
//
// Both commands are split into words as a POSIX shell would split them — quotes,
// backslashes, $VAR and ~ expansion — and run without a shell: pipes, redirections,
// command lists, command and process substitution and leading VAR=value assignments
// are refused with an error saying so. There is no globbing. Every process runs in a
// process group of its own; when it is stopped (cancellation, timeout, too much
// output) the group gets SIGTERM and, after a grace period, SIGKILL, and when its
// leader exits whatever it left running in the group is killed.
package discovered

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/tools"
)

// Defaults for the zero fields of Options.
const (
	// DefaultTimeout bounds one call of a discovered tool. Gemini CLI sets no bound; a
	// call nobody waits for must still end, and ten minutes lets a tool do real work
	// such as a build or a test run.
	DefaultTimeout = 10 * time.Minute
	// DefaultDiscoveryTimeout bounds the discovery command, which only lists tools.
	DefaultDiscoveryTimeout = 30 * time.Second
	// DefaultMaxOutput bounds, in bytes, the discovery command's standard output (more
	// is an error) and what is kept of each output stream of a call (more is cut off).
	DefaultMaxOutput = 10 << 20
)

// defaultGrace is how long a process group has to exit after SIGTERM before SIGKILL.
const defaultGrace = 2 * time.Second

// Prefix is put in front of the name of a discovered tool that a built-in tool already
// has.
const Prefix = "discovered_"

// Options configures Discover: the settings tools.discoveryCommand and
// tools.callCommand, and where and how long their processes run.
type Options struct {
	// DiscoveryCommand lists the tools; empty means there are none to discover.
	DiscoveryCommand string
	// CallCommand runs a tool, with the tool's name appended as the last argument. It is
	// required when DiscoveryCommand is set.
	CallCommand string
	// Dir is the directory both commands run in: the workspace root.
	Dir string
	// Timeout bounds each call of a discovered tool; 0 means DefaultTimeout, a negative
	// value no bound. A call that takes longer fails with a timeout error.
	Timeout time.Duration
	// DiscoveryTimeout bounds the discovery command; 0 means DefaultDiscoveryTimeout, a
	// negative value no bound.
	DiscoveryTimeout time.Duration
	// MaxOutput bounds output in bytes (see DefaultMaxOutput); 0 means DefaultMaxOutput.
	MaxOutput int64
	// Builtin reports whether a built-in tool is called name; such discovered tools are
	// registered as Prefix+name. Nil means no name is taken.
	Builtin func(name string) bool
	// Logger receives warnings about declarations that are skipped or renamed; nil
	// discards them.
	Logger *slog.Logger
	// HideEnv, when set, names variables of agentls's own environment that the
	// discovery and call commands do not inherit: the secrets agentls itself uses,
	// which a project's tool has no business reading. It is called for every process,
	// so that changed settings apply from the next call.
	HideEnv func() []string
	// Sandbox, when set, returns the sandbox the discovery and call commands run in,
	// called for every process; nil (or a nil result) runs them uncontained.
	Sandbox func() *sandbox.Sandbox

	// grace overrides defaultGrace, for tests of processes that ignore SIGTERM.
	grace time.Duration
}

// config is Options with defaults applied and the commands split.
type config struct {
	discovery     []string
	call          []string
	discoveryLine string
	callLine      string
	dir           string
	hideEnv       func() []string
	sandbox       func() *sandbox.Sandbox
	timeout       time.Duration
	discTimeout   time.Duration
	maxOutput     int64
	grace         time.Duration
	builtin       func(string) bool
	logger        *slog.Logger
}

// Discover runs the discovery command and returns the tools it declares, ready to be
// registered; it registers nothing itself. A DiscoveryCommand that is empty returns no
// tools and no error. A command that cannot be split, fails to start, exits with a
// non-zero status, is killed, takes longer than the discovery timeout, writes more
// than MaxOutput bytes or writes something other than a JSON array is an error, and
// then no tools are returned. Declarations that cannot be used (no name, say) are
// skipped with a warning in the log, so one bad entry does not lose the others.
func Discover(ctx context.Context, opts Options) ([]tools.Tool, error) {
	if opts.DiscoveryCommand == "" {
		return nil, nil
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	out, err := cfg.runDiscovery(ctx)
	if err != nil {
		return nil, err
	}
	decls, err := parseDeclarations(out, cfg.logger)
	if err != nil {
		return nil, fmt.Errorf("tool discovery command `%s`: %w", cfg.discoveryLine, err)
	}
	return cfg.makeTools(decls), nil
}

func newConfig(opts Options) (*config, error) {
	discovery, err := splitCommand(opts.DiscoveryCommand)
	if err != nil {
		return nil, fmt.Errorf("setting tools.discoveryCommand: %w", err)
	}
	if opts.CallCommand == "" {
		return nil, errors.New("setting tools.callCommand is empty, but tools.discoveryCommand is set: discovered tools could not be called")
	}
	call, err := splitCommand(opts.CallCommand)
	if err != nil {
		return nil, fmt.Errorf("setting tools.callCommand: %w", err)
	}
	if opts.Dir == "" {
		return nil, errors.New("tool discovery needs the workspace root directory to run in")
	}
	// exec reports a missing directory as a missing program; say what is missing.
	if fi, err := os.Stat(opts.Dir); err != nil {
		return nil, fmt.Errorf("tool discovery: the workspace root: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("tool discovery: the workspace root %s is not a directory", opts.Dir)
	}
	cfg := &config{
		discovery:     discovery,
		call:          call,
		discoveryLine: opts.DiscoveryCommand,
		callLine:      opts.CallCommand,
		dir:           opts.Dir,
		hideEnv:       opts.HideEnv,
		sandbox:       opts.Sandbox,
		timeout:       cmpOr(opts.Timeout, DefaultTimeout),
		discTimeout:   cmpOr(opts.DiscoveryTimeout, DefaultDiscoveryTimeout),
		maxOutput:     cmpOr(opts.MaxOutput, DefaultMaxOutput),
		grace:         cmpOr(opts.grace, defaultGrace),
		builtin:       opts.Builtin,
		logger:        opts.Logger,
	}
	if cfg.builtin == nil {
		cfg.builtin = func(string) bool { return false }
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

// environ returns the environment of a process: agentls's own without the hidden
// variables, and AGENTLS=1.
func (c *config) environ() []string {
	var hide []string
	if c.hideEnv != nil {
		hide = c.hideEnv()
	}
	env := tools.Environ(hide)
	return append(env, "AGENTLS=1")
}

// box returns the sandbox a process runs in now; nil runs it uncontained.
func (c *config) box() *sandbox.Sandbox {
	if c.sandbox == nil {
		return nil
	}
	return c.sandbox()
}

// cmpOr returns v, or def when v is zero. Unlike cmp.Or it keeps negative values,
// which mean "no bound".
func cmpOr[T time.Duration | int64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// runDiscovery runs the discovery command and returns its standard output.
func (c *config) runDiscovery(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tool discovery command `%s` was cancelled: %w", c.discoveryLine, context.Cause(ctx))
	}
	r, err := run(ctx, runSpec{
		argv:           c.discovery,
		dir:            c.dir,
		env:            c.environ(),
		box:            c.box(),
		timeout:        c.discTimeout,
		limit:          c.maxOutput,
		stopOnOverflow: true,
		grace:          c.grace,
	})
	if err != nil {
		return nil, fmt.Errorf("tool discovery command `%s`: %w", c.discoveryLine, err)
	}
	fail := func(format string, args ...any) error {
		msg := fmt.Sprintf("tool discovery command `%s` ", c.discoveryLine) + fmt.Sprintf(format, args...)
		if lines := firstLines(r.stderr.bytes(), stderrLines, stderrChars); lines != "" {
			msg += "; its standard error began:\n" + lines
		}
		return errors.New(msg)
	}
	switch r.stopped {
	case stopCancelled:
		return nil, fmt.Errorf("tool discovery command `%s` was cancelled: %w", c.discoveryLine, context.Cause(ctx))
	case stopTimedOut:
		return nil, fail("did not finish within %s and was stopped", c.discTimeout)
	}
	if r.stopped == stopOverflow || r.stdout.cut() > 0 {
		return nil, fail("wrote more than %d bytes to its standard output, the most that is read from it", c.maxOutput)
	}
	if r.readErr != nil {
		return nil, fmt.Errorf("tool discovery command `%s`: reading its output: %w", c.discoveryLine, r.readErr)
	}
	if sig, ok := r.signal(); ok {
		return nil, fail("was killed by %s", signalName(sig))
	}
	if code := r.state.ExitCode(); code != 0 {
		return nil, fail("failed with exit code %d", code)
	}
	return r.stdout.bytes(), nil
}

// How much of the discovery command's standard error an error message quotes.
const (
	stderrLines = 10
	stderrChars = 2000
)

// firstLines returns the first n lines of p, at most chars characters of them, with
// "…" where more was left out; "" if p holds only white space.
func firstLines(p []byte, n, chars int) string {
	p = p[:min(len(p), 4*chars+4)] // enough bytes for chars characters, and a few more
	s := strings.TrimRight(validText(p), " \t\r\n")
	if strings.TrimSpace(s) == "" {
		return ""
	}
	lines := strings.SplitN(s, "\n", n+1)
	more := len(lines) > n
	s = strings.Join(lines[:min(n, len(lines))], "\n")
	if r := []rune(s); len(r) > chars {
		s, more = string(r[:chars]), true
	}
	if more {
		s += "\n…"
	}
	return s
}
