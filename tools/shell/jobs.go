package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentls/agentls/checkpoint"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/tools"
)

// noParamsSchema is the parameter schema of struct{}, generated once, when first asked for.
var noParamsSchema = tools.ParametersOnce[struct{}](false)

// readArgsSchema is the parameter schema of readArgs, generated once, when first asked for.
var readArgsSchema = tools.ParametersOnce[readArgs](false)

// The names of the background companions of run_shell_command, as in Gemini CLI.
const (
	ListToolName = "list_background_processes"
	ReadToolName = "read_background_output"
)

// job is a command started with is_background.
type job struct {
	id      string
	pgid    int // also the PID of the shell running the command
	command string
	dir     string
	started time.Time
	file    string // where its output goes
	done    chan struct{}

	mu    sync.Mutex
	state *os.ProcessState // set once it has exited
	err   error            // set if waiting for it failed
}

// status is "running", "exited N", "killed by SIGNAL" or "unknown (why)".
func (j *job) status() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.err != nil:
		return "unknown (" + j.err.Error() + ")"
	case j.state == nil:
		return "running"
	}
	if ws, ok := j.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by " + signalName(ws.Signal())
	}
	return "exited " + strconv.Itoa(j.state.ExitCode())
}

// defaultBackgroundDelay is how long a background command runs before the call
// returns when delay_ms is not given: Gemini CLI's 200 ms, enough to catch a command
// that fails at once.
const defaultBackgroundDelay = 200 * time.Millisecond

// maxDelayMS bounds the delay_ms of run_shell_command and read_background_output (ten
// minutes): a call that waits longer holds up its turn for nothing that
// read_background_output cannot show later, and a larger value would overflow a
// time.Duration into a negative one.
const maxDelayMS = 600_000

// delayArg turns a delay_ms argument into a duration, refusing one out of range.
func delayArg(ms int) (time.Duration, error) {
	if ms < 0 || ms > maxDelayMS {
		return 0, tools.Errorf(tools.ErrInvalidParams, "delay_ms must be between 0 and %d (ten minutes), not %d; to look at a command's output later, call read_background_output", maxDelayMS, ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// startJob starts line in dir in the background, its output going to a file, and waits
// up to delay (as Gemini CLI does) for its early output: a command that ends within
// delay is reported as a finished one, with its output and exit code; one still
// running is reported with the output it wrote so far. Either way it stays a job that
// list_background_processes lists. env, when not nil, replaces the environment agentls
// gives commands.
// box, when not nil, contains it.
func (s *Shell) startJob(ctx context.Context, line, dir string, delay time.Duration, env []string, box *sandbox.Sandbox) (*tools.Result, error) {
	if err := os.MkdirAll(s.outputDir, 0o700); err != nil {
		return nil, tools.FileError(fmt.Errorf("creating the output directory: %w", err))
	}
	f, err := os.CreateTemp(s.outputDir, "job-*.log")
	if err != nil {
		return nil, tools.FileError(fmt.Errorf("creating the output file: %w", err))
	}
	cmd, err := s.command(line, dir, env, box)
	if err != nil {
		return nil, removeUnused(f, err)
	}
	if rec := checkpoint.RecorderFrom(ctx); rec != nil {
		// It outlives the call, whose checkpoint ends with it.
		rec.Unrecorded(line, "it runs in the background, where its changes are not watched")
	}
	cmd.Stdout, cmd.Stderr = f, f

	// Starting under the lock means Close either sees the job or refuses it.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, removeUnused(f, errClosed())
	}
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		return nil, removeUnused(f, tools.Errorf(tools.ErrShellExecute, "starting %s: %w", s.shell, err))
	}
	s.nextID++
	j := &job{
		id:      "bg" + strconv.Itoa(s.nextID),
		pgid:    cmd.Process.Pid,
		command: line,
		dir:     dir,
		started: time.Now(),
		file:    f.Name(),
		done:    make(chan struct{}),
	}
	s.jobs = append(s.jobs, j)
	s.mu.Unlock()

	closeErr := f.Close() // the command writes through its own descriptor
	go func() {
		err := cmd.Wait()
		j.mu.Lock()
		j.state = cmd.ProcessState
		if j.state == nil {
			j.err = err
		}
		j.mu.Unlock()
		close(j.done)
	}()
	if closeErr != nil {
		return nil, tools.Errorf(tools.ErrShellExecute, "background job %s (PID %d) started, but: %w", j.id, j.pgid, closeErr)
	}

	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-j.done:
			t.Stop()
			return s.finishedJob(j, delay)
		case <-ctx.Done():
			// The job runs on, as it would have without a delay.
			t.Stop()
		case <-t.C:
		}
	}
	out := fmt.Sprintf("Command: %s\nDirectory: %s\nOutput: (running in the background)\nError: (none)\nExit Code: (none)\nSignal: (none)\nBackground PIDs: %d\nProcess Group PGID: %d\n\n"+
		"The command is running in the background as job %s (PID %d). Use %s with pid %d to see its latest output and %s to see whether it is still running. Its output goes to %s.",
		line, s.displayDir(dir), j.pgid, j.pgid, j.id, j.pgid, ReadToolName, j.pgid, ListToolName, j.file)
	if delay > 0 {
		// The job runs whether or not its early output can be read, so a failure to
		// read it is told, not made the call's error.
		switch early, err := jobOutput(j); {
		case err != nil:
			out += fmt.Sprintf("\n\nIts output in its first %s could not be read: %v", delay, err)
		case early != "":
			out += fmt.Sprintf("\n\nOutput in its first %s:\n%s", delay, tools.MarkUntrusted(early))
		}
	}
	return &tools.Result{
		Summary: fmt.Sprintf("Started in the background as %s (PID %d)", j.id, j.pgid),
		Output:  out,
		Display: fmt.Sprintf("Running in the background as %s (PID %d); output in %s", j.id, j.pgid, j.file),
	}, nil
}

