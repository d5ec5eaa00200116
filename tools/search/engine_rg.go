package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/workspace"
)

// The ripgrep engine. rg walks and searches; what it reports is held to the pure-Go
// engine's rules so that the two agree:
//
//   - Ignore rules are the workspace's: .gitignore files apply whether or not the tree
//     is a Git repository (--no-require-git, as workspace.Walk does), from the top of
//     the working tree down (rg's reading of parent directories stops there too) or
//     from the workspace root down when there is no working tree (--no-ignore-parent);
//     global excludes, .git/info/exclude below the top and rg's own .ignore files do
//     not apply (--no-ignore-global, --no-ignore-exclude, --no-ignore-dot). Hidden
//     files are searched (--hidden) and the workspace's default excludes are globs.
//     rg cannot read .geminiignore and .agentlsignore except those of the searched
//     directory, and rg's gitignore dialect is not go-git's in every corner, so every
//     file rg reports must also pass the workspace Ignorer (pathFilter) to count: rg
//     may search more than the workspace would, never less. (A .rgignore file, which
//     rg always reads, is the one exception.)
//   - A file with a NUL byte is binary: rg stops at it and says so in the file's "end"
//     message, and the whole file is dropped, as the Go engine drops it.
//   - Per-file limit, exclude_pattern and total limit are applied by the collector on
//     rg's per-file output; rg is killed once the total limit is reached.
//   - Results are in rg's order (it searches in parallel), so which matches survive the
//     total limit may differ from the Go engine, which keeps the first by path; the
//     report is sorted by path either way.

// searchRipgrep runs the search through rg. An error means rg could not do it (not
// installed any more, too old, refused the pattern) and the caller falls back to Go.
func (c *grepCall) searchRipgrep(ctx context.Context) (*collector, error) {
	k := &collector{c: c}
	open := c.searchOpenDocs(k)
	if k.full() {
		return k, nil
	}
	rgCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(rgCtx, c.t.rg, c.ripgrepArgs()...)
	cmd.Dir = c.dir
	stderr := &limitedBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	stdout, w, err := outputPipe()
	if err != nil {
		return nil, fmt.Errorf("ripgrep: %w", err)
	}
	defer stdout.Close()
	cmd.Stdout = w
	err = cmd.Start()
	w.Close() // rg holds its own copy; ours would keep the pipe open after rg exits
	if err != nil {
		return nil, fmt.Errorf("starting ripgrep: %w", err)
	}
	filter := newPathFilter(c.t.ws, c.dir, c.walk, c.include)
	p := rgParser{c: c, k: k, open: open, filter: filter}
	perr := p.parse(bufio.NewReaderSize(&batchReader{r: stdout}, 256<<10))
	killed := false
	if perr == nil && p.full {
		killed = true
		cancel()
	}
	if perr != nil {
		cancel()
	}
	werr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case perr != nil:
		return nil, fmt.Errorf("reading ripgrep's output: %w", perr)
	case killed:
		return k, nil
	case !p.summary:
		// rg reports trouble with single files (permission denied) on stderr and exits
		// 2 but still finishes with a summary; without one, it did not search.
		return nil, fmt.Errorf("ripgrep failed (%v): %s", werr, strings.TrimSpace(stderr.String()))
	}
	return k, nil
}

// ripgrepArgs returns the rg command line for the call, run in the searched directory.
func (c *grepCall) ripgrepArgs() []string {
	args := []string{"--json", "--no-config", "--hidden", "--no-require-git",
		"--no-ignore-dot", "--no-ignore-global", "--no-ignore-exclude"}
	top := c.gitTop()
	if top == "" {
		// Outside a Git working tree the workspace reads no ignore file above its root,
		// and rg, told --no-require-git, would read every one up to "/".
		args = append(args, "--no-ignore-parent")
	}
	// In a working tree rg reads the .gitignore files from the searched directory up to
	// the tree's top, as the workspace does.
	if !c.walk.GitIgnore {
		args = append(args, "--no-ignore-vcs")
	}
	for _, x := range workspace.DefaultExcludedDirs() {
		args = append(args, "--glob", "!"+x+"/")
	}
	// Ignore files whose patterns are relative to the searched directory (rg's working
	// directory) can be given to rg, which then skips their files rather than search
	// them for pathFilter to drop. Later files take precedence, as later patterns do
	// for the workspace Ignorer.
	var ignoreFiles []string
	if c.walk.GitIgnore && top == c.dir {
		ignoreFiles = append(ignoreFiles, filepath.Join(c.dir, ".git", "info", "exclude"))
	}
	ignoreFiles = append(ignoreFiles, filepath.Join(c.dir, ".geminiignore"), filepath.Join(c.dir, ".agentlsignore"))
	for _, f := range ignoreFiles {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			args = append(args, "--ignore-file", f)
		}
	}
	if c.include != nil {
		args = append(args, "--glob", c.include.raw)
	}
	if c.before > 0 {
		args = append(args, "--before-context", strconv.Itoa(c.before))
	}
	if c.after > 0 {
		args = append(args, "--after-context", strconv.Itoa(c.after))
	}
	if c.perFile > 0 {
		args = append(args, "--max-count", strconv.Itoa(c.perFile))
	}
	args = append(args, c.pat.rgArgs...)
	return append(args, "--", ".")
}

