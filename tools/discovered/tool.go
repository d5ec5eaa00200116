package discovered

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
)

// makeTools turns declarations into tools. A declaration whose name a built-in tool
// has is registered as Prefix+name; if that name is taken too, by a built-in or by a
// discovered tool keeping its own name, the declaration is skipped. Both are warned
// about.
func (c *config) makeTools(decls []declaration) []tools.Tool {
	own := map[string]bool{}
	for _, d := range decls {
		if !c.builtin(d.name) {
			own[d.name] = true
		}
	}
	out := make([]tools.Tool, 0, len(decls))
	for _, d := range decls {
		name := d.name
		if c.builtin(name) {
			name = Prefix + d.name
			if c.builtin(name) || own[name] {
				c.logger.Warn("discovered tool skipped: a built-in tool has its name, and the prefixed name is taken too",
					"tool", d.name, "prefixed", name)
				continue
			}
			c.logger.Warn("discovered tool renamed: a built-in tool has its name", "tool", d.name, "name", name)
		}
		out = append(out, c.newTool(name, d))
	}
	return out
}

// tool is one discovered tool.
type tool struct {
	cfg  *config
	info tools.Info
	// original is the declared name, which the call command receives.
	original string
	// command is the call's command line as people are shown it.
	command string
}

func (c *config) newTool(name string, d declaration) *tool {
	t := &tool{cfg: c, original: d.name, command: c.callLine + " " + quoteArg(d.name)}
	t.info = tools.Info{
		Name:        name,
		DisplayName: name,
		Description: c.describe(d.description, t.command),
		Kind:        tools.KindOther,
		Source:      tools.SourceDiscovered,
		Parameters:  d.schema,
	}
	return t
}

// describe returns the description the model is given: the declared one, then how the
// tool was found, how it runs and what a failure reports, as Gemini CLI appends it.
func (c *config) describe(declared, command string) string {
	var b strings.Builder
	if d := strings.TrimSpace(declared); d != "" {
		b.WriteString(d)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "This tool was discovered from the project by running the command `%s` in the project root. ", c.discoveryLine)
	fmt.Fprintf(&b, "When called, it runs the command `%s` in the project root, with the call's arguments as a JSON object on its standard input. ", command)
	b.WriteString("The tool discovery and call commands are set in the project or user settings (tools.discoveryCommand and tools.callCommand).\n\n")
	b.WriteString("The call command runs as a subprocess, not through a shell. " +
		"If it exits with status 0, its standard output is the result. " +
		"Otherwise the call fails, and the following information is returned:\n\n" +
		"Stdout: Output on the standard output stream. Can be `(empty)` or partial.\n" +
		"Stderr: Output on the standard error stream. Can be `(empty)` or partial.\n" +
		"Error: Error or `(none)` if no error was reported for the subprocess.\n" +
		"Exit Code: Exit code or `(none)` if terminated by signal.\n" +
		"Signal: Signal number or `(none)` if no signal was received.")
	return b.String()
}

func (t *tool) Info() tools.Info { return t.info }

// Build accepts any arguments that satisfy the declared schema: what they mean is the
// call command's business.
func (t *tool) Build(args json.RawMessage) (tools.Invocation, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, tools.Errorf(tools.ErrInvalidParams, "the arguments of %s must be a JSON object, not %s", t.info.Name, excerpt(args))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil {
		return nil, tools.Errorf(tools.ErrInvalidParams, "the arguments of %s: %v", t.info.Name, err)
	}
	return &invocation{t: t, args: compact.Bytes()}, nil
}

// invocation is one call of a discovered tool.
type invocation struct {
	t *tool
	// args is the call's arguments, a compact JSON object, written to the command's
	// standard input.
	args []byte
}

func (inv *invocation) Describe() string {
	return inv.t.info.Name + " " + excerpt(inv.args)
}

func (inv *invocation) Locations() []tools.Location { return nil }

// Confirmation always asks, and asks as an info confirmation although the call runs a
// command. An execute confirmation would make the policy treat the call as a shell
// command: "Allow always" would allowlist the call command's roots (python3, say) for
// every shell command, including run_shell_command's, and a person's earlier
// allowlisting of python3 for the shell would let this tool run unasked. As an info
// confirmation, "Allow always" allows this tool alone, by its name.
func (inv *invocation) Confirmation(ctx context.Context) (*confirm.Details, error) {
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, inv.args, "", "  "); err != nil {
		pretty.Reset()
		pretty.Write(inv.args)
	}
	args := clip(pretty.String(), confirmArgsChars/5, confirmArgsChars-confirmArgsChars/5)
	return &confirm.Details{
		Type:  confirm.TypeInfo,
		Title: "Confirm Discovered Tool: " + inv.t.info.Name,
		Prompt: fmt.Sprintf("The project's tool %s runs the command `%s` in %s, with these arguments as JSON on its standard input:\n\n%s",
			inv.t.info.Name, inv.t.command, inv.t.cfg.dir, args),
	}, nil
}

