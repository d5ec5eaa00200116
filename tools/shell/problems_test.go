package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

func TestParseProblems(t *testing.T) {
	const (
		e = tools.SeverityError
		w = tools.SeverityWarning
		i = tools.SeverityInformation
		h = tools.SeverityHint
	)
	tests := []struct {
		line string
		want []tools.Problem // nil: not a compiler line
	}{
		{"main.go:12:5: undefined: foo", []tools.Problem{prob("main.go", 12, 5, "undefined: foo", e)}},
		{"./pkg/x.go:3: missing return", []tools.Problem{prob("./pkg/x.go", 3, 0, "missing return", e)}},
		{"src/a.c:10:2: warning: unused variable 'x' [-Wunused]", []tools.Problem{prob("src/a.c", 10, 2, "warning: unused variable 'x' [-Wunused]", w)}},
		{"src/a.c:11:1: note: declared here", []tools.Problem{prob("src/a.c", 11, 1, "note: declared here", i)}},
		{"    x_test.go:40: got 1, want 2", []tools.Problem{prob("x_test.go", 40, 0, "got 1, want 2", e)}},
		{"a.rs:1:1: error[E0425]: cannot find\r\n", []tools.Problem{prob("a.rs", 1, 1, "error[E0425]: cannot find", e)}},
		{"lib.ts:7:3: Hint: prefer const", []tools.Problem{prob("lib.ts", 7, 3, "Hint: prefer const", h)}},
		{"errors.go:1:1: errorsome words", []tools.Problem{prob("errors.go", 1, 1, "errorsome words", e)}},
		{"warnings.go:2:1: warningly", []tools.Problem{prob("warnings.go", 2, 1, "warningly", e)}},
		{"Exit Code: 1", nil},
		{"https://example.com:443: refused", nil},
		{"12:30:01: the time", []tools.Problem{prob("12", 30, 1, "the time", e)}}, // kept only if a file "12" exists
		{"a.go:0:1: line zero", nil},
		{"a.go:3:", nil},
		{"a b.go:3: spaces", nil},
		{strings.Repeat("x", maxProblemLine) + ".go:1: too long", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := parseProblems(tt.line); !slices.Equal(got, tt.want) {
			t.Errorf("%q: %+v, want %+v", tt.line, got, tt.want)
		}
	}
}

// TestProblems: the report keeps the places inside the workspace, resolved from the
// command's directory, once each and at most maxProblems; an output without any is an
// empty report, which clears the last one.
func TestProblems(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"pkg/x.go", "a.go"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	s := &Shell{ws: ws}
	pkg := filepath.Join(root, "pkg")
	out := "x.go:3:1: undefined: y\nx.go:3:1: undefined: y\nmissing.go:1: no such file\n../../etc/passwd:1: outside\n/etc/hosts:2: outside\n12:30:01: the time\nok\n"
	got := s.problems(out, pkg)
	want := []tools.Problem{prob(filepath.Join(pkg, "x.go"), 3, 1, "undefined: y", tools.SeverityError)}
	if !slices.Equal(got.Problems, want) {
		t.Errorf("problems: %+v, want %+v", got.Problems, want)
	}
	if got := s.problems("all good\n", root); got == nil || len(got.Problems) != 0 {
		t.Errorf("an output without problems: %+v, want an empty report", got)
	}
	var many strings.Builder
	for n := range 3 * maxProblems {
		fmt.Fprintf(&many, "a.go:%d: x\n", n+1)
	}
	if n := len(s.problems(many.String(), root).Problems); n != maxProblems {
		t.Errorf("%d problems, want the limit of %d", n, maxProblems)
	}
}

func prob(path string, line, col int, msg string, sev tools.Severity) tools.Problem {
	return tools.Problem{Path: path, Line: line, Column: col, Message: msg, Severity: sev}
}
