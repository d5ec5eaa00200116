package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/tools"
)

// runArgsSchema is the parameter schema of runArgs, generated once, when first asked for.
var runArgsSchema = tools.ParametersOnce[runArgs](false)

// RunToolName is the name of the shell tool, as in Gemini CLI.
const RunToolName = "run_shell_command"

// runDescription is what the model is told of run_shell_command. What the system
// instruction says of every command (empty standard input, output as untrusted
// context) is not said again here, nor the fields of the result, which the model sees.
const runDescription = "Runs a command as `bash -c <command>`, in a process group of its own (stop it with `kill -- -PGID`). " +
	"A command that prints nothing for a long time is stopped. For servers and watchers set is_background rather than using `&`: " +
	"the call returns after delay_ms with the PID, and list_background_processes and read_background_output follow it. " +
	"Very long output is shortened to its beginning and end; the whole is saved to a file the result names."

type runTool struct{ s *Shell }

func (t runTool) Info() tools.Info {
	return tools.Info{
		Name:        RunToolName,
		DisplayName: "Shell",
		Description: runDescription,
		Kind:        tools.KindExecute,
		Source:      tools.SourceBuiltin,
		Parameters:  runArgsSchema(),
		Streams:     true,
	}
}

type runArgs struct {
	Command       string `json:"command" jsonschema:"The command line."`
	Description   string `json:"description,omitempty" jsonschema:"What the command does, in one line, for the user."`
	DirPath       string `json:"dir_path,omitempty" jsonschema:"An existing workspace directory to run in; default: the root."`
	IsBackground  bool   `json:"is_background,omitempty" jsonschema:"Leave the command running in the background."`
	DelayMS       *int   `json:"delay_ms,omitempty" jsonschema:"With is_background: milliseconds to wait for early output (default 200)." schema:"minimum=0,maximum=600000"`
	Sandbox       *bool  `json:"sandbox,omitempty" jsonschema:"false runs outside the OS sandbox, asking the user each time; only after the sandbox refused what the command needs."`
	Justification string `json:"justification,omitempty" jsonschema:"With sandbox: false, one line for the user: why."`
}

func (t runTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var a runArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return nil, tools.Errorf(tools.ErrInvalidParams, "command must not be empty")
	}
	if strings.ContainsRune(a.Command, 0) {
		return nil, tools.Errorf(tools.ErrInvalidParams, "command must not contain a NUL byte")
	}
	delay := defaultBackgroundDelay
	if a.DelayMS != nil {
		if !a.IsBackground {
			return nil, tools.Errorf(tools.ErrInvalidParams, "delay_ms applies only to a command run with is_background: true")
		}
		var err error
		if delay, err = delayArg(*a.DelayMS); err != nil {
			return nil, err
		}
	}
	outside := a.Sandbox != nil && !*a.Sandbox
	if outside && strings.TrimSpace(a.Justification) == "" {
		return nil, tools.Errorf(tools.ErrInvalidParams, "sandbox: false needs a justification: one line telling the user why the command must run outside the sandbox")
	}
	if strings.ContainsAny(a.Justification, "\n\r") {
		return nil, tools.Errorf(tools.ErrInvalidParams, "justification must be one line")
	}
	dir, err := t.s.dir(a.DirPath)
	if err != nil {
		return nil, err
	}
	inv := &runInvocation{s: t.s, args: a, dir: dir, delay: delay, explicitDir: a.DirPath != ""}
	if box := t.s.box(); box != nil {
		if err := box.Err(); err != nil {
			return nil, tools.Errorf(tools.ErrExecutionFailed, "%v", err)
		}
		if box.Contained() {
			inv.box, inv.outside = box, outside
		}
	}
	return inv, nil
}

// dir resolves the dir_path of a call: inside the workspace, an existing directory.
func (s *Shell) dir(p string) (string, error) {
	if p == "" {
		return s.ws.Roots()[0], nil
	}
	dir, err := s.ws.Resolve(p)
	if err != nil {
		return "", tools.FileError(fmt.Errorf("dir_path: %w", err))
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", tools.FileError(fmt.Errorf("dir_path: %w", err))
	}
	if !fi.IsDir() {
		return "", tools.Errorf(tools.ErrInvalidParams, "dir_path %s is not a directory", p)
	}
	return dir, nil
}

