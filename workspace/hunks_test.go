package workspace_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/workspace"
)

func TestApplyHunks(t *testing.T) {
	base := numbered(1, 40)
	two := strings.Replace(strings.Replace(base, "line 5\n", "five\n", 1), "line 30\n", "thirty\n", 1)
	crlf := strings.ReplaceAll(base, "\n", "\r\n")
	crlfTwo := strings.ReplaceAll(two, "\n", "\r\n")
	tests := []struct {
		name     string
		old, new string
		accepted []int
		want     string
		wantErr  string
	}{
		{"all", base, two, []int{0, 1}, two, ""},
		{"none", base, two, []int{}, base, ""},
		{"first", base, two, []int{0}, strings.Replace(base, "line 5\n", "five\n", 1), ""},
		{"second", base, two, []int{1}, strings.Replace(base, "line 30\n", "thirty\n", 1), ""},
		{"order does not matter", base, two, []int{1, 0}, two, ""},
		{"crlf kept", crlf, crlfTwo, []int{1}, strings.Replace(crlf, "line 30\r\n", "thirty\r\n", 1), ""},
		{"no final newline in old, change at end rejected", "a\n" + numbered(1, 20) + "z", "A\n" + numbered(1, 20) + "z\n",
			[]int{0}, "A\n" + numbered(1, 20) + "z", ""},
		{"no final newline in old, change at end accepted", "a\n" + numbered(1, 20) + "z", "A\n" + numbered(1, 20) + "z\n",
			[]int{1}, "a\n" + numbered(1, 20) + "z\n", ""},
		{"new file", "", "x\ny\n", []int{0}, "x\ny\n", ""},
		{"delete everything", "x\ny\n", "", []int{0}, "", ""},
		{"out of range", base, two, []int{2}, "", "hunk 2 does not exist"},
		{"negative", base, two, []int{-1}, "", "hunk -1 does not exist"},
		{"twice", base, two, []int{0, 0}, "", "accepted twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := workspace.ApplyHunks(tt.old, tt.new, tt.accepted)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ApplyHunks = %q, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ApplyHunks =\n%q\nwant\n%q", got, tt.want)
			}
			if err := checkHunks(tt.old, tt.new); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestApplyHunksProperties checks checkHunks on random line texts with CRLF lines
// and a missing final newline.
func TestApplyHunksProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 14))
	words := []string{"a\n", "b\n", "c\r\n", "}\n", "\n", "d", "e\r\n"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			w := words[r.IntN(len(words))]
			if w == "d" {
				w = "d" + strconv.Itoa(r.IntN(3)) + "\n"
			}
			b.WriteString(w)
		}
		if r.IntN(3) == 0 {
			b.WriteString("tail")
		}
		return b.String()
	}
	for i := range 400 {
		old := text(r.IntN(40))
		new := old
		if r.IntN(4) > 0 {
			lines := strings.SplitAfter(old, "\n")
			for range r.IntN(4) + 1 {
				j := r.IntN(len(lines))
				lines[j] = text(r.IntN(3))
			}
			new = strings.Join(lines, "")
		} else {
			new = text(r.IntN(40))
		}
		if err := checkHunks(old, new); err != nil {
			t.Fatalf("case %d: %v\nold %q\nnew %q", i, err, old, new)
		}
	}
}

func FuzzApplyHunks(f *testing.F) {
	f.Add(numbered(1, 20), strings.Replace(numbered(1, 20), "line 9\n", "nine\r\n", 1))
	f.Add("a\nb", "a\nc")
	f.Add("", "x")
	f.Add("x\r\ny\r\n", "x\r\nz")
	f.Fuzz(func(t *testing.T, old, new string) {
		if err := checkHunks(old, new); err != nil {
			t.Fatal(err)
		}
	})
}

