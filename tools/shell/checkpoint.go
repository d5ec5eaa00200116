package shell

import (
	"context"
	"os/exec"

	"github.com/agentls/agentls/checkpoint"
	"github.com/agentls/agentls/sandbox"
)

// checkpointRun is the checkpoint of one foreground command: what it changes in the
// workspace, recorded by the Recorder of the call's context (the session's), so that
// the turn can be undone. A nil one records nothing.
type checkpointRun struct {
	rec   *checkpoint.Recorder
	line  string
	watch *sandbox.Watch
	cmd   *checkpoint.Command
}

// checkpoint prepares cmd, not yet started, to be recorded; nil when the call's
// context has no Recorder. A command that cannot be watched (outside the sandbox, on a
// machine without one) is recorded as unrecorded, with why.
func (s *Shell) checkpoint(ctx context.Context, cmd *exec.Cmd, line string, box *sandbox.Sandbox) *checkpointRun {
	rec := checkpoint.RecorderFrom(ctx)
	if rec == nil {
		return nil
	}
	switch {
	case box == nil:
		rec.Unrecorded(line, "it ran outside the sandbox, where its changes are not watched")
		return nil
	case !box.Contained():
		rec.Unrecorded(line, "commands are not contained on this machine, so their changes are not watched ("+box.Status().Summary+")")
		return nil
	}
	c := rec.Command(line)
	w, err := box.Watch(cmd, c)
	if err != nil {
		rec.Unrecorded(line, "its changes could not be watched: "+err.Error())
		return nil
	}
	return &checkpointRun{rec: rec, line: line, watch: w, cmd: c}
}

// started is called once the command started.
func (cp *checkpointRun) started() {
	if cp != nil {
		cp.watch.Started()
	}
}

// abandon is called when the command did not start.
func (cp *checkpointRun) abandon() {
	if cp != nil {
		cp.watch.Abandon()
	}
}

// finish records what the command changed, once it ended.
func (cp *checkpointRun) finish() {
	if cp == nil {
		return
	}
	if err := cp.watch.Stop(); err != nil {
		cp.rec.Unrecorded(cp.line, "its changes could not be watched: "+err.Error())
		return
	}
	cp.cmd.Finish()
}
