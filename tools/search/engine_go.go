package search

import (
	"context"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentls/agentls/workspace"
)

// searchGo is the pure-Go engine: it walks the directory with the workspace's ignore
// rules, then searches the files in path order on every CPU, committing each file's
// result in that order, so that the total limit keeps the first matches by path and
// the search stops as soon as it is reached.
func (c *grepCall) searchGo(ctx context.Context) (*collector, error) {
	k := &collector{c: c}
	open := c.searchOpenDocs(k)
	if k.full() {
		return k, nil
	}
	files, err := c.walkFiles(ctx, open)
	if err != nil {
		return nil, err
	}
	return k, c.searchFiles(ctx, files, k)
}

// searchOpenDocs searches the documents open in the editor below the searched
// directory, in their unsaved form, and returns all their paths (searched or filtered
// out) so that the disk search leaves them alone.
func (c *grepCall) searchOpenDocs(k *collector) map[string]bool {
	docs := c.t.ws.Documents()
	open := make(map[string]bool, len(docs))
	var mine []workspace.Document
	for _, d := range docs {
		p := filepath.Clean(d.Path)
		if within(c.dir, p) && p != c.dir {
			open[p] = true
			d.Path = p
			mine = append(mine, d)
		}
	}
	if len(mine) == 0 {
		return open
	}
	slices.SortFunc(mine, func(a, b workspace.Document) int { return strings.Compare(a.Path, b.Path) })
	filter := newPathFilter(c.t.ws, c.dir, c.walk, c.include)
	s := c.lineSearch()
	for _, d := range mine {
		if filter.skip(d.Path) {
			continue
		}
		lines, _, err := s.search(strings.NewReader(d.Text), nil, nil)
		if err != nil {
			continue // binary text in an editor buffer: skipped as on disk
		}
		if k.add(relTo(c.dir, d.Path), lines) {
			break
		}
	}
	return open
}

// walkFiles lists the regular files the search covers, sorted, leaving out open
// documents (searched from the overlay).
func (c *grepCall) walkFiles(ctx context.Context, open map[string]bool) ([]string, error) {
	var (
		mu    sync.Mutex
		files []string
	)
	err := c.t.ws.Walk(ctx, c.dir, c.walk, func(p string, d fs.DirEntry) error {
		if d.IsDir() {
			if c.include.pruneDir(relTo(c.dir, p)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || open[p] || !c.include.keepFile(relTo(c.dir, p)) {
			return nil
		}
		mu.Lock()
		files = append(files, p)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// searchFiles searches files (sorted) in parallel and commits their results in order
// until the collector is full.
func (c *grepCall) searchFiles(ctx context.Context, files []string, k *collector) error {
	if len(files) == 0 {
		return nil
	}
	type result struct {
		i     int
		lines []hitLine
	}
	workers := runtime.GOMAXPROCS(0)
	var (
		next    atomic.Int64
		stopped atomic.Bool
		wg      sync.WaitGroup
	)
	quit := make(chan struct{})
	// A worker takes a token before taking a file and the committer returns it once
	// that file is committed, so workers run at most len(tokens) files ahead of the
	// slowest one and memory stays bounded.
	tokens := make(chan struct{}, 8*workers+64)
	results := make(chan result, workers)
	s := c.lineSearch()
	stop := func() bool { return stopped.Load() }
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				select {
				case tokens <- struct{}{}:
				case <-quit:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				var lines []hitLine
				lines, buf = searchPath(s, files[i], buf, stop)
				select {
				case results <- result{i, lines}:
				case <-quit:
					return
				}
			}
		}()
	}
	defer func() {
		stopped.Store(true)
		close(quit)
		wg.Wait()
	}()
	pending := make(map[int][]hitLine)
	for commit := 0; commit < len(files); {
		select {
		case r := <-results:
			pending[r.i] = r.lines
		case <-ctx.Done():
			return ctx.Err()
		}
		for {
			lines, ok := pending[commit]
			if !ok {
				break
			}
			delete(pending, commit)
			<-tokens
			if lines != nil && k.add(relTo(c.dir, files[commit]), lines) {
				return nil
			}
			commit++
		}
	}
	return nil
}

// searchPath searches one file; unreadable and binary files give no lines, as in
// ripgrep, which reports the former on stderr and skips the latter.
func searchPath(s *lineSearch, path string, buf []byte, stop func() bool) ([]hitLine, []byte) {
	f, err := openRead(path)
	if err != nil {
		return nil, buf
	}
	defer f.Close()
	lines, buf, err := s.search(f, buf, stop)
	if cap(buf) > 4*chunkSize {
		buf = nil // one huge line grew it; do not keep that for every later file
	}
	if err != nil {
		// Binary, abandoned, or a read error midway: nothing reliable to report.
		return nil, buf
	}
	return lines, buf
}
