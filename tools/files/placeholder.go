package files

import (
	"strings"
	"unicode"

	"github.com/agentls/agentls/tools"
)

// Omission placeholders: a model that rewrites a file or a region sometimes writes a
// comment such as "// rest of code ..." or "/* unchanged */" instead of the code it
// means to keep. Written to disk, that comment replaces the code. write_file and
// replace refuse such lines, unless the file already holds the same line (then it is
// the file's own comment, kept).

// commentOpenings and commentClosings are the marks of comments, in the common
// syntaxes, that may wrap a placeholder line. Longer marks come first, so that "{/*" is
// taken before "/*" and ";;" before ";".
func commentOpenings() []string {
	return []string{"{/*", "<!--", "/**", "/*", "(*", "{-", "//", "--", "#", ";;", ";", "%"}
}

func commentClosings() []string { return []string{"*/}", "-->", "*/", "*)", "-}"} }

// isPlaceholderWord reports whether w is one of the words a placeholder is made of; a
// comment with any other word describes something and is left alone.
func isPlaceholderWord(w string) bool {
	switch w {
	case "rest", "of", "the", "code", "file", "unchanged", "existing", "remaining", "remainder",
		"omitted", "for", "brevity", "same", "as", "before", "previous", "previously", "original",
		"other", "methods", "method", "functions", "function", "implementation", "body", "content",
		"contents", "here", "goes", "go", "keep", "kept", "stays", "stay", "remains", "remain", "is",
		"are", "no", "changes", "changed", "lines", "line", "imports", "etc", "and", "class", "module",
		"untouched", "intact", "above", "below", "this", "logic", "fields", "properties", "styles",
		"tests", "cases", "helpers", "handlers", "components", "elements", "items", "entries",
		"members", "props", "markup", "section", "sections", "block", "blocks", "like", "more",
		"unmodified", "everything", "else", "all", "similar", "similarly", "elided", "skipped",
		"truncated", "abbreviated", "snip", "snipped", "to":
		return true
	}
	return false
}

// isStrongPlaceholderWord reports whether w makes a comment of placeholder words a
// placeholder even without an ellipsis ("/* unchanged */", "// existing code"). Without
// one of them, a comment such as "// other methods" needs an ellipsis to count.
func isStrongPlaceholderWord(w string) bool {
	switch w {
	case "unchanged", "omitted", "brevity", "existing", "remaining", "remainder", "unmodified",
		"untouched", "elided", "snip", "snipped", "truncated", "abbreviated":
		return true
	}
	return false
}

// isPlaceholderLine reports whether line, on its own, is an omission placeholder: a
// comment (or a parenthesised remark) that holds only an ellipsis, or only words such as
// "rest of code", "existing code" or "unchanged" with an ellipsis or a word that says
// something was left out.
func isPlaceholderLine(line string) bool {
	s := strings.TrimSpace(line)
	if s == "" || len(s) > 200 {
		return false
	}
	body, comment := stripComment(s)
	if !comment {
		// Not a comment: only a parenthesised remark such as "(rest of methods ...)".
		if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
			return false
		}
		body = s[1 : len(s)-1]
	}
	ellipsis := strings.Contains(body, "...") || strings.Contains(body, "…")
	body = strings.NewReplacer("...", " ", "…", " ").Replace(body)
	words := strings.FieldsFunc(strings.ToLower(body), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\''
	})
	if len(words) == 0 {
		// Only an ellipsis and punctuation: "// ...", "<!-- ... -->", "# …".
		return ellipsis && strings.Trim(body, " \t.,;:-_()[]{}<>*/#!") == ""
	}
	if len(words) > 10 {
		return false
	}
	strong := false
	for _, w := range words {
		w = strings.Trim(w, "'")
		if !isPlaceholderWord(w) {
			return false
		}
		strong = strong || isStrongPlaceholderWord(w)
	}
	return ellipsis || strong || hasRestOf(words)
}

// hasRestOf reports whether words hold "rest of", as in "// rest of the file".
func hasRestOf(words []string) bool {
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "rest" && words[i+1] == "of" {
			return true
		}
	}
	return false
}

// stripComment removes the comment marks around s, a trimmed line, and reports whether
// it was a comment.
func stripComment(s string) (string, bool) {
	opened := false
	for _, o := range commentOpenings() {
		if strings.HasPrefix(s, o) {
			s, opened = s[len(o):], true
			break
		}
	}
	if !opened {
		return s, false
	}
	for _, c := range commentClosings() {
		if strings.HasSuffix(s, c) {
			s = s[:len(s)-len(c)]
			break
		}
	}
	return strings.TrimSpace(s), true
}

// placeholderIn returns the first line of text that is an omission placeholder and that
// original (the file's text before the change; "" for a new file) does not hold as a
// line of its own; "" if there is none.
func placeholderIn(text, original string) string {
	for line := range strings.Lines(text) {
		if !isPlaceholderLine(line) {
			continue
		}
		if hasLine(original, strings.TrimSpace(line)) {
			continue
		}
		return strings.TrimSpace(line)
	}
	return ""
}

// hasLine reports whether text has a line that is want apart from the whitespace around
// it.
func hasLine(text, want string) bool {
	for pos := 0; pos < len(text); {
		i := strings.Index(text[pos:], want)
		if i < 0 {
			return false
		}
		start, end := lineAt(text, pos+i)
		if strings.TrimSpace(text[start:end]) == want {
			return true
		}
		pos = end + 1
	}
	return false
}

// placeholderError is the refusal of content holding the placeholder line; param names
// the parameter ("content" or "new_string") and what the full text is.
func placeholderError(param, line, what string) error {
	return tools.Errorf(tools.ErrInvalidParams,
		"%s contains an omission placeholder: the line %q stands for code that is left out, and writing it would delete that code. "+
			"No changes were made. Write %s in full, with every line that should be in the file; "+
			"do not abbreviate with comments such as \"rest of code ...\" or \"unchanged\".",
		param, line, what)
}

// checkPlaceholder returns placeholderError for the first placeholder line of text that
// original lacks, or nil.
func checkPlaceholder(param, text, original, what string) error {
	if line := placeholderIn(text, original); line != "" {
		return placeholderError(param, line, what)
	}
	return nil
}