// jobOutput returns the end of a job's output that fits the model's output budget,
// cleaned for the model.
func jobOutput(j *job) (string, error) {
	data, cut, err := readEnd(j.file, tools.MaxOutputChars-backgroundHeaderRoom)
	if err != nil {
		return "", err
	}
	text := strings.TrimRight(cleanText(data), "\n")
	if cut {
		text = "[… earlier output left out; the whole is in " + j.file + "]\n" + text
	}
	return text, nil
}

// finishedJob is the result of a background command that ended within its delay.
func (s *Shell) finishedJob(j *job, delay time.Duration) (*tools.Result, error) {
	text, err := jobOutput(j)
	if err != nil {
		return nil, tools.FileError(fmt.Errorf("reading the output of %s: %w", j.id, err))
	}
	output, code, signal, errLine := "(empty)", "(none)", "(none)", "(none)"
	if text != "" {
		output = text
	}
	j.mu.Lock()
	switch {
	case j.err != nil:
		errLine = j.err.Error()
	case j.state != nil:
		if ws, ok := j.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			signal = fmt.Sprintf("%d (%s)", int(ws.Signal()), signalName(ws.Signal()))
		} else {
			code = strconv.Itoa(j.state.ExitCode())
		}
	}
	j.mu.Unlock()
	// As for a foreground command, the block with the command's output is the
	// world's, not agentls's or the user's.
	block := fmt.Sprintf("Command: %s\nDirectory: %s\nOutput: %s\nError: %s\nExit Code: %s\nSignal: %s\nBackground PIDs: (none)\nProcess Group PGID: %d",
		j.command, s.displayDir(j.dir), output, errLine, code, signal, j.pgid)
	out := tools.MarkUntrusted(block) + fmt.Sprintf("\n\nThe command, started in the background as job %s (PID %d), finished within %s. Its output is also in %s.",
		j.id, j.pgid, delay, j.file)
	return &tools.Result{
		Summary: fmt.Sprintf("Finished within %s: %s", delay, j.status()),
		Output:  out,
		Display: output,
	}, nil
}

// removeUnused removes the output file of a job that did not start and returns err,
// with any failure to remove the file joined.
func removeUnused(f *os.File, err error) error {
	f.Close()
	if rmErr := os.Remove(f.Name()); rmErr != nil {
		return fmt.Errorf("%w (and removing %s failed: %v)", err, f.Name(), rmErr)
	}
	return err
}

