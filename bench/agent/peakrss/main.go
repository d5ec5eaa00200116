// Command peakrss runs a command and reports its wall time and resident memory,
// counting every process of the command's tree: Gemini CLI relaunches itself as a
// second Node.js process, and both agents start shells and ripgrep, so the peak of one
// process (what /usr/bin/time -f %M reports) understates what a program holds.
//
//	peakrss -o REPORT [-interval 1ms] -- command [args...]
//
// The command inherits stdin, stdout and stderr and the environment. REPORT gets one
// line of key=value pairs:
//
//	wall_ms      from start to exit
//	exit         the command's exit status
//	maxrss_kb    the largest peak resident set of any one process of the tree that was
//	             waited for (the kernel's ru_maxrss, the same as /usr/bin/time -f %M)
//	main_hwm_kb  the command's own process's peak resident set (VmHWM), as last sampled
//	own_kb       the sum of the peak resident sets (VmHWM) of the processes that run the
//	             command's own executable (/proc/PID/exe): the program itself, without
//	             the tools it starts (shells, ripgrep); for Gemini CLI both Node.js
//	             processes
//	tree_peak_kb the largest sum of VmRSS over the whole tree seen in one sample
//	peak_by_comm that sample's VmRSS by command name, e.g. agentls:30124,bash:3412
//	procs        how many processes the samples saw
//
// With -interval 0 nothing is sampled (no sampling load on the machine while the time
// is measured): main_hwm_kb, own_kb, tree_peak_kb and procs are then 0.
//
// bench/agent.sh runs it. It exits with the command's exit status.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	out := flag.String("o", "", "the file to write the report line to (required)")
	interval := flag.Duration("interval", time.Millisecond, "how often to sample the process tree's memory; 0 samples nothing")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: peakrss -o REPORT [-interval 1ms] -- command [args...]")
		os.Exit(2)
	}
	code, err := run(*out, *interval, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(125)
	}
	os.Exit(code)
}

// tree follows the memory of a process and its descendants.
type tree struct {
	root      int
	rootExe   string
	peakSum   int64 // kB
	peakDesc  string
	rootHWM   int64         // kB
	ownHWM    map[int]int64 // kB, by pid, for the processes running rootExe
	firstSeen map[int]time.Time
}

// forkGrace is how long a process running its parent's executable is taken for a fork
// on its way to exec (see sample).
const forkGrace = 20 * time.Millisecond

func run(report string, interval time.Duration, argv []string) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	t := &tree{root: cmd.Process.Pid, ownHWM: map[int]int64{}, firstSeen: map[int]time.Time{}}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var werr error
	if interval > 0 {
		tick := time.NewTicker(interval)
	loop:
		for {
			t.sample()
			select {
			case werr = <-done:
				break loop
			case <-tick.C:
			}
		}
		tick.Stop()
	} else {
		werr = <-done
	}
	wall := time.Since(start)

	code := 0
	if werr != nil {
		var exit *exec.ExitError
		if !errors.As(werr, &exit) {
			return 0, fmt.Errorf("waiting for %s: %w", argv[0], werr)
		}
		code = exit.ExitCode()
	}
	var maxrss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxrss = ru.Maxrss // kB on Linux
	}
	var own int64
	for _, kb := range t.ownHWM {
		own += kb
	}
	line := fmt.Sprintf("wall_ms=%.2f exit=%d maxrss_kb=%d main_hwm_kb=%d own_kb=%d tree_peak_kb=%d peak_by_comm=%s procs=%d\n",
		float64(wall.Microseconds())/1000, code, maxrss, t.rootHWM, own, t.peakSum, t.peakDesc, len(t.firstSeen))
	if err := os.WriteFile(report, []byte(line), 0o644); err != nil {
		return 0, fmt.Errorf("writing the report: %w", err)
	}
	return code, nil
}

// sample adds up VmRSS over the tree as it is now. Processes vanish between reading a
// parent's children and reading them; they are skipped.
//
// A forked child shows its parent's executable and memory until it execs: counting it
// would count the parent twice (every tool call that starts a program makes one). So a
// process running the same executable as its parent counts only once it has been seen
// for forkGrace; Gemini CLI's relaunched Node.js process, which runs for seconds, is
// counted, a child on its way to exec bash or rg is not.
func (t *tree) sample() {
	now := time.Now()
	self := selfExe()
	var sum int64
	byComm := map[string]int64{}
	type proc struct {
		pid       int
		parentExe string
	}
	queue := []proc{{t.root, self}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.pid))
		if err != nil {
			continue
		}
		rss, hwm, ok := memory(p.pid)
		if !ok {
			continue
		}
		for _, kid := range t.childrenOf(p.pid) {
			queue = append(queue, proc{kid, exe})
		}
		first, seen := t.firstSeen[p.pid]
		if !seen {
			first = now
			t.firstSeen[p.pid] = now
		}
		if exe == p.parentExe && now.Sub(first) < forkGrace {
			continue
		}
		if p.pid == t.root {
			t.rootExe = exe
			t.rootHWM = max(t.rootHWM, hwm)
		}
		if exe == t.rootExe {
			t.ownHWM[p.pid] = max(t.ownHWM[p.pid], hwm)
		}
		sum += rss
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.pid))
		byComm[strings.ReplaceAll(strings.TrimSpace(string(comm)), " ", "_")] += rss
	}
	if sum > t.peakSum {
		t.peakSum = sum
		names := make([]string, 0, len(byComm))
		for name := range byComm {
			names = append(names, name)
		}
		slices.Sort(names)
		var desc []string
		for _, name := range names {
			desc = append(desc, fmt.Sprintf("%s:%d", name, byComm[name]))
		}
		t.peakDesc = strings.Join(desc, ",")
	}
}

// selfExe is this program's executable, which the command's process shows until it
// has exec'd.
func selfExe() string {
	exe, _ := os.Readlink("/proc/self/exe")
	return exe
}

// childrenOf lists the children of every thread of pid (Linux keeps them per thread).
func (t *tree) childrenOf(pid int) []int {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		return nil
	}
	var kids []int
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(field); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// memory reads VmRSS and VmHWM (kB) of pid; false when the process is gone or a zombie.
func memory(pid int) (rss, hwm int64, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, val, found := strings.Cut(sc.Text(), ":")
		if !found || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			continue
		}
		if key == "VmRSS" {
			rss, ok = n, true
		} else {
			hwm = n
		}
	}
	return rss, hwm, ok
}
