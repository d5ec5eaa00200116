package files

import (
	"fmt"
	"strings"
)

// Limits of the updated region an edit's result shows.
const (
	// regionWholeFile is the most lines a file may have to be shown whole.
	regionWholeFile = 40
	// regionContext is the number of unchanged lines shown around the changed ones.
	regionContext = 5
	// regionMaxLines and regionMaxChars bound the region shown.
	regionMaxLines = 120
	regionMaxChars = 12_000
)

// updatedRegion shows the model what an edit left, as Gemini CLI does: the whole file
// when it is small, else the changed lines with regionContext lines around them, "..."
// standing for the lines left out. before and after are the file's text. It costs a few
// passes of memory comparison over the text, not a split into lines, so that an edit of
// a large file stays fast.
func updatedRegion(before, after string) string {
	if after == "" {
		return "The file is now empty."
	}
	// The changed bytes of after are [p, len(after)-q).
	p := commonPrefix(before, after)
	q := commonSuffix(before[p:], after[p:])
	start, end := 0, len(after) // the bytes of the lines shown
	if !fewLines(after, regionWholeFile) {
		start = strings.LastIndexByte(after[:p], '\n') + 1
		for range regionContext {
			if start == 0 {
				break
			}
			start = strings.LastIndexByte(after[:start-1], '\n') + 1
		}
		end = max(len(after)-q, start)
		if end > 0 && after[end-1] == '\n' && end > p {
			end-- // the change ends with a whole line
		}
		for range regionContext + 1 {
			i := strings.IndexByte(after[end:], '\n')
			if i < 0 {
				end = len(after)
				break
			}
			end += i + 1
		}
	}
	region := strings.TrimSuffix(after[start:end], "\n")
	// One pass over the text counts the lines before the region and after it.
	from := strings.Count(after[:start], "\n") + 1
	n := strings.Count(region, "\n") + 1
	total := from - 1 + strings.Count(after[start:], "\n")
	if !strings.HasSuffix(after, "\n") {
		total++
	}
	var b strings.Builder
	if from == 1 && from+n-1 >= total {
		b.WriteString("Here is the updated code (the whole file):\n")
	} else {
		fmt.Fprintf(&b, "Here is the updated code (lines %d-%d of %d):\n", from, from+n-1, total)
	}
	if from > 1 {
		b.WriteString("...\n")
	}
	shown := 0
	for line := range strings.Lines(region) {
		if shown >= regionMaxLines || b.Len()+len(line) > regionMaxChars {
			fmt.Fprintf(&b, "... (%d more lines not shown; read the file to see them)\n", n-shown)
			return strings.TrimRight(b.String(), "\n")
		}
		b.WriteString(line)
		shown++
	}
	if from+n-1 < total {
		b.WriteString("\n...")
	}
	return strings.TrimRight(b.String(), "\n")
}

// fewLines reports whether text has at most n lines, looking at no more of it than
// that takes.
func fewLines(text string, n int) bool {
	for range n {
		j := strings.IndexByte(text, '\n')
		if j < 0 || j == len(text)-1 {
			return true
		}
		text = text[j+1:]
	}
	return false
}

// commonPrefix returns the length of the longest common prefix of a and b, comparing
// blocks first so that long equal runs cost memory comparisons, not a byte loop.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for block := 4096; block > 0; block /= 8 {
		for i+block <= n && a[i:i+block] == b[i:i+block] {
			i += block
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is commonPrefix from the ends of a and b.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for block := 4096; block > 0; block /= 8 {
		for i+block <= n && a[len(a)-i-block:len(a)-i] == b[len(b)-i-block:len(b)-i] {
			i += block
		}
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}