// displayDir is how the Output names the directory: "(root)" for the first root, a
// path relative to it below it, else the absolute path.
func (s *Shell) displayDir(dir string) string {
	root := s.ws.Roots()[0]
	if dir == root {
		return "(root)"
	}
	if rel := s.ws.Rel(dir); rel != dir && strings.HasPrefix(dir, root+string(os.PathSeparator)) {
		return rel
	}
	return dir
}

type runInvocation struct {
	s    *Shell
	args runArgs
	dir  string
	// delay is how long a background command may run before the call returns.
	delay time.Duration
	// explicitDir is set when dir_path named the directory; otherwise a persistent
	// shell's command runs where the session's last command left it.
	explicitDir bool
	// box is the sandbox the command is contained in, decided when the call is built
	// so that what is asked and what runs agree; nil where commands are not contained.
	// outside says the model asked to run it uncontained all the same.
	box     *sandbox.Sandbox
	outside bool

	mu sync.Mutex
	// asked is the persistent shell's state the Confirmation showed; Execute runs the
	// command only in that state.
	asked *shellState
}

// where returns the persistent shell's state a command of p runs in, with its
// directory as dir_path, when given, says.
func (inv *runInvocation) where(p *Session) shellState {
	st := p.state(inv.s)
	if inv.explicitDir {
		st.dir = inv.dir
	}
	return st
}

func (inv *runInvocation) Describe() string {
	var b strings.Builder
	b.WriteString(inv.args.Command)
	if d := inv.s.displayDir(inv.dir); d != "(root)" {
		fmt.Fprintf(&b, " [in %s]", d)
	}
	if inv.args.IsBackground {
		b.WriteString(" [background]")
	}
	if inv.args.Description != "" {
		fmt.Fprintf(&b, " (%s)", strings.ReplaceAll(inv.args.Description, "\n", " "))
	}
	return b.String()
}

func (inv *runInvocation) Locations() []tools.Location { return nil }

// Confirmation always asks: whether the question is put is the policy's decision, made
// from the commands the line runs. A line that cannot be parsed cannot be judged, so it
// is refused rather than passed on with commands nobody has looked at.
//
// In a persistent shell the command is analysed in the directory the session's last
// command left, and the variables carried from earlier commands are shown in front of
// it as the statements that set them, so that they are judged as part of the line.
func (inv *runInvocation) Confirmation(ctx context.Context) (*confirm.Details, error) {
	line, dir := inv.args.Command, inv.dir
	if p := sessionFrom(ctx); p != nil {
		st := inv.where(p)
		inv.mu.Lock()
		inv.asked = &st
		inv.mu.Unlock()
		line, dir = st.prefix()+line, st.dir
	}
	a, err := confirm.Analyze(line, dir, inv.s.ws.Roots())
	if err != nil {
		return nil, &tools.Error{Type: tools.ErrInvalidParams, Message: err.Error(), Err: err}
	}
	d := &confirm.Details{
		Type:         confirm.TypeExecute,
		Title:        "Confirm Shell Command",
		Command:      line,
		RootCommands: a.Roots,
		Directory:    dir,
	}
	switch {
	case inv.box == nil:
	case inv.outside:
		d.Sandbox, d.Justification = confirm.SandboxOutside, inv.args.Justification
		// Every front end shows the title, so the model's reason is in it.
		d.Title = "Run outside the sandbox? " + inv.args.Justification
	default:
		d.Sandbox = confirm.SandboxContained
	}
	return d, nil
}

// contained returns the sandbox the command runs in; nil runs it uncontained.
func (inv *runInvocation) contained() *sandbox.Sandbox {
	if inv.outside {
		return nil
	}
	return inv.box
}

// withSandbox adds to a command's result whether it ran contained, and what of a
// failure the sandbox may have caused.
func (inv *runInvocation) withSandbox(res *tools.Result, err error) (*tools.Result, error) {
	box := inv.box
	if box == nil {
		if box = inv.s.box(); box == nil {
			return res, err
		}
	}
	var output string
	if res != nil {
		output = res.Display
	}
	failed := res != nil && res.Summary != "Exit code 0"
	return withNote(res, err, box.Note(inv.outside, failed, output, inv.dir))
}

