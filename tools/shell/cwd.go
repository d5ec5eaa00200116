package shell

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

// kernelDir is a persistent shell's working directory as the kernel knew it while the
// shell's EXIT trap ran.
type kernelDir struct {
	known bool
	// gone is set when the directory had been removed: the kernel still knows it, by
	// the name it had.
	gone bool
	// path is /proc/PID/cwd's target: the directory's absolute path, without links.
	path string
	// dev and ino name the directory itself, so that a path that names another
	// directory by the time it is used is not taken for it.
	dev, ino uint64
}

// cwdProbe learns where a persistent shell's command left the shell from the kernel
// rather than from anything the command can write. The shell gets two pipes: when its
// EXIT trap runs it writes a byte to the first and waits for a byte back on the second,
// and in between agentls reads /proc/PID/cwd of the shell. The command could write the
// byte itself, earlier, or from a child; agentls then reads the shell's directory at
// that moment, which is still a directory the shell really was in, not a string the
// command chose. The last reading before the shell exits counts.
type cwdProbe struct {
	syncR, syncW *os.File // the trap's byte: the shell writes, agentls reads
	ackR, ackW   *os.File // agentls's answer
	proc         *os.File // /proc/PID of the shell, opened before it can be reaped
	done         chan struct{}

	mu  sync.Mutex
	dir kernelDir
}

// newCwdProbe returns a probe whose pipes are to be given to the shell as descriptors 3
// and 4 (files).
func newCwdProbe() (*cwdProbe, error) {
	syncR, syncW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the shell's exit pipe: %w", err)
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		syncR.Close()
		syncW.Close()
		return nil, fmt.Errorf("creating the shell's exit pipe: %w", err)
	}
	return &cwdProbe{syncR: syncR, syncW: syncW, ackR: ackR, ackW: ackW, done: make(chan struct{})}, nil
}

// files are the shell's ends, in descriptor order from 3 (exec.Cmd.ExtraFiles).
func (w *cwdProbe) files() []*os.File { return []*os.File{w.syncW, w.ackR} }

// start watches the shell pid, which must be agentls's child and not yet waited for,
// so that /proc/PID is the shell's and no later process's of the same number: the
// directory is opened now and keeps naming that process only.
func (w *cwdProbe) start(pid int) {
	w.syncW.Close()
	w.ackR.Close()
	// Without /proc/PID the directory stays unknown, and the session keeps its state;
	// the trap is still answered, so that the shell does not wait for ever.
	if proc, err := os.Open("/proc/" + strconv.Itoa(pid)); err == nil {
		w.proc = proc
	}
	go func() {
		defer close(w.done)
		b := make([]byte, 1)
		for {
			if _, err := w.syncR.Read(b); err != nil {
				return // the shell and all its children are gone, or stop closed it
			}
			if d, ok := w.read(); ok {
				w.mu.Lock()
				w.dir = d
				w.mu.Unlock()
			}
			if _, err := w.ackW.Write(b); err != nil {
				return
			}
		}
	}()
}

// stop ends the watch, once the shell has exited, and returns the last directory
// read; children the command left behind may still hold the shell's ends of the pipes,
// so they are not waited for.
func (w *cwdProbe) stop() kernelDir {
	w.syncR.Close()
	w.ackW.Close()
	<-w.done
	if w.proc != nil {
		w.proc.Close()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dir
}

// abandon closes every end of a probe whose shell never started.
func (w *cwdProbe) abandon() {
	for _, f := range []*os.File{w.syncR, w.syncW, w.ackR, w.ackW} {
		f.Close()
	}
}
