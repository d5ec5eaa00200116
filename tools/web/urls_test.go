package web

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

func TestExtractURLs(t *testing.T) {
	tests := []struct {
		name   string
		prompt string
		want   []string
	}{
		{"plain", "Summarize https://example.com/article please",
			[]string{"https://example.com/article"}},
		{"sentence end", "Read https://example.com/a. Then http://example.org/b, and https://example.net/c!",
			[]string{"https://example.com/a", "http://example.org/b", "https://example.net/c"}},
		{"question and colon", "What is at https://example.com/x? See https://example.com/y:",
			[]string{"https://example.com/x", "https://example.com/y"}},
		{"in parentheses", "the docs (https://example.com/docs) say so",
			[]string{"https://example.com/docs"}},
		{"parentheses then period", "(see https://example.com/docs).",
			[]string{"https://example.com/docs"}},
		{"balanced parentheses kept", "see https://en.wikipedia.org/wiki/Go_(programming_language).",
			[]string{"https://en.wikipedia.org/wiki/Go_(programming_language)"}},
		{"balanced parentheses inside parentheses", "(https://en.wikipedia.org/wiki/Go_(programming_language))",
			[]string{"https://en.wikipedia.org/wiki/Go_(programming_language)"}},
		{"markdown link", "Summarize [the article](https://example.com/a?x=1&y=2) now",
			[]string{"https://example.com/a?x=1&y=2"}},
		{"markdown link with URL label", "[https://example.com/a](https://example.com/a)",
			[]string{"https://example.com/a"}},
		{"markdown link with title", `[a](https://example.com/a "The title")`,
			[]string{"https://example.com/a"}},
		{"angle brackets", "<https://example.com/a>", []string{"https://example.com/a"}},
		{"quotes", `"https://example.com/a" and 'https://example.com/b'`,
			[]string{"https://example.com/a", "https://example.com/b"}},
		{"emphasis", "**https://example.com/a**", []string{"https://example.com/a"}},
		{"backticks", "`https://example.com/a`", []string{"https://example.com/a"}},
		{"duplicates", "https://example.com/a https://example.com/a and https://example.com/a.",
			[]string{"https://example.com/a"}},
		{"duplicates after normalisation", "HTTPS://Example.COM/a https://example.com:443/a https://example.com/a#top",
			[]string{"https://example.com/a"}},
		{"path case kept", "https://example.com/A https://example.com/a",
			[]string{"https://example.com/A", "https://example.com/a"}},
		{"non-default port kept", "http://example.com:8080/x", []string{"http://example.com:8080/x"}},
		{"IPv6 literal", "fetch http://[2001:4860:4860::8888]:8080/x.", []string{"http://[2001:4860:4860::8888]:8080/x"}},
		{"glued to a word is not a URL", "xhttps://example.com/a", nil},
		{"other schemes ignored", "ftp://example.com/a and file:///etc/passwd", nil},
		{"no URL", "summarize example.com", nil},
		{"newline separated", "https://example.com/a\nhttps://example.com/b\r\n",
			[]string{"https://example.com/a", "https://example.com/b"}},
		{"github blob to raw", "Explain https://github.com/google-gemini/gemini-cli/blob/main/README.md",
			[]string{"https://raw.githubusercontent.com/google-gemini/gemini-cli/main/README.md"}},
		{"github tree unchanged", "https://github.com/google-gemini/gemini-cli/tree/main/docs",
			[]string{"https://github.com/google-gemini/gemini-cli/tree/main/docs"}},
		{"github blob and raw are one URL", "https://github.com/o/r/blob/v1/a.go https://raw.githubusercontent.com/o/r/v1/a.go",
			[]string{"https://raw.githubusercontent.com/o/r/v1/a.go"}},
	}
	for _, tt := range tests {
		got, err := extractURLs(tt.prompt)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: extractURLs(%q)\n got %q\nwant %q", tt.name, tt.prompt, got, tt.want)
		}
	}
}

func TestExtractURLsMalformed(t *testing.T) {
	for _, prompt := range []string{
		"fetch https:// now",
		"fetch http://:8080/x",
		"fetch https://exa%zzmple.com/",
		"fetch http://1.2.3.256/",    // ends in a number, so must be an IPv4 address
		"fetch http://example.0x10/", // likewise
		"fetch http://0x100000000/",
	} {
		if got, err := extractURLs(prompt); err == nil {
			t.Errorf("extractURLs(%q) = %q, want an error", prompt, got)
		}
	}
}

func TestFetchBuild(t *testing.T) {
	fetch := New(Options{}).Tools()[0]
	var urls []string
	for i := range MaxURLs + 1 {
		urls = append(urls, fmt.Sprintf("https://example.com/%d", i))
	}
	tests := []struct {
		name    string
		prompt  string
		wantErr string // substring of the message; "" for success
	}{
		{"empty", "   ", "cannot be empty"},
		{"no URL", "summarize example.com", "at least one valid URL"},
		{"malformed", "summarize https:// please", "malformed URL"},
		{"21 URLs", "summarize " + strings.Join(urls, " "), "at most 20"},
		{"20 URLs", "summarize " + strings.Join(urls[:MaxURLs], " "), ""},
		{"21 mentions of 20 URLs", "summarize " + strings.Join(urls[:MaxURLs], " ") + " and again " + urls[0], ""},
	}
	for _, tt := range tests {
		inv, err := testutil.Build(t, fetch, jsonArgs("prompt", tt.prompt))
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if testutil.ErrorType(err) != tools.ErrInvalidParams || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: Build = %v, %v; want invalid_tool_params containing %q", tt.name, inv, err, tt.wantErr)
		}
	}
}

func TestFetchConfirmation(t *testing.T) {
	fetch := New(Options{}).Tools()[0]
	prompt := "Compare https://github.com/o/r/blob/main/a.go with https://example.com/b."
	inv, err := testutil.Build(t, fetch, jsonArgs("prompt", prompt))
	if err != nil {
		t.Fatal(err)
	}
	d, err := inv.Confirmation(context.Background())
	if err != nil || d == nil {
		t.Fatalf("Confirmation = %v, %v", d, err)
	}
	want := []string{"https://raw.githubusercontent.com/o/r/main/a.go", "https://example.com/b"}
	if d.Type != "info" || d.Title == "" || d.Prompt != prompt || !slices.Equal(d.URLs, want) {
		t.Errorf("Confirmation = %+v", d)
	}
	if desc := inv.Describe(); !strings.Contains(desc, "Compare https://github.com") {
		t.Errorf("Describe = %q", desc)
	}
	if inv.Locations() != nil {
		t.Errorf("Locations = %v", inv.Locations())
	}
}