func (inv *runInvocation) Execute(ctx context.Context, out io.Writer) (*tools.Result, error) {
	switch p := sessionFrom(ctx); {
	case p != nil:
		return inv.withSandbox(inv.executePersistent(ctx, p, out))
	case inv.args.IsBackground:
		return inv.withSandbox(inv.s.startJob(ctx, inv.args.Command, inv.dir, inv.delay, nil, inv.contained()))
	}
	return inv.withSandbox(inv.executeIn(ctx, inv.dir, nil, out))
}

// executeIn runs the command in the foreground in dir; p, when not nil, is how a
// persistent shell runs it.
func (inv *runInvocation) executeIn(ctx context.Context, dir string, p *persistRun, out io.Writer) (*tools.Result, error) {
	// The note says what the command saw, so it is taken before the command runs.
	note := inv.s.unsavedNote()
	res, err := inv.s.run(ctx, inv.args.Command, dir, out, p, inv.contained())
	switch {
	case note == "" || ctx.Err() != nil:
	case err != nil:
		te := tools.AsError(err, tools.ErrShellExecute)
		err = &tools.Error{Type: te.Type, Message: te.Message + "\n\n" + note, Err: te.Err}
	case res != nil:
		res.Output = strings.TrimRight(res.Output, "\n") + "\n\n" + note
	}
	return res, err
}

// executePersistent runs the command in the session's persistent shell p: where the
// last command left it, with the variables earlier commands exported, and records what
// this one leaves. Only the state the Confirmation showed is run in.
func (inv *runInvocation) executePersistent(ctx context.Context, p *Session, out io.Writer) (*tools.Result, error) {
	p.run.Lock()
	defer p.run.Unlock()
	st := inv.where(p)
	inv.mu.Lock()
	asked := inv.asked
	inv.mu.Unlock()
	if asked != nil && !asked.equal(st) {
		return nil, tools.Errorf(tools.ErrStaleContent,
			"The session's shell changed since this command was proposed (an earlier command moved it to %s or changed its variables), so it was not run: "+
				"the command was approved to run as `%s` in %s. Run it again if it is still wanted.",
			inv.s.displayDir(st.dir), asked.prefix()+inv.args.Command, inv.s.displayDir(asked.dir))
	}
	note := p.takeNote()
	base := inv.s.environ()
	env := st.env(base)
	if inv.args.IsBackground {
		res, err := inv.s.startJob(ctx, inv.args.Command, st.dir, inv.delay, env, inv.contained())
		return withNote(res, err, note)
	}
	f, err := os.CreateTemp("", "agentls-shell-state-*")
	if err != nil {
		return nil, tools.Errorf(tools.ErrShellExecute, "creating the persistent shell's state file: %w", err)
	}
	file := f.Name()
	f.Close()
	defer os.Remove(file)
	pers := &persistRun{env: env, trap: stateTrap(file)}
	res, err := inv.executeIn(ctx, st.dir, pers, out)
	switch te := tools.AsError(err, ""); {
	case err == nil:
		note = joinNotes(note, p.capture(inv.s, file, pers.cwd, base, st.dir))
	case te.Type == tools.ErrCancelled:
		p.restart("its last command was cancelled")
	case te.Type == tools.ErrTimeout:
		p.restart("its last command printed nothing for " + inv.s.noOutput.String() + " and was stopped")
	default:
		note = joinNotes(note, p.capture(inv.s, file, pers.cwd, base, st.dir))
	}
	return withNote(res, err, note)
}

// withNote adds note, agentls's own words rather than the command's, after a result.
func withNote(res *tools.Result, err error, note string) (*tools.Result, error) {
	switch {
	case note == "":
	case res != nil:
		res.Output = strings.TrimRight(res.Output, "\n") + "\n\nNote: " + note
	case err != nil:
		te := tools.AsError(err, tools.ErrShellExecute)
		err = &tools.Error{Type: te.Type, Message: te.Message + "\n\nNote: " + note, Err: te.Err}
	}
	return res, err
}

// persistRun is how a persistent shell runs a command: with its environment, and with
// a trap that reports the state the command leaves.
type persistRun struct {
	env  []string
	trap string
	// cwd is set by run: where the shell was when its trap ran (see cwdProbe).
	cwd kernelDir
}

