package clients

import (
	"net/http"
	"time"
)

// Internals exposed to the external tests (which cannot be internal: the fake servers
// they use import this package).

var (
	ParseCalls      = parseCalls
	ParseRetryAfter = parseRetryAfter
	ErrorMessage    = errorMessage
)

// FeedPieces runs the text-mode parser over text arriving in pieces.
func FeedPieces(pieces []string) []Part {
	var p callParser
	var out []Part
	for _, s := range pieces {
		out = append(out, p.feed(s, false)...)
	}
	return append(out, p.feed("", true)...)
}

// RetryAfterBody reads a Google RetryInfo delay from an error body.
func RetryAfterBody(body []byte) (time.Duration, bool) {
	return retryAfter(http.Header{}, body, time.Time{})
}
