// Command sandboxtime times one command run bare and run contained, in interleaved
// rounds, and prints each variant's median, 90th percentile and minimum wall time
// from start to exit, and its median over the bare run's.
//
// The contained variants are made as the shell tool makes them: sandbox.Sandbox.Wrap,
// with agentls-sandbox (-helper) or agentls itself (-agentls) as the helper, at the
// Landlock-only level and with the namespaces; `agentls sandbox -- COMMAND` (the whole
// agentls start, the probe of the machine, then the helper) is one more. Other
// programs' sandboxes are given with -peer as a command line that COMMAND is appended
// to. Every round runs each variant once, starting at a different variant each round,
// so that load from other work on the machine falls on all of them alike; a round
// before the first is not counted.
//
// bench/sandbox.sh runs it; by hand:
//
//	go build -o /tmp/b/ ./cmd/agentls ./cmd/agentls-sandbox ./bench/sandboxtime
//	/tmp/b/sandboxtime -agentls /tmp/b/agentls -helper /tmp/b/agentls-sandbox \
//		-peer 'unshare=unshare -rn' -n 200 true
//
// With -hash, each run's standard output is read and its SHA-256 compared with the bare
// run's: a variant whose output differs fails.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agentls/agentls/sandbox"
)

// helperFlag is the -helper flag: [NAME=]PATH, repeatable.
type helperFlag []helperPath

type helperPath struct{ kind, path string }

func (h *helperFlag) String() string { return fmt.Sprint(len(*h)) }

func (h *helperFlag) Set(s string) error {
	name, path, ok := strings.Cut(s, "=")
	if !ok {
		name, path = "helper", s
	}
	if name == "" || path == "" {
		return fmt.Errorf("want [NAME=]PATH, got %q", s)
	}
	*h = append(*h, helperPath{name, path})
	return nil
}

// peers is the -peer flag: NAME=COMMAND LINE, repeatable.
type peers []peer

type peer struct {
	name   string
	prefix []string
}

func (p *peers) String() string { return fmt.Sprint(len(*p)) }

func (p *peers) Set(s string) error {
	name, line, ok := strings.Cut(s, "=")
	if !ok || name == "" || len(strings.Fields(line)) == 0 {
		return fmt.Errorf("want NAME=COMMAND LINE, got %q", s)
	}
	*p = append(*p, peer{name, strings.Fields(line)})
	return nil
}

func main() {
	var ps peers
	n := flag.Int("n", 100, "rounds counted")
	var helpers helperFlag
	agentls := flag.String("agentls", "", "agentls, for the reexec/* variants and `agentls sandbox --`")
	dir := flag.String("dir", "", "workspace root and working directory (default: a new temporary directory)")
	hashOut := flag.Bool("hash", false, "read each run's standard output and compare its SHA-256 with the bare run's")
	only := flag.String("variants", "", "comma-separated variant names to run (default: all that can run)")
	ballast := flag.Int("ballast", 0, "MB of heap this process allocates and touches first, so that it forks as a process of agentls's size would")
	flag.Var(&helpers, "helper", "[NAME=]PATH of agentls-sandbox, for the NAME/landlock and NAME/namespaces variants (NAME defaults to helper; repeatable)")
	flag.Var(&ps, "peer", "NAME=COMMAND LINE of another sandbox, run with the command appended (repeatable)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: sandboxtime [flags] COMMAND [ARG...]")
		os.Exit(2)
	}
	keep := make([]byte, *ballast<<20)
	for i := 0; i < len(keep); i += 4096 {
		keep[i] = 1
	}
	if err := run(*n, helpers, *agentls, *dir, *hashOut, *only, ps, flag.Args()); err != nil {
		slog.Error("sandboxtime", "err", err)
		os.Exit(1)
	}
	runtime.KeepAlive(keep)
}

// variant is one way of running the command.
type variant struct {
	name string
	make func() (*exec.Cmd, error)
	runs []time.Duration
	// byRound is each counted run's time by its round, for the differences and ratios
	// to the bare run of the same round.
	byRound map[int]time.Duration
	// cpu is each counted run's processor time (user and system, of the command and
	// the descendants it waited for), by round.
	cpu map[int]time.Duration
	sum string
	// peer marks another program's sandbox: a failed run is counted and reported, not
	// fatal (srt gives up when `which bash` takes over a second on a loaded machine).
	peer     bool
	failed   int
	firstErr error
}