// maxUnsavedListed bounds the files the unsaved-files note names.
const maxUnsavedListed = 20

// unsavedNote is the note on the agent's edits a command does not see, unsaved in the
// editor (Options.NoteUnsaved); "" when there are none.
func (s *Shell) unsavedNote() string {
	if !s.noteUnsaved {
		return ""
	}
	files := s.ws.Unsaved()
	if len(files) == 0 {
		return ""
	}
	more := ""
	if len(files) > maxUnsavedListed {
		more = fmt.Sprintf(" and %d more", len(files)-maxUnsavedListed)
		files = files[:maxUnsavedListed]
	}
	for i, f := range files {
		files[i] = s.ws.Rel(f)
	}
	return fmt.Sprintf("Note: your edits to %s%s are not saved in the editor yet, so this command saw those files "+
		"as they are on disk, without the edits. Ask the user to save them if the command needs them.",
		strings.Join(files, ", "), more)
}

// errClosed is returned for calls after Close.
func errClosed() error {
	return tools.Errorf(tools.ErrExecutionFailed, "the shell has been shut down; no more commands can run")
}

// command returns an unstarted command running line in dir, in a process group of its
// own, contained in box unless box is nil.
// env, when not nil, replaces the environment agentls gives commands.
func (s *Shell) command(line, dir string, env []string, box *sandbox.Sandbox) (*exec.Cmd, error) {
	cmd := exec.Command(s.shell, "-c", line)
	cmd.Dir = dir
	if env == nil {
		env = s.environ()
	}
	// PWD keeps the directory as named, so that pwd in a symlinked directory shows the
	// link rather than where it points.
	cmd.Env = append(slices.Clone(env), "PWD="+dir)
	newGroup(cmd)
	// Stdin stays nil: the command reads /dev/null.
	if box != nil {
		if err := box.Wrap(cmd); err != nil {
			return nil, tools.Errorf(tools.ErrShellExecute, "containing the command: %w", err)
		}
	}
	return cmd, nil
}

// stopReason says why run ended a command's process group.
type stopReason int

const (
	notStopped stopReason = iota
	stopCancelled
	stopTimedOut
)

