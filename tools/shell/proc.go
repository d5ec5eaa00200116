package shell

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// groupMembers returns the live processes of process group pgid, found in /proc. Zombies
// are left out: they are dead, and whether anyone reaps them is not ours to decide (an
// init that does not reap orphans leaves them forever).
func groupMembers(pgid int) ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // the process ended while we looked
		}
		state, pgrp, ok := parseStat(stat)
		if ok && pgrp == pgid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// parseStat returns the state and process group from the contents of /proc/PID/stat:
// "pid (comm) state ppid pgrp ...", where comm may itself hold spaces and parentheses.
func parseStat(stat []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pgrp, true
}

// pollInterval is how often stopGroup looks whether a group has ended.
const pollInterval = 10 * time.Millisecond

// killWait bounds how long stopGroup waits for killed processes to disappear: a process
// in uninterruptible sleep dies only when its system call returns.
const killWait = 5 * time.Second

// stopGroup ends every process of group pgid: SIGTERM to the group, then SIGKILL to it if
// any member is still alive after grace. It returns once no member is alive, or when
// killWait has passed after SIGKILL. The group is signalled only while /proc shows it has
// members, so that a group id no longer in use, which the kernel may hand out again, is
// never signalled.
func stopGroup(pgid int, grace time.Duration) error {
	alive := func() (bool, error) {
		pids, err := groupMembers(pgid)
		return len(pids) > 0, err
	}
	signal := func(sig syscall.Signal) error { return signalGroup(pgid, sig) }
	if ok, err := alive(); err != nil || !ok {
		return err
	}
	if err := signal(syscall.SIGTERM); err != nil {
		return err
	}
	if gone, err := waitGone(alive, grace); gone || err != nil {
		return err
	}
	deadline := time.Now().Add(killWait)
	for {
		if err := signal(syscall.SIGKILL); err != nil {
			return err
		}
		if gone, err := waitGone(alive, pollInterval); gone || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process group %d still has live processes %s after SIGKILL", pgid, killWait)
		}
	}
}

// waitGone polls alive until it reports false or d has passed, and reports whether it
// did.
func waitGone(alive func() (bool, error), d time.Duration) (bool, error) {
	deadline := time.Now().Add(d)
	for {
		ok, err := alive()
		if err != nil || !ok {
			return !ok, err
		}
		if !time.Now().Before(deadline) {
			return false, nil
		}
		time.Sleep(min(pollInterval, time.Until(deadline)))
	}
}
