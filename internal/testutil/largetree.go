package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// LargeTree returns a workspace of files small source files for the scale benchmarks:
// 20 top folders of 100 packages each, the files spread evenly over the packages, each
// file a few lines of Go with one function (every hundredth a "func main"), and a
// .gitignore'd build folder of another tenth of the files that the tools skip. Making
// 200,000 files takes a while, so the tree is kept in the temporary directory and made
// again only when incomplete.
func LargeTree(tb testing.TB, files int) string {
	tb.Helper()
	root := filepath.Join(os.TempDir(), "agentls-bench-tree-"+strconv.Itoa(files))
	done := filepath.Join(root, ".complete")
	if _, err := os.Stat(done); err == nil {
		return root
	}
	if err := os.RemoveAll(root); err != nil {
		tb.Fatal(err)
	}
	const tops, pkgs = 20, 100
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	mkdir := func(path string) {
		if err := os.MkdirAll(path, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range files {
		dir := filepath.Join(root, fmt.Sprintf("mod%02d", i%tops), fmt.Sprintf("pkg%03d", i/tops%pkgs))
		if i < tops*pkgs {
			mkdir(dir)
		}
		fn := fmt.Sprintf("Handle%d", i)
		if i%100 == 0 {
			fn = "main"
		}
		write(filepath.Join(dir, fmt.Sprintf("f%06d.go", i)),
			fmt.Sprintf("package pkg\n\n// %s does step %d.\nfunc %s() int {\n\treturn %d\n}\n", fn, i, fn, i))
	}
	build := filepath.Join(root, "build")
	mkdir(build)
	for i := range files / 10 {
		write(filepath.Join(build, fmt.Sprintf("gen%06d.go", i)), "package gen\n\nfunc main() {}\n")
	}
	write(filepath.Join(root, ".gitignore"), "build/\n")
	mkdir(filepath.Join(root, ".git"))
	write(done, "")
	return root
}