// run runs line in dir in the foreground, streaming its output to out.
// p, when not nil, runs it as a persistent shell's command.
// box, when not nil, contains it.
func (s *Shell) run(ctx context.Context, line, dir string, out io.Writer, pers *persistRun, box *sandbox.Sandbox) (*tools.Result, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, errClosed()
	}
	if err := ctx.Err(); err != nil {
		return nil, &tools.Error{Type: tools.ErrCancelled, Message: "Command was cancelled before it started.", Err: err}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, tools.Errorf(tools.ErrShellExecute, "creating the output pipe: %w", err)
	}
	growPipe(pr)
	var cmd *exec.Cmd
	var probe *cwdProbe
	if pers != nil {
		cmd, err = s.command(pers.trap+line, dir, pers.env, box)
		if err == nil {
			probe, err = newCwdProbe()
		}
		if err != nil {
			pw.Close()
			pr.Close()
			return nil, tools.AsError(err, tools.ErrShellExecute)
		}
		cmd.ExtraFiles = probe.files()
	} else if cmd, err = s.command(line, dir, nil, box); err != nil {
		pw.Close()
		pr.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	cp := s.checkpoint(ctx, cmd, line, box)
	err = cmd.Start()
	pw.Close() // the command has its own copy; ours would keep the pipe from ending
	if err != nil {
		pr.Close()
		if probe != nil {
			probe.abandon()
		}
		cp.abandon()
		return nil, tools.Errorf(tools.ErrShellExecute, "starting %s: %w", s.shell, err)
	}
	cp.started()
	pgid := cmd.Process.Pid
	if probe != nil {
		// Before anything waits for the shell, so that its /proc entry is its own.
		probe.start(pgid)
	}
	start := time.Now()

	col := newCollector(out, s.outputDir)
	var lastOutput atomic.Int64 // time since start of the latest output
	pumped := make(chan pumpResult, 1)
	go func() { pumped <- pump(pr, col, start, &lastOutput) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var timer <-chan time.Time
	var t *time.Timer
	if s.noOutput > 0 {
		t = time.NewTimer(s.noOutput)
		defer t.Stop()
		timer = t.C
	}
	reason := notStopped
	var waitErr error
wait:
	for {
		select {
		case waitErr = <-exited:
			break wait
		case <-ctx.Done():
			reason = stopCancelled
		case <-timer:
			idle := time.Since(start) - time.Duration(lastOutput.Load())
			if idle < s.noOutput {
				t.Reset(s.noOutput - idle)
				continue
			}
			reason = stopTimedOut
		}
		if err := stopGroup(pgid, s.grace); err != nil {
			slog.Error("shell: stopping a command", "command", line, "pgid", pgid, "err", err)
		}
		waitErr = <-exited
		break wait
	}
	if probe != nil {
		pers.cwd = probe.stop()
	}
	cp.finish()

	var background []int
	if reason == notStopped {
		var err error
		if background, err = groupMembers(pgid); err != nil {
			slog.Warn("shell: looking for background processes", "pgid", pgid, "err", err)
		}
	}
	// Everything the shell wrote is in the pipe now; anything written later comes from
	// processes it left behind, which the result does not wait for.
	if err := pr.SetReadDeadline(time.Unix(1, 0)); err != nil {
		slog.Warn("shell: ending the output read", "err", err)
	}
	p := <-pumped
	if p.open {
		s.drain(pr)
	} else {
		pr.Close()
	}
	o := col.finish(s.textBudget(line, dir))
	if p.err != nil {
		slog.Warn("shell: reading command output", "command", line, "err", p.err)
	}

	switch reason {
	case stopCancelled:
		return nil, &tools.Error{
			Type:    tools.ErrCancelled,
			Message: "Command was cancelled before it could complete. Output before it was cancelled:\n" + tools.MarkUntrusted(o.text()),
			Err:     ctx.Err(),
		}
	case stopTimedOut:
		return nil, tools.Errorf(tools.ErrTimeout,
			"Command printed nothing for %s and was stopped. Output before it was stopped:\n%s", s.noOutput, tools.MarkUntrusted(o.text()))
	}

	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return nil, tools.Errorf(tools.ErrShellExecute, "waiting for %s: %w", s.shell, waitErr)
	}
	st := cmd.ProcessState
	return s.result(line, dir, pgid, st, background, p.err, o), nil
}

// result builds the Result of a finished foreground command.
func (s *Shell) result(line, dir string, pgid int, st *os.ProcessState, background []int, readErr error, o output) *tools.Result {
	exitCode, signal, summary := "(none)", "(none)", ""
	status, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case status.Signaled():
		sig := status.Signal()
		signal = fmt.Sprintf("%d (%s)", int(sig), signalName(sig))
		summary = "Killed by " + signalName(sig)
	default:
		exitCode = strconv.Itoa(st.ExitCode())
		summary = "Exit code " + exitCode
	}
	errText := "(none)"
	if readErr != nil {
		errText = "reading the output failed, so it may be incomplete: " + readErr.Error()
	}
	bg := "(none)"
	if len(background) > 0 {
		ids := make([]string, len(background))
		for i, pid := range background {
			ids[i] = strconv.Itoa(pid)
		}
		bg = strings.Join(ids, ", ")
	}
	text := o.text()
	var b strings.Builder
	fmt.Fprintf(&b, "Command: %s\nDirectory: %s\nOutput: %s\nError: %s\nExit Code: %s\nSignal: %s\nBackground PIDs: %s\nProcess Group PGID: %d",
		line, s.displayDir(dir), text, errText, exitCode, signal, bg, pgid)
	if o.Omitted > 0 {
		summary += fmt.Sprintf(", output shortened (%d characters in %d %s omitted)", o.Omitted, o.OmittedLines, plural(o.OmittedLines, "line", "lines"))
	}
	return &tools.Result{
		Summary: summary,
		// The command's output is the world's, not agentls's or the user's.
		Output:     tools.MarkUntrusted(b.String()),
		Display:    text,
		OutputFile: o.File,
		Problems:   s.problems(text, dir),
	}
}