// hasJobs reports whether a background job was ever started.
func (s *Shell) hasJobs() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.jobs) > 0
}

// snapshot returns the jobs started so far, oldest first.
func (s *Shell) snapshot() []*job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*job(nil), s.jobs...)
}

// list_background_processes

type listTool struct{ s *Shell }

func (t listTool) Info() tools.Info {
	return tools.Info{
		Name:        ListToolName,
		DisplayName: "List Background Processes",
		Description: "Lists the background commands, running or finished: job id, PID, command, status and start time.",
		Kind:        tools.KindRead,
		Source:      tools.SourceBuiltin,
		Parameters:  noParamsSchema(),
		Idempotent:  true,
	}
}

// Offered reports whether a background command was started: until then there is
// nothing to list.
func (t listTool) Offered(tools.Situation) bool { return t.s.hasJobs() }

func (t listTool) Build(json.RawMessage) (tools.Invocation, error) {
	return listInvocation(t), nil
}

type listInvocation struct{ s *Shell }

func (listInvocation) Describe() string            { return "List background processes" }
func (listInvocation) Locations() []tools.Location { return nil }
func (listInvocation) Confirmation(context.Context) (*confirm.Details, error) {
	return nil, nil
}

func (inv listInvocation) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	jobs := inv.s.snapshot()
	if len(jobs) == 0 {
		return &tools.Result{Summary: "No background processes", Output: "No background processes found."}, nil
	}
	var b strings.Builder
	running := 0
	for i, j := range jobs {
		if i > 0 {
			b.WriteByte('\n')
		}
		st := j.status()
		var label, detail string
		switch {
		case st == "running":
			label = "RUNNING"
			running++
		case strings.HasPrefix(st, "exited "):
			label, detail = "EXITED", " (Exit Code: "+strings.TrimPrefix(st, "exited ")+")"
		case strings.HasPrefix(st, "killed by "):
			label, detail = "KILLED", " (Signal: "+strings.TrimPrefix(st, "killed by ")+")"
		default:
			label, detail = "UNKNOWN", " ("+st+")"
		}
		fmt.Fprintf(&b, "- [PID %d] %s: `%s`%s (id: %s, started %s", j.pgid, label, j.command, detail, j.id, j.started.Format(time.RFC3339))
		if label != "RUNNING" {
			// The shell has exited, but what it started in its group may live on.
			if left, err := groupMembers(j.pgid); err == nil && len(left) > 0 {
				fmt.Fprintf(&b, "; %d process(es) of its group still running", len(left))
			}
		}
		b.WriteByte(')')
	}
	return &tools.Result{
		Summary: fmt.Sprintf("%d background process(es), %d running", len(jobs), running),
		Output:  b.String(),
	}, nil
}

// read_background_output

// readTail bounds how much of the end of a job's output file is read.
const readTail = 256 << 10

// defaultLines is how many lines read_background_output returns by default.
const defaultLines = 100

type readTool struct{ s *Shell }

func (t readTool) Info() tools.Info {
	return tools.Info{
		Name:        ReadToolName,
		DisplayName: "Read Background Output",
		Description: "Reads the last lines of a background command's output (stdout and stderr together), by pid or job id.",
		Kind:        tools.KindRead,
		Source:      tools.SourceBuiltin,
		Parameters:  readArgsSchema(),
		Idempotent:  true,
	}
}

type readArgs struct {
	PID     *int   `json:"pid,omitempty" jsonschema:"The process's PID."`
	ID      string `json:"id,omitempty" jsonschema:"The job id, instead of pid."`
	Lines   *int   `json:"lines,omitempty" jsonschema:"How many lines (default 100)." schema:"minimum=1"`
	DelayMS int    `json:"delay_ms,omitempty" jsonschema:"Milliseconds to wait before reading." schema:"minimum=0,maximum=600000"`
}

// Offered reports whether a background command was started: until then there is
// nothing to read.
func (t readTool) Offered(tools.Situation) bool { return t.s.hasJobs() }

