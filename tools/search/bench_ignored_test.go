package search

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// BenchmarkGlobIgnored is glob '**/*.go' over a tree where ignore rules leave out a
// good part: 100 directories of 40 .go files and 40 .log files, every .log file
// ignored by .gitignore, and 20 ignored directories (build output and node_modules)
// of 40 files each. It is where counting what ignore rules left out (glob's note) has
// the most to count: 4,000 ignored files and 20 ignored directories, beside 4,000
// listed files; and the same over GOROOT/src, where nearly nothing is ignored.
func BenchmarkGlobIgnored(b *testing.B) {
	dir := b.TempDir()
	write := func(rel string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(".gitignore")
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\nbuild/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for d := range 100 {
		for f := range 40 {
			write(fmt.Sprintf("pkg%d/f%d.go", d, f))
			write(fmt.Sprintf("pkg%d/f%d.log", d, f))
		}
	}
	for d := range 10 {
		for f := range 40 {
			write(fmt.Sprintf("build%d/build/gen%d.go", d, f))
			write(fmt.Sprintf("web%d/node_modules/m%d.go", d, f))
		}
	}
	ws, err := workspace.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	args := `{"pattern":"**/*.go"}`
	for _, tree := range []struct {
		name string
		ws   *workspace.Workspace
	}{{"ignored", ws}, {"goroot", gorootWorkspace(b)}} {
		// counted/uncounted: the glob with its count of what ignore rules left out, and
		// the same glob without it, in rotating order within one run, so that the load of
		// a shared machine hits both alike.
		b.Run(tree.name+"/paired", func(b *testing.B) {
			t := &globTool{ws: tree.ws}
			uncounted := build(b, t, args)
			uncounted.(*globCall).uncounted = true
			raw := func() {
				if _, err := uncounted.Execute(b.Context(), io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			benchPaired(b, raw, []tools.Invocation{build(b, t, args)}, []string{"counted/uncounted"})
		})
	}
}

func gorootWorkspace(b *testing.B) *workspace.Workspace {
	ws, _ := gorootSrc(b)
	return ws
}