// confirmArgsChars bounds the arguments a confirmation shows.
const confirmArgsChars = 4000

// How much of each output stream a failure reports: its beginning and its end.
const (
	reportHead = 2000
	reportTail = 8000
)

func (inv *invocation) Execute(ctx context.Context, out io.Writer) (*tools.Result, error) {
	t := inv.t
	if err := ctx.Err(); err != nil {
		return nil, &tools.Error{Type: tools.ErrCancelled, Message: fmt.Sprintf("%s was cancelled before it started.", t.info.Name), Err: err}
	}
	r, err := run(ctx, runSpec{
		argv:    append(slices.Clone(t.cfg.call), t.original),
		dir:     t.cfg.dir,
		env:     t.cfg.environ(),
		box:     t.cfg.box(),
		stdin:   inv.args,
		timeout: t.cfg.timeout,
		limit:   t.cfg.maxOutput,
		grace:   t.cfg.grace,
	})
	if err != nil {
		return nil, &tools.Error{Type: tools.ErrExecutionFailed, Err: err,
			Message: fmt.Sprintf("Running `%s` failed: %v", t.command, err)}
	}
	switch r.stopped {
	case stopCancelled:
		return nil, &tools.Error{Type: tools.ErrCancelled, Err: context.Cause(ctx),
			Message: fmt.Sprintf("%s was cancelled before it could complete, and its command was stopped.\n%s", t.info.Name, inv.report(r))}
	case stopTimedOut:
		return nil, tools.Errorf(tools.ErrTimeout, "%s did not finish within %s, and its command was stopped.\n%s",
			t.info.Name, t.cfg.timeout, inv.report(r))
	}
	if _, signalled := r.signal(); signalled || r.state.ExitCode() != 0 || r.readErr != nil {
		return nil, tools.Errorf(tools.ErrExecutionFailed, "%s failed.\n%s", t.info.Name, inv.report(r))
	}

	output := validText(r.stdout.bytes())
	if n := r.stdout.cut(); n > 0 {
		output += fmt.Sprintf("\n[... output cut off here: the tool wrote %d bytes to its standard output, of which only the first %d are kept ...]",
			r.stdout.n, len(r.stdout.buf))
	}
	res := &tools.Result{Summary: "Exit code 0", Output: output}
	if r.stderr.n > 0 {
		// A tool may log to standard error; that is for people, not the model.
		res.Summary += fmt.Sprintf(", %d bytes on standard error", r.stderr.n)
		res.Display = output + "\n\nStderr:\n" + streamText(r.stderr)
	}
	return res, nil
}

// report describes a failed or stopped call in the form the description promises.
func (inv *invocation) report(r *runResult) string {
	exitCode, signal := "(none)", "(none)"
	if sig, ok := r.signal(); ok {
		signal = fmt.Sprintf("%d (%s)", int(sig), signalName(sig))
	} else {
		exitCode = strconv.Itoa(r.state.ExitCode())
	}
	errText := "(none)"
	if r.readErr != nil {
		errText = "reading the output failed, so it may be incomplete: " + r.readErr.Error()
	}
	return fmt.Sprintf("Command: %s\nDirectory: %s\nStdout: %s\nStderr: %s\nError: %s\nExit Code: %s\nSignal: %s",
		inv.t.command, inv.t.cfg.dir, streamText(r.stdout), streamText(r.stderr), errText, exitCode, signal)
}

// streamText is an output stream as a report shows it: "(empty)", or its text, of
// which only the beginning and the end if it is long.
func streamText(c *capture) string {
	text := strings.TrimRight(validText(c.bytes()), "\n")
	if strings.TrimSpace(text) == "" && c.cut() == 0 {
		return "(empty)"
	}
	text = clip(text, reportHead, reportTail)
	if n := c.cut(); n > 0 {
		text += fmt.Sprintf("\n[... %d more bytes not kept ...]", n)
	}
	return text
}

// clip returns s if it has at most head+tail characters, else its first head and last
// tail characters with a line between saying how many were left out.
func clip(s string, head, tail int) string {
	n := utf8.RuneCountInString(s)
	if n <= head+tail {
		return s
	}
	h := runeOffset(s, head)
	tl := runeOffset(s, n-tail)
	return fmt.Sprintf("%s\n[... %d characters left out here ...]\n%s", s[:h], n-head-tail, s[tl:])
}

// runeOffset returns the byte offset of the i-th character of s.
func runeOffset(s string, i int) int {
	for off := range s {
		if i == 0 {
			return off
		}
		i--
	}
	return len(s)
}

func validText(p []byte) string { return string(bytes.ToValidUTF8(p, []byte("\uFFFD"))) }

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*invocation) Capabilities() tools.Capabilities { return tools.Capabilities{} }
