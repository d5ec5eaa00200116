package files

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
)

// goLikeFile returns about size bytes of Go source with tail appended near the end.
func goLikeFile(size int, tail string) string {
	var b strings.Builder
	b.Grow(size + len(tail) + 256)
	b.WriteString("package big\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "// helper%d adjusts x by %d.\nfunc helper%d(x int) int {\n\tif x > %d {\n\t\treturn x - %d\n\t}\n\treturn x + %d\n}\n\n", i, i, i, i, i, i)
	}
	b.WriteString(tail)
	b.WriteString("func last() {}\n")
	return b.String()
}

// BenchmarkReplace10MB runs replace through Build and Execute, with the atomic disk
// write, on a 10 MB file whose one occurrence of old_string is near the end: once found
// exactly, once only by the whitespace-flexible match (old_string indented with spaces,
// the file with tabs). Iterations alternate between two edits that undo each other.
func BenchmarkReplace10MB(b *testing.B) {
	tail := "func target() {\n\tif ready {\n\t\treturn markerA\n\t}\n}\n\n"
	cases := []struct {
		name       string
		forth, bak [2]string // old, new
	}{
		{
			name:  "exact",
			forth: [2]string{"\t\treturn markerA\n", "\t\treturn markerB\n"},
			bak:   [2]string{"\t\treturn markerB\n", "\t\treturn markerA\n"},
		},
		{
			name:  "flexible",
			forth: [2]string{"    if ready {\n        return markerA\n    }", "    if ready {\n        return markerB\n    }"},
			bak:   [2]string{"    if ready {\n        return markerB\n    }", "    if ready {\n        return markerA\n    }"},
		},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			content := goLikeFile(10<<20, tail)
			ws, root := testutil.Workspace(b, map[string]string{"big.go": content})
			tool := NewReplace(ws)
			args := []string{
				replaceArgsJSON("big.go", c.forth[0], c.forth[1], nil),
				replaceArgsJSON("big.go", c.bak[0], c.bak[1], nil),
			}
			ctx := context.Background()
			b.SetBytes(int64(len(content)))
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				res, err := testutil.Call(ctx, b, tool, args[i%2], nil)
				if err != nil {
					b.Fatal(err)
				}
				if !strings.Contains(res.Output, "(1 replacement)") || (c.name == "flexible") != strings.Contains(res.Output, "ignoring the indentation") {
					b.Fatalf("unexpected result %q", res.Output)
				}
			}
			b.StopTimer()
			if got := readDisk(b, filepath.Join(root, "big.go")); got != content && got != strings.Replace(content, "markerA", "markerB", 1) {
				b.Fatal("file corrupted by the benchmark")
			}
		})
	}
}