var hunkHeaderLine = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// checkHunks checks DiffHunks and ApplyHunks on old and new: the hunks are those of
// the diff's @@ headers, and for every subset of them (the first 64 subsets, for many
// hunks) ApplyHunks gives old with exactly those hunks' lines replaced by their lines
// in new, every other line of old unchanged byte for byte; all hunks give new and none
// give old.
func checkHunks(old, new string) error {
	diff, hunks := workspace.DiffHunks("f", old, new, false)
	if diff != workspace.UnifiedDiff("f", old, new, false) {
		return fmt.Errorf("DiffHunks's diff is not UnifiedDiff's")
	}
	var headers []workspace.Hunk
	for _, l := range strings.Split(diff, "\n") {
		m := hunkHeaderLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n := func(s string) int {
			if s == "" {
				return 1
			}
			v, _ := strconv.Atoi(s)
			return v
		}
		os, ns := n(m[1]), n(m[3])
		ol, nl := n(m[2]), n(m[4])
		headers = append(headers, workspace.Hunk{Index: len(headers), OldStart: os, OldLines: ol, NewStart: ns, NewLines: nl})
	}
	if fmt.Sprint(headers) != fmt.Sprint(hunks) {
		// udiff writes a side of one line without its count and an empty side
		// other than at the top as a bare start: compare only where the header says
		// the count.
		for i := range max(len(headers), len(hunks)) {
			if i >= len(headers) || i >= len(hunks) {
				return fmt.Errorf("hunks %v, headers %v", hunks, headers)
			}
			h, g := headers[i], hunks[i]
			if h.OldStart != g.OldStart || h.NewStart != g.NewStart ||
				h.OldLines != g.OldLines && g.OldLines != 0 || h.NewLines != g.NewLines && g.NewLines != 0 {
				return fmt.Errorf("hunk %d is %+v, its header says %+v\n%s", i, g, h, diff)
			}
		}
	}
	a, b := splitAll(old), splitAll(new)
	subsets := 1 << min(len(hunks), 6)
	for mask := range subsets {
		var accepted []int
		want := ""
		next := 0
		for i, h := range hunks {
			if mask&(1<<i) == 0 && i < 6 {
				continue
			}
			if i >= 6 && mask != subsets-1 {
				continue
			}
			accepted = append(accepted, i)
			start := h.OldStart - 1
			if h.OldLines == 0 {
				start = h.OldStart
			}
			ns := h.NewStart - 1
			if h.NewLines == 0 {
				ns = h.NewStart
			}
			if start < next || start+h.OldLines > len(a) || ns+h.NewLines > len(b) {
				return fmt.Errorf("hunk %+v does not fit the texts (%d and %d lines)", h, len(a), len(b))
			}
			want += strings.Join(a[next:start], "") + strings.Join(b[ns:ns+h.NewLines], "")
			next = start + h.OldLines
		}
		want += strings.Join(a[next:], "")
		got, err := workspace.ApplyHunks(old, new, accepted)
		if err != nil {
			return fmt.Errorf("ApplyHunks(%v): %v", accepted, err)
		}
		if got != want {
			return fmt.Errorf("ApplyHunks(%v) = %q, want %q", accepted, got, want)
		}
		switch {
		case len(accepted) == len(hunks) && got != new:
			return fmt.Errorf("all hunks give %q, not new", got)
		case len(accepted) == 0 && got != old:
			return fmt.Errorf("no hunk gives %q, not old", got)
		}
	}
	return nil
}

// splitAll splits s into lines with their line breaks, a last line without one kept.
func splitAll(s string) []string {
	if s == "" {
		return nil
	}
	return splitLines(s)
}

// BenchmarkApplyHunks1MB applies one of three hunks of a change to a 1 MB Go-like
// text: the cost of a person's per-hunk answer, a diff of the texts and one copy.
func BenchmarkApplyHunks1MB(b *testing.B) {
	old := goLike(1 << 20)
	new := old
	for _, frac := range []int{4, 2, 1} {
		at := len(old) - len(old)/frac/2
		i := strings.Index(new[at:], "\treturn x + ")
		new = new[:at+i] + "\treturn 3*x + " + new[at+i+len("\treturn x + "):]
	}
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		got, err := workspace.ApplyHunks(old, new, []int{1})
		if err != nil || got == old || got == new {
			b.Fatalf("ApplyHunks: %v", err)
		}
	}
}
