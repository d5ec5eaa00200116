package web

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// urlStart finds where a URL begins: an http or https scheme not glued to a preceding
// word.
var urlStart = regexp.MustCompile(`(?i)\bhttps?://`)

// extractURLs returns the distinct http(s) URLs written in prompt, in order of first
// appearance, normalised (lower-case host, no default port, no fragment) and with GitHub
// blob pages replaced by their raw content. Prose around a URL is left out: trailing
// punctuation, the parenthesis or bracket of a Markdown link, angle brackets. A URL that
// does not parse is an error, as in Gemini CLI, so that the model fixes it rather than
// getting less than it asked for.
func extractURLs(prompt string) ([]string, error) {
	var urls []string
	seen := map[string]bool{}
	for _, loc := range urlStart.FindAllStringIndex(prompt, -1) {
		raw := trimURL(scanURL(prompt[loc[0]:], loc[1]-loc[0]))
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			return nil, fmt.Errorf("malformed URL in the prompt: %q", raw)
		}
		if _, _, err := hostAddr(u.Hostname()); err != nil {
			// A browser refuses it too: "1.2.3.256" is neither an address nor a name.
			return nil, fmt.Errorf("malformed URL in the prompt: %q: %w", raw, err)
		}
		normalizeURL(u)
		s := githubRaw(u).String()
		if !seen[s] {
			seen[s] = true
			urls = append(urls, s)
		}
	}
	return urls, nil
}

// scanURL returns the longest prefix of s, which starts with a scheme of n bytes, made of
// characters a URL in prose can hold: it ends at white space and at characters that
// delimit rather than belong to URLs. Square brackets belong only around an IPv6 host.
func scanURL(s string, n int) string {
	i := n
	if i < len(s) && s[i] == '[' {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			i += j + 1
		}
	}
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("<>\"`{}|\\^[]", r) {
			break
		}
		i += size
	}
	return s[:i]
}

// trimURL drops what prose puts right after a URL: sentence punctuation, quotes,
// emphasis, and closing parentheses that have no opening one in the URL (so that
// "(see https://example.com/a_(b))" keeps its balanced pair).
func trimURL(u string) string {
	for {
		n := len(u)
		switch last := u[len(u)-1]; {
		case strings.IndexByte(".,;:!?'*~", last) >= 0:
			u = u[:len(u)-1]
		case last == ')' && strings.Count(u, ")") > strings.Count(u, "("):
			u = u[:len(u)-1]
		}
		if len(u) == n || strings.HasSuffix(u, "://") {
			return u
		}
	}
}

// normalizeURL makes equal URLs equal strings: the host in lower case without a default
// port, and no fragment, which is never sent.
func normalizeURL(u *url.URL) {
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	if port := u.Port(); (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		u.Host = strings.TrimSuffix(u.Host, ":"+port)
	}
	u.Fragment, u.RawFragment = "", ""
}

// githubBlob matches the path of a file page on GitHub: /owner/repo/blob/ref/path.
var githubBlob = regexp.MustCompile(`^/([^/]+/[^/]+)/blob/`)

// githubRaw returns, for a file page on github.com, the URL of the file's raw content,
// which is what a model asking for the file wants; other URLs are returned unchanged.
// Gemini CLI does the same.
func githubRaw(u *url.URL) *url.URL {
	if (u.Hostname() != "github.com" && u.Hostname() != "www.github.com") || !githubBlob.MatchString(u.Path) {
		return u
	}
	r := *u
	r.Host = "raw.githubusercontent.com"
	r.Path = githubBlob.ReplaceAllString(u.Path, "/$1/")
	r.RawPath = ""
	return &r
}