func (t readTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var a readArgs
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	if a.PID == nil && a.ID == "" {
		return nil, tools.Errorf(tools.ErrInvalidParams, "give pid or id of the background process to read%s", known(t.s.snapshot()))
	}
	lines := defaultLines
	if a.Lines != nil {
		if *a.Lines < 1 {
			return nil, tools.Errorf(tools.ErrInvalidParams, "lines must be at least 1, not %d", *a.Lines)
		}
		lines = *a.Lines
	}
	delay, err := delayArg(a.DelayMS)
	if err != nil {
		return nil, err
	}
	jobs := t.s.snapshot()
	for _, j := range jobs {
		if (a.PID == nil || *a.PID == j.pgid) && (a.ID == "" || a.ID == j.id) {
			return &readInvocation{j: j, lines: lines, delay: delay}, nil
		}
	}
	var which string
	switch {
	case a.PID != nil && a.ID != "":
		which = fmt.Sprintf("with pid %d and id %q", *a.PID, a.ID)
	case a.PID != nil:
		which = fmt.Sprintf("with pid %d", *a.PID)
	default:
		which = fmt.Sprintf("with id %q", a.ID)
	}
	return nil, tools.Errorf(tools.ErrInvalidParams, "no background process %s%s", which, known(jobs))
}

// known lists the jobs for an error message.
func known(jobs []*job) string {
	if len(jobs) == 0 {
		return "; no background processes have been started (run_shell_command with is_background starts one)"
	}
	parts := make([]string, len(jobs))
	for i, j := range jobs {
		parts[i] = fmt.Sprintf("%s (pid %d, %s)", j.id, j.pgid, j.status())
	}
	return "; known background processes: " + strings.Join(parts, ", ")
}

type readInvocation struct {
	j     *job
	lines int
	delay time.Duration
}

func (inv *readInvocation) Describe() string {
	return fmt.Sprintf("Read the output of background process %d (%s)", inv.j.pgid, inv.j.id)
}
func (inv *readInvocation) Locations() []tools.Location { return nil }
func (inv *readInvocation) Confirmation(context.Context) (*confirm.Details, error) {
	return nil, nil
}

func (inv *readInvocation) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if inv.delay > 0 {
		t := time.NewTimer(inv.delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	j := inv.j
	data, cut, err := readEnd(j.file, readTail)
	if err != nil {
		return nil, tools.FileError(fmt.Errorf("reading the output of %s: %w", j.id, err))
	}
	what := fmt.Sprintf("job %s (PID %d, %s)", j.id, j.pgid, j.status())
	lines := strings.Split(cleanText(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if cut && len(lines) > 0 {
		lines = lines[1:] // it starts inside a line
	}
	if len(lines) == 0 {
		return &tools.Result{Summary: "No output yet", Output: fmt.Sprintf("The output of %s is empty so far.", what)}, nil
	}
	n := min(inv.lines, len(lines))
	shown := lines[len(lines)-n:]
	// Keep the answer, header included, within the model's output budget, dropping the
	// oldest lines, so that the scheduler does not shorten it again.
	size := 0
	for i := len(shown) - 1; i >= 0; i-- {
		size += len(shown[i]) + 1
		if size > tools.MaxOutputChars-backgroundHeaderRoom {
			shown = shown[i+1:]
			break
		}
	}
	var header string
	switch {
	case len(shown) < len(lines) || cut:
		header = fmt.Sprintf("Showing the last %d lines of the output of %s:", len(shown), what)
	default:
		header = fmt.Sprintf("Full output of %s:", what)
	}
	text := strings.Join(shown, "\n")
	return &tools.Result{
		Summary: fmt.Sprintf("%d lines", len(shown)),
		Output:  header + "\n" + tools.MarkUntrusted(text),
		Display: text,
	}, nil
}

// backgroundHeaderRoom is kept within tools.MaxOutputChars for the header of
// read_background_output's answer.
const backgroundHeaderRoom = 1_000

// readEnd returns at most limit bytes from the end of the file name, and whether that
// is less than the whole file.
func readEnd(name string, limit int64) ([]byte, bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	off := max(fi.Size()-limit, 0)
	buf := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	return buf[:n], off > 0, nil
}

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (listInvocation) Capabilities() tools.Capabilities { return tools.Capabilities{} }

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*readInvocation) Capabilities() tools.Capabilities { return tools.Capabilities{} }
