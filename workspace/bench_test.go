package workspace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentls/agentls/workspace"
)

// goLike returns about size bytes of Go source, every function distinct.
func goLike(size int) string {
	var b strings.Builder
	b.Grow(size + 256)
	b.WriteString("package big\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "// helper%d adjusts x by %d.\nfunc helper%d(x int) int {\n\tif x > %d {\n\t\treturn x - %d\n\t}\n\treturn x + %d\n}\n\n", i, i, i, i, i, i)
	}
	return b.String()
}

// smallChange returns a 10 MB Go-like text and the same text with one line in the
// middle changed: the usual edit of a large open document.
func smallChange(b *testing.B) (old, new string) {
	b.Helper()
	old = goLike(10 << 20)
	mid := strings.Index(old[len(old)/2:], "\treturn x + ")
	if mid < 0 {
		b.Fatal("no line to change")
	}
	at := len(old)/2 + mid
	new = old[:at] + "\treturn 2*x + " + old[at+len("\treturn x + "):]
	return old, new
}

func BenchmarkUnifiedDiff10MB(b *testing.B) {
	old, new := smallChange(b)
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		if d := workspace.UnifiedDiff("big.go", old, new, false); !strings.Contains(d, "+\treturn 2*x + ") {
			b.Fatalf("unexpected diff %q", d)
		}
	}
}

func BenchmarkTextEdits10MB(b *testing.B) {
	old, new := smallChange(b)
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		if e := workspace.TextEdits(old, new, workspace.PositionUTF16); len(e) != 1 {
			b.Fatalf("unexpected edits %v", e)
		}
	}
}