// The result of a command must reach the model whole, within tools.MaxOutputChars:
// were the scheduler to shorten it again, its cut would hide the note of what the shell
// left out and where the full output is. textBudget is what is left of it for the
// command's output once the other fields of the result are accounted for.
const (
	// resultReserve is kept for what may follow the result: the note on unsaved files
	// (Execute) names at most maxUnsavedListed files.
	resultReserve = 4_000
	// frameAllowance bounds the labels of the result and the fields besides the command,
	// the directory and the output (error, exit code, signal, PIDs).
	frameAllowance = 1_000
	// minTextBudget is the least a command's output is given however long the command
	// line; the scheduler shortens such a result once more.
	minTextBudget = 4_000
)

// textBudget is the number of characters the output of line, run in dir, may take in
// its result.
func (s *Shell) textBudget(line, dir string) int {
	n := tools.MaxOutputChars - resultReserve - frameAllowance -
		utf8.RuneCountInString(line) - utf8.RuneCountInString(s.displayDir(dir))
	return max(n, minTextBudget)
}

// text is the output as the model sees it: "(empty)", the whole text, or its head and
// tail with a note of what was left out and where the whole is.
func (o output) text() string {
	if o.Omitted == 0 {
		if strings.TrimSpace(o.Head) == "" {
			return "(empty)"
		}
		return strings.TrimRight(o.Head, "\n")
	}
	var where string
	if o.File != "" {
		where = fmt.Sprintf("The full output (%d bytes as printed) is saved in %s; search or page through it with grep, head, tail or sed -n.", o.RawBytes, o.File)
	} else {
		where = fmt.Sprintf("The full output (%d bytes as printed) could not be saved: %v.", o.RawBytes, o.FileErr)
	}
	head := o.Head
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return fmt.Sprintf("%s\n[... %d of %d characters and %d of %d %s omitted here. %s ...]\n\n%s",
		head, o.Omitted, o.Chars, o.OmittedLines, o.Lines, plural(o.Lines, "line", "lines"), where, strings.TrimRight(o.Tail, "\n"))
}

// pipeSize is the capacity asked for the output pipe. A larger pipe than the default
// 64 KiB lets a fast command run ahead while the output is being processed, rather than
// wait for every read.
const pipeSize = 1 << 20

// pumpResult is how pump ended.
type pumpResult struct {
	// open reports that the pipe still has writers: processes the command left behind.
	open bool
	err  error
}

// pump reads a command's output pipe into col until the pipe ends or its read deadline
// passes; then it reads what is left in the pipe without waiting for more.
func pump(pr *os.File, col *collector, start time.Time, last *atomic.Int64) pumpResult {
	buf := make([]byte, 64<<10)
	for {
		n, err := pr.Read(buf)
		if n > 0 {
			last.Store(int64(time.Since(start)))
			col.write(buf[:n])
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return pumpResult{}
		case errors.Is(err, os.ErrDeadlineExceeded):
			return drainBuffered(pr, col, buf)
		default:
			return pumpResult{err: err}
		}
	}
}

// drainBuffered reads what is in the pipe now, without waiting for more, and reports
// whether the pipe still has writers.
func drainBuffered(pr *os.File, col *collector, buf []byte) pumpResult {
	if err := pr.SetReadDeadline(time.Time{}); err != nil {
		return pumpResult{err: err}
	}
	rc, err := pr.SyscallConn()
	if err != nil {
		return pumpResult{err: err}
	}
	for {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = readFD(fd, buf)
			return true // one attempt: never wait for more
		}); err != nil {
			return pumpResult{err: err}
		}
		switch {
		case n > 0:
			col.write(buf[:n])
		case rerr == nil:
			return pumpResult{} // end of the pipe
		case errors.Is(rerr, syscall.EINTR):
		case errors.Is(rerr, syscall.EAGAIN):
			return pumpResult{open: true}
		default:
			return pumpResult{err: rerr}
		}
	}
}

// Capabilities implements tools.Invocation.
func (inv *runInvocation) Capabilities() tools.Capabilities {
	// A line that cannot be parsed is refused by Confirmation; nothing to order.
	a, err := confirm.Analyze(inv.args.Command, inv.dir, inv.s.ws.Roots())
	return tools.Capabilities{Command: inv.args.Command, Reshapes: err == nil && a.Reshapes}
}