// gitTop returns the top of the Git working tree holding the workspace root that
// holds the searched directory, or "" if there is none; the workspace reads
// .gitignore files from there down.
func (c *grepCall) gitTop() string {
	root := c.dir
	for _, r := range c.t.ws.Roots() {
		if within(r, c.dir) {
			root = r
			break
		}
	}
	for d := root; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// rgParser reads rg's JSON Lines output as it streams, one file at a time.
//
// Whether a file passes pathFilter is decided in batches: files wait in pending until
// they could fill the collector, or rg is done, and are then filtered (in parallel when
// rg is done and the CPUs are free) and added in the order rg reported them. Filtering
// costs a few system calls per directory, and done as each file arrives it would take
// CPU from rg itself.
type rgParser struct {
	c       *grepCall
	k       *collector
	open    map[string]bool
	filter  *pathFilter
	full    bool // the total limit was reached
	summary bool // rg's closing summary arrived

	rel   string // the current file, relative to the searched directory
	skip  bool   // the current file is open in the editor: searched from the overlay
	lines []hitLine

	pending []fileResult // reported files not yet filtered
	could   int          // what pending could add to the collector's count at most
}

// How rg's messages start (rg writes "type" first), and the summary's type, which is
// not first.
const (
	rgBegin   = `{"type":"begin"`
	rgMatch   = `{"type":"match"`
	rgContext = `{"type":"context"`
	rgEnd     = `{"type":"end"`
	rgSummary = `"type":"summary"`
)

// parse consumes rg's output until it ends or the total limit is reached.
func (p *rgParser) parse(r *bufio.Reader) error {
	var long []byte
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(line) > 0 {
			if perr := p.message(line); perr != nil {
				return perr
			}
			if p.full {
				return nil
			}
		}
		if err == io.EOF {
			// rg is done: what is pending can be filtered on every CPU.
			p.flush(true)
			return nil
		}
	}
}

func (p *rgParser) message(line []byte) error {
	switch {
	case bytes.HasPrefix(line, []byte(rgMatch)), bytes.HasPrefix(line, []byte(rgContext)):
		if p.skip {
			return nil
		}
		m, err := parseRgMessage(line)
		if err != nil {
			return err
		}
		col := -1
		if bytes.HasPrefix(line, []byte(rgMatch)) {
			col = max(m.firstStart, 0)
		}
		text := m.lines
		if n := len(text); n > 0 && text[n-1] == '\n' {
			text = text[:n-1]
		}
		p.lines = append(p.lines, hitLine{num: m.lineNumber, text: string(text), col: col})
	case bytes.HasPrefix(line, []byte(rgBegin)):
		m, err := parseRgMessage(line)
		if err != nil {
			return err
		}
		p.rel = strings.TrimPrefix(filepath.ToSlash(string(m.path)), "./")
		p.skip = p.open[filepath.Join(p.c.dir, filepath.FromSlash(p.rel))]
		p.lines = nil
	case bytes.HasPrefix(line, []byte(rgEnd)):
		m, err := parseRgMessage(line)
		if err != nil {
			return err
		}
		if !p.skip && !m.binaryOffset && len(p.lines) > 0 {
			p.pending = append(p.pending, fileResult{rel: p.rel, lines: p.lines})
			if p.c.p.NamesOnly {
				p.could++
			} else {
				for _, l := range p.lines {
					if l.isMatch() {
						p.could++
					}
				}
			}
			if p.k.count+p.could >= p.c.total {
				p.flush(false)
			}
		}
		p.lines = nil
	case bytes.Contains(line, []byte(rgSummary)):
		p.summary = true
	}
	return nil
}

// flush filters the pending files and adds those that pass to the collector.
func (p *rgParser) flush(parallel bool) {
	skip := make([]bool, len(p.pending))
	check := func(i int) {
		skip[i] = p.filter.skip(filepath.Join(p.c.dir, filepath.FromSlash(p.pending[i].rel)))
	}
	if workers := runtime.GOMAXPROCS(0); parallel && workers > 1 && len(p.pending) > 64 {
		var wg sync.WaitGroup
		var next atomic.Int64
		for range workers {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < len(p.pending); i = int(next.Add(1) - 1) {
					check(i)
				}
			})
		}
		wg.Wait()
	} else {
		for i := range p.pending {
			check(i)
		}
	}
	for i, f := range p.pending {
		if !skip[i] && p.k.add(f.rel, f.lines) {
			p.full = true
			break
		}
	}
	p.pending, p.could = p.pending[:0], 0
}

// batchReader reads rg's output in batches. rg writes each file's results as it
// finishes the file, so a reader that wakes for every write wakes hundreds of times a
// search, and those wake-ups (thread hand-offs in the Go runtime) cost rg more CPU
// than parsing does. After a small read it waits briefly and lets the pipe fill; a
// full read means rg is producing fast and is followed at once by the next.
type batchReader struct{ r io.Reader }

// batchWait is the pause after a small read: short enough not to be noticed at the
// end of a search, long enough to gather many files' results.
const batchWait = 500 * time.Microsecond

func (b *batchReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == nil && n < 16<<10 {
		time.Sleep(batchWait)
	}
	return n, err
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string { return b.buf.String() }
