// Package shell is the built-in shell tool of agentls, run_shell_command as Gemini CLI
// declares it, with its companions list_background_processes and
// read_background_output.
//
// Every command runs as bash -c COMMAND in a process group of its own, with standard
// input from /dev/null and standard output and error merged in the order they arrive.
// Output streams to the live writer as it comes, and only a bounded head and tail of it
// is kept in memory; the complete output of a long run is saved to a file. Cancelling a
// call, or a command that prints nothing for too long, ends the whole group: SIGTERM,
// then SIGKILL.
package shell

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Options configures a Shell. The zero value is usable.
type Options struct {
	// NoOutputTimeout stops a command that prints nothing for this long; the call fails
	// with a timeout error. 0 means 5 minutes; a negative value means never.
	NoOutputTimeout time.Duration
	// Shell is the program run as SHELL -c COMMAND; default "bash".
	Shell string
	// Env holds extra environment entries (KEY=value) for every command, after the
	// ones agentls sets.
	Env []string
	// HideEnv, when set, names variables of agentls's own environment that commands do
	// not inherit: the secrets agentls itself uses (the model's API key, the tokens its
	// MCP servers are sent), which a command the model writes has no business reading.
	// It is called for every command, foreground or background, so that changed settings
	// apply from the next one. Env is not filtered: what it sets was set on purpose.
	HideEnv func() []string
	// OutputDir is where the full output of long runs and the output of background
	// jobs are kept; "" means os.TempDir()/agentls-output.
	OutputDir string
	// NoteUnsaved says that the front end's editor may leave the agent's edits in its
	// buffers unsaved: a command's result then names the edited files that are still
	// unsaved (workspace.Unsaved), which the command saw without the edits.
	NoteUnsaved bool
	// Sandbox, when set, returns the sandbox commands run in, called for every
	// command so that changed settings apply from the next one; nil (or a nil result)
	// runs commands uncontained.
	Sandbox func() *sandbox.Sandbox
}

// defaultNoOutputTimeout is the no-output timeout when Options leaves it zero.
const defaultNoOutputTimeout = 5 * time.Minute

// defaultGrace is how long a process group has to exit after SIGTERM before SIGKILL.
const defaultGrace = 2 * time.Second

// Shell runs shell commands in a workspace and keeps the background jobs they start. It
// is safe for concurrent use.
type Shell struct {
	ws          *workspace.Workspace
	noteUnsaved bool // Options.NoteUnsaved
	shell       string
	env         []string
	hideEnv     func() []string
	sandbox     func() *sandbox.Sandbox
	outputDir   string
	noOutput    time.Duration
	grace       time.Duration

	mu     sync.Mutex
	closed bool
	jobs   []*job
	nextID int
	// drains are the read ends of pipes of finished commands that processes they left
	// behind still write to; they are read and discarded so those processes never see
	// a broken pipe.
	drains  map[*os.File]struct{}
	drainWG sync.WaitGroup
}

// New returns a Shell running commands in ws.
func New(ws *workspace.Workspace, opts Options) *Shell {
	s := &Shell{
		ws:          ws,
		shell:       opts.Shell,
		env:         append([]string(nil), opts.Env...),
		hideEnv:     opts.HideEnv,
		sandbox:     opts.Sandbox,
		outputDir:   opts.OutputDir,
		noOutput:    opts.NoOutputTimeout,
		noteUnsaved: opts.NoteUnsaved,
		grace:       defaultGrace,
		drains:      make(map[*os.File]struct{}),
	}
	if s.shell == "" {
		s.shell = "bash"
	}
	if s.outputDir == "" {
		s.outputDir = filepath.Join(os.TempDir(), "agentls-output")
	}
	if s.noOutput == 0 {
		s.noOutput = defaultNoOutputTimeout
	}
	return s
}

// Tools returns run_shell_command, list_background_processes and
// read_background_output.
func (s *Shell) Tools() []tools.Tool {
	return []tools.Tool{runTool{s}, listTool{s}, readTool{s}}
}

// Close stops every background job: SIGTERM to its process group, then SIGKILL to what
// is left after a grace period. It waits until they are gone. Commands running in the
// foreground end with their call's context, not with Close. After Close, the shell
// refuses new commands.
func (s *Shell) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	jobs := append([]*job(nil), s.jobs...)
	s.mu.Unlock()

	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			if err := stopGroup(j.pgid, s.grace); err != nil {
				errs[i] = fmt.Errorf("stopping background job %s: %w", j.id, err)
			}
			<-j.done
		})
	}
	wg.Wait()

	s.mu.Lock()
	for f := range s.drains {
		// Whoever still writes there was started by a foreground command and left
		// running; with the shell gone, nobody will read their output.
		if err := f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing an output pipe: %w", err))
		}
	}
	s.mu.Unlock()
	s.drainWG.Wait()
	return errors.Join(errs...)
}

// environ returns the environment of a command: agentls's own without the hidden
// variables, then the entries agentls sets, then Options.Env.
func (s *Shell) environ() []string {
	var hide []string
	if s.hideEnv != nil {
		hide = s.hideEnv()
	}
	return append(Environ(hide), s.env...)
}

// Environ returns the environment run_shell_command gives a command: agentls's own
// without the variables hide names, with the entries agentls sets. The user's hooks
// start from it too.
func Environ(hide []string) []string {
	env := tools.Environ(hide)
	return append(env, "AGENTLS=1", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
}

// drain reads and discards what is still written to the read end of a finished
// command's pipe, until every writer has gone or the shell is closed.
func (s *Shell) drain(f *os.File) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = f.Close() // nothing will read it; writers get EPIPE as they would anyway
		return
	}
	s.drains[f] = struct{}{}
	s.drainWG.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.drainWG.Done()
		buf := make([]byte, 32<<10)
		for {
			if _, err := f.Read(buf); err != nil {
				break // EOF, or closed by Close
			}
		}
		s.mu.Lock()
		if _, ok := s.drains[f]; ok {
			delete(s.drains, f)
			_ = f.Close() // read end of a pipe at EOF: nothing to report
		}
		s.mu.Unlock()
	}()
}

// box returns the sandbox commands run in now; nil runs them uncontained.
func (s *Shell) box() *sandbox.Sandbox {
	if s.sandbox == nil {
		return nil
	}
	return s.sandbox()
}
