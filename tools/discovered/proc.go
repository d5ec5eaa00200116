package discovered

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/agentls/agentls/sandbox"
)

// runSpec says how to run one process.
type runSpec struct {
	argv []string
	dir  string
	env  []string
	// stdin is the process's standard input; nil means /dev/null.
	stdin []byte
	// timeout bounds the run; 0 or less means no bound.
	timeout time.Duration
	// limit is how many bytes of each output stream are kept.
	limit int64
	// stopOnOverflow stops the process when its standard output passes limit.
	stopOnOverflow bool
	// grace is how long the process group has between SIGTERM and SIGKILL.
	grace time.Duration
	// box, when not nil, contains the process.
	box *sandbox.Sandbox
}

// stopReason says why run stopped a process, if it did.
type stopReason int

const (
	notStopped stopReason = iota
	stopCancelled
	stopTimedOut
	stopOverflow
)

// runResult is how a process ended and what it wrote.
type runResult struct {
	stdout, stderr *capture
	state          *os.ProcessState
	stopped        stopReason
	// readErr is a failure to read an output stream, which may then be incomplete.
	readErr error
}

// signal returns the signal that ended the process, if one did.
func (r *runResult) signal() (syscall.Signal, bool) {
	ws, ok := r.state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return ws.Signal(), true
}

// drainWait bounds how long output is still read after a process group has ended: a
// process that left the group (a daemon calling setsid, say) may hold the pipes open.
const drainWait = 2 * time.Second

// run runs spec.argv in a process group of its own and waits for it to end. When ctx is
// done, the timeout passes or (with stopOnOverflow) the standard output passes the
// limit, the group gets SIGTERM and, if the process has not exited after the grace
// period, SIGKILL. Once the process has exited, whatever it left running in its group
// is killed. An error means the process could not be run at all. The caller checks
// that ctx is not done yet.
func run(ctx context.Context, spec runSpec) (*runResult, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the output pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("creating the error pipe: %w", err)
	}
	cmd, err := start(ctx, spec, outW, errW)
	// The process has its own copies of the write ends; ours would keep the pipes from
	// ever ending.
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("starting %s: %w", spec.argv[0], err)
	}
	pid := cmd.Process.Pid

	r := &runResult{
		stdout: newCapture(spec.limit, spec.stopOnOverflow),
		stderr: newCapture(spec.limit, false),
	}
	var readErrs [2]error
	var readers sync.WaitGroup
	readers.Go(func() { readErrs[0] = r.stdout.readFrom(outR) })
	readers.Go(func() { readErrs[1] = r.stderr.readFrom(errR) })

	exited := make(chan error, 1)
	go func() { exited <- waitExited(pid) }()

	var timeout <-chan time.Time
	if spec.timeout > 0 {
		t := time.NewTimer(spec.timeout)
		defer t.Stop()
		timeout = t.C
	}
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-ctx.Done():
		r.stopped = stopCancelled
	case <-timeout:
		r.stopped = stopTimedOut
	case <-r.stdout.overflow:
		r.stopped = stopOverflow
	}
	if r.stopped != notStopped {
		waitErr = stop(pid, spec.grace, exited)
	}
	// The leader has exited but is not reaped yet, so pid still names its group and no
	// other process can have been given that number: the group may be signalled safely.
	// What is left of it is what the command left behind.
	if err := signalGroup(pid, syscall.SIGKILL); err != nil && waitErr == nil {
		waitErr = err
	}

	deadline := time.Now().Add(drainWait)
	var deadlineErrs [2]error
	for i, f := range []*os.File{outR, errR} {
		deadlineErrs[i] = f.SetReadDeadline(deadline)
	}
	readers.Wait()
	outR.Close()
	errR.Close()
	r.readErr = errors.Join(readErrs[0], readErrs[1], deadlineErrs[0], deadlineErrs[1])

	err = cmd.Wait() // reaps the leader
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		waitErr = errors.Join(waitErr, err)
	}
	r.state = cmd.ProcessState
	if r.state == nil {
		return nil, fmt.Errorf("waiting for %s: %w", spec.argv[0], errors.Join(waitErr, err))
	}
	if waitErr != nil {
		return nil, fmt.Errorf("waiting for %s: %w", spec.argv[0], waitErr)
	}
	return r, nil
}

// start starts the process of spec writing to stdout and stderr. A program that is
// still open for writing somewhere (ETXTBSY) is tried again a few times: a process
// forked by another goroutine of agentls inherits, until it execs, every file agentls
// has open, so a script agentls has just written can be busy for a moment.
func start(ctx context.Context, spec runSpec, stdout, stderr *os.File) (*exec.Cmd, error) {
	delay := 5 * time.Millisecond
	for attempt := 1; ; attempt++ {
		cmd := exec.Command(spec.argv[0], spec.argv[1:]...)
		cmd.Dir = spec.dir
		cmd.Env = spec.env
		newGroup(cmd)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if spec.stdin != nil {
			cmd.Stdin = bytes.NewReader(spec.stdin)
		}
		// Wait waits for the copy into standard input; a process that left the group
		// could hold that pipe open for ever.
		cmd.WaitDelay = drainWait
		if spec.box != nil {
			if err := spec.box.Wrap(cmd); err != nil {
				return cmd, fmt.Errorf("containing %s: %w", spec.argv[0], err)
			}
		}
		err := cmd.Start()
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || attempt == startAttempts {
			return cmd, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return cmd, err
		case <-t.C:
		}
		delay *= 2
	}
}

// startAttempts is how often start tries a busy program: over about 300 ms in all.
const startAttempts = 7

// stop ends the process group led by pid: SIGTERM, then SIGKILL if the leader has not
// exited after grace. It returns once the leader has exited, with what waitExited
// reported.
func stop(pid int, grace time.Duration, exited <-chan error) error {
	if err := signalGroup(pid, syscall.SIGTERM); err != nil {
		return err
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-exited:
		return err
	case <-t.C:
	}
	if err := signalGroup(pid, syscall.SIGKILL); err != nil {
		return err
	}
	return <-exited
}

// capture keeps the first limit bytes of a stream and counts the rest.
type capture struct {
	limit int64
	buf   []byte
	n     int64 // bytes read in all
	// overflow is closed when more than limit bytes have been read, if the capture was
	// made to report that; otherwise it is nil.
	overflow chan struct{}
}

func newCapture(limit int64, reportOverflow bool) *capture {
	c := &capture{limit: limit}
	if reportOverflow {
		c.overflow = make(chan struct{})
	}
	return c
}

// readFrom reads r to its end, or until its read deadline passes, which is not an
// error: what the process left running may write on for ever.
func (c *capture) readFrom(r io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.write(buf[:n])
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, os.ErrDeadlineExceeded):
			return nil
		default:
			return err
		}
	}
}

func (c *capture) write(p []byte) {
	before := c.n
	c.n += int64(len(p))
	if keep := c.limit - int64(len(c.buf)); keep > 0 {
		c.buf = append(c.buf, p[:min(int64(len(p)), keep)]...)
	}
	if c.overflow != nil && before <= c.limit && c.n > c.limit {
		close(c.overflow)
	}
}

// bytes returns what was kept. It must not be called before reading has ended.
func (c *capture) bytes() []byte { return c.buf }

// cut reports how many bytes were read but not kept.
func (c *capture) cut() int64 { return c.n - int64(len(c.buf)) }