func run(n int, helpers helperFlag, agentls, dir string, hashOut bool, only string, ps peers, command []string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "sandboxtime-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		return err
	}
	plain := func(name string, args ...string) func() (*exec.Cmd, error) {
		return func() (*exec.Cmd, error) { return exec.Command(name, args...), nil }
	}
	vs := []*variant{{name: "bare", make: plain(path, command[1:]...)}}
	if agentls != "" {
		helpers = append(helpers, helperPath{"reexec", agentls})
	}
	for _, h := range helpers {
		m := sandbox.Probe(h.path)
		if m.LandlockABI == 0 {
			return fmt.Errorf("no Landlock here: %s", m.LandlockError)
		}
		landlock := m
		landlock.UserNamespaces, landlock.UserNamespacesError = false, "off for the benchmark"
		levels := []struct {
			name string
			m    sandbox.Machine
		}{{"landlock", landlock}}
		if m.UserNamespaces {
			levels = append(levels, struct {
				name string
				m    sandbox.Machine
			}{"namespaces", m})
		} else {
			fmt.Fprintf(os.Stderr, "sandboxtime: no %s/namespaces: %s\n", h.kind, m.UserNamespacesError)
		}
		for _, l := range levels {
			sb, err := sandbox.New(l.m, sandbox.Config{}, sandbox.Options{Roots: []string{dir}, ConfigDirs: configDirs(), Helper: h.path})
			if err != nil {
				return err
			}
			if !sb.Contained() {
				return fmt.Errorf("%s/%s: %s", h.kind, l.name, sb.Status().Summary)
			}
			vs = append(vs, &variant{name: h.kind + "/" + l.name, make: func() (*exec.Cmd, error) {
				cmd := exec.Command(path, command[1:]...)
				return cmd, sb.Wrap(cmd)
			}})
		}
	}
	if agentls != "" {
		vs = append(vs, &variant{name: "agentls sandbox --", make: plain(agentls, append([]string{"sandbox", "--root", dir, "--"}, command...)...)})
	}
	for _, p := range ps {
		vs = append(vs, &variant{name: p.name, peer: true, make: plain(p.prefix[0], append(slices.Clone(p.prefix[1:]), command...)...)})
	}
	if only != "" {
		want := strings.Split(only, ",")
		vs = slices.DeleteFunc(vs, func(v *variant) bool { return v.name != "bare" && !slices.Contains(want, v.name) })
	}

	for round := -1; round < n; round++ {
		for i := range vs {
			v := vs[(i+max(round, 0))%len(vs)]
			d, cpu, sum, err := once(v, dir, hashOut)
			if err != nil && v.peer {
				v.failed++
				if v.firstErr == nil {
					v.firstErr = err
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			if hashOut {
				if v.sum == "" {
					v.sum = sum
				} else if sum != v.sum {
					return fmt.Errorf("%s: output changed between runs: %s then %s", v.name, v.sum, sum)
				}
			}
			if round >= 0 {
				v.runs = append(v.runs, d)
				if v.byRound == nil {
					v.byRound, v.cpu = map[int]time.Duration{}, map[int]time.Duration{}
				}
				v.byRound[round], v.cpu[round] = d, cpu
			}
		}
	}

	fmt.Printf("command: %s; %d interleaved rounds (after one not counted); over bare and ratio: medians of each round's difference and ratio to bare\n", strings.Join(command, " "), n)
	fmt.Printf("%-22s %10s %10s %10s %12s %8s %10s %9s\n", "variant", "median", "p90", "min", "over bare", "ratio", "cpu", "cpu ratio")
	for _, v := range vs {
		if len(v.runs) == 0 {
			fmt.Printf("%-22s every run failed: %v\n", v.name, v.firstErr)
			continue
		}
		var diffs, ratios, cpus, cpuRatios []time.Duration
		for r, d := range v.byRound {
			cpus = append(cpus, v.cpu[r])
			if b, ok := vs[0].byRound[r]; ok {
				diffs = append(diffs, d-b)
				ratios = append(ratios, time.Duration(float64(d)/float64(b)*1e6))
				cpuRatios = append(cpuRatios, time.Duration(float64(v.cpu[r])/float64(vs[0].cpu[r])*1e6))
			}
		}
		fmt.Printf("%-22s %10s %10s %10s %12s %7.2fx %10s %8.2fx\n", v.name, ms(median(v.runs)), ms(percentile(v.runs, 0.9)), ms(slices.Min(v.runs)),
			ms(median(diffs)), float64(median(ratios))/1e6, ms(median(cpus)), float64(median(cpuRatios))/1e6)
	}
	for _, v := range vs {
		if v.failed > 0 {
			fmt.Printf("%-22s %d of %d runs failed (left out of its figures), the first: %v\n", v.name, v.failed, v.failed+len(v.runs), v.firstErr)
		}
	}
	if hashOut {
		for _, v := range vs {
			verdict := "same as bare"
			if v.sum != vs[0].sum {
				verdict = "DIFFERS from bare"
			}
			fmt.Printf("%-22s stdout sha256 %s (%s)\n", v.name, v.sum, verdict)
		}
		for _, v := range vs {
			if v.sum != vs[0].sum {
				return errors.New("a contained command's output differs from the bare command's")
			}
		}
	}
	return nil
}

// once runs v and returns the time from start to exit, the processor time of the
// process and the descendants it waited for, and, with hashOut, the SHA-256 of its
// standard output and the number of bytes.
func once(v *variant, dir string, hashOut bool) (time.Duration, time.Duration, string, error) {
	cmd, err := v.make()
	if err != nil {
		return 0, 0, "", err
	}
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	var h hash.Hash
	var size counter
	if hashOut {
		h = sha256.New()
		cmd.Stdout = io.MultiWriter(h, &size)
	}
	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, "", fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if !hashOut {
		return d, cpu, "", nil
	}
	return d, cpu, fmt.Sprintf("%s, %d bytes", hex.EncodeToString(h.Sum(nil)), size.n), nil
}

// counter counts the bytes written to it.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// configDirs are the folders agentls hides as its own and Gemini CLI's configuration.
func configDirs() []string {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		cfg = filepath.Join(home, ".config")
	}
	return []string{filepath.Join(cfg, "agentls"), filepath.Join(home, ".gemini")}
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 0.5) }

// percentile returns the p-quantile of ds (nearest rank).
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	i := int(p*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
