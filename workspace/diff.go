package workspace

import (
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// UnifiedDiff returns the unified diff, with three lines of context, that turns old into
// new, with path (relative or absolute, as the caller wants it shown) in the headers. An
// empty old with isNew set diffs against /dev/null. Identical texts give "".
func UnifiedDiff(path, old, new string, isNew bool) string {
	if old == new && !isNew {
		return ""
	}
	from := "a/" + strings.TrimPrefix(path, "/")
	if isNew {
		from = "/dev/null"
	}
	return udiff.Unified(from, "b/"+strings.TrimPrefix(path, "/"), old, new)
}
