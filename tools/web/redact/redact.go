// Package redact removes secrets from URLs, and from text that quotes URLs, before the
// text reaches an error message, a log line or a tool result: the password (or the lone
// user name, which is how tokens are often passed) of a URL's userinfo, and the values
// of query and fragment parameters whose names say they are secret (api_key, token,
// X-Amz-Signature, client_secret, code and the like). What is left still says which
// server was meant.
//
// The package imports nothing of agentls's, so that every layer may use it, the model
// clients included.
package redact

import (
	"net/url"
	"strings"
	"unicode"
)

// Mask is what a secret is replaced with, as url.URL.Redacted does.
const Mask = "xxxxx"

// URL returns u as a string with its secrets masked. Unlike u.Redacted it also masks
// secret query parameters and a userinfo that is a user name alone.
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	return Text(u.String())
}

// Text returns s with the secrets of every URL in it masked: the userinfo of anything
// written scheme://userinfo@host, and the value of every name=value parameter with a
// secret name that follows a '?', '&', ';' or '#' (so also a query quoted without its
// URL, as in "GET /mcp?token=…", and one whose '&' is written "&amp;" or "\u0026").
// Everything else is kept as it is written, so an error message stays readable.
func Text(s string) string {
	return params(userinfo(s))
}

// stop reports whether c ends a URL written in prose or quoted in an error message.
func stop(c byte) bool {
	return c <= ' ' || c == 0x7f || strings.IndexByte("\"'<>`\\", c) >= 0
}

// userinfo masks the userinfo of each scheme://userinfo@host in s.
func userinfo(s string) string {
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		if !isScheme(rest[:i]) {
			b.WriteString(rest[:i+3])
			rest = rest[i+3:]
			continue
		}
		b.WriteString(rest[:i+3])
		rest = rest[i+3:]
		// The authority ends where the path, query or fragment begins, or the URL.
		end := 0
		for end < len(rest) && !stop(rest[end]) && strings.IndexByte("/?#", rest[end]) < 0 {
			end++
		}
		at := strings.LastIndexByte(rest[:end], '@')
		if at <= 0 {
			continue
		}
		if user, _, hasPassword := strings.Cut(rest[:at], ":"); hasPassword {
			b.WriteString(user + ":" + Mask)
		} else {
			// A user name alone is how many services take a token
			// (https://<token>@github.com/…).
			b.WriteString(Mask)
		}
		rest = rest[at:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(rest)
	return b.String()
}

// isScheme reports whether s ends in a URL scheme: a letter, then letters, digits, '+',
// '-' or '.' (RFC 3986).
func isScheme(s string) bool {
	i := len(s)
	for i > 0 && isSchemeChar(s[i-1]) {
		i--
	}
	for i < len(s) && !isLetter(s[i]) {
		i++ // "1http://": the scheme starts at the first letter
	}
	return i < len(s)
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isSchemeChar(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

// endsValue reports whether a parameter's value ends where s begins. A backslash ends
// it only where it escapes a quote, white space or '&' (a URL quoted in Go or JSON); in
// a value quoted with %q, other escapes (\u00e9) are part of it.
func endsValue(s string) bool {
	switch c := s[0]; {
	case c == '\\':
		return len(s) == 1 || strings.IndexByte(`"'nrt\`, s[1]) >= 0 || strings.HasPrefix(s, `\u0026`)
	case strings.IndexByte("&;#", c) >= 0:
		return true
	default:
		return stop(c)
	}
}

// params masks the value of each secret name=value parameter in s.
func params(s string) string {
	var b strings.Builder
	last := 0 // s[:last] is written to b
	for i := 0; i < len(s); i++ {
		var start int // where the parameter's name starts
		switch {
		case strings.IndexByte("?&;#", s[i]) >= 0:
			start = i + 1
		case strings.HasPrefix(s[i:], `\u0026`): // '&' in a JSON string
			start = i + len(`\u0026`)
		default:
			continue
		}
		eq := start
		for eq < len(s) && !stop(s[eq]) && strings.IndexByte("=?&;#", s[eq]) < 0 {
			eq++
		}
		if eq == start || eq == len(s) || s[eq] != '=' || !secretName(s[start:eq]) {
			continue
		}
		end := eq + 1
		for end < len(s) && !endsValue(s[end:]) {
			end++
		}
		// Punctuation at the end belongs to the prose around the URL ("…?key=K: refused",
		// "{URL:…?key=K}"); secrets seldom end in it.
		for end > eq+2 && strings.IndexByte(".,:!?)]}", s[end-1]) >= 0 {
			end--
		}
		if end == eq+1 {
			continue // no value
		}
		b.WriteString(s[last : eq+1])
		b.WriteString(Mask)
		last = end
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// isSecretWord reports whether a word makes a parameter's name secret wherever it
// appears in it: "token" makes access_token, refresh_token, X-Amz-Security-Token and
// oauth_token secret. Masking a parameter that was not secret costs a little
// readability; leaking one that was costs the secret.
func isSecretWord(w string) bool {
	switch w {
	case "apikey", "auth", "authorization", "bearer", "code", "cookie", "credential",
		"credentials", "jsessionid", "jwt", "key", "pass", "passphrase", "passwd",
		"password", "pwd", "secret", "session", "sessionid", "sig", "signature", "token":
		return true
	}
	return false
}

// isSecretName reports whether a name run together from words that are not secret
// themselves is.
func isSecretName(joined string) bool {
	switch joined {
	case "accesskey", "accesstoken", "apitoken", "authtoken", "clientsecret", "hapikey",
		"privatetoken", "refreshtoken", "secretkey", "sessiontoken":
		return true
	}
	return false
}

// secretName reports whether a query parameter called name holds a secret. Names are
// compared case-insensitively, by their words: api_key, api-key, apiKey and APIKEY are
// the same name.
func secretName(name string) bool {
	if u, err := url.QueryUnescape(name); err == nil {
		name = u
	}
	words := splitWords(name)
	if len(words) == 0 {
		return false
	}
	joined := strings.ToLower(strings.Join(words, ""))
	if isSecretName(joined) || isSecretWord(joined) {
		return true
	}
	for _, w := range words {
		if isSecretWord(strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// splitWords splits a name at everything but letters and digits, and where a lower-case
// letter is followed by an upper-case one ("apiKey" is "api", "Key").
func splitWords(name string) []string {
	var words []string
	start := -1
	prev := rune(0)
	for i, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			if start >= 0 {
				words = append(words, name[start:i])
				start = -1
			}
		case start < 0:
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			words = append(words, name[start:i])
			start = i
		}
		prev = r
	}
	if start >= 0 {
		words = append(words, name[start:])
	}
	return words
}

// Error returns err with the secrets of the URLs in its message masked, or err itself
// when its message holds none. The error returned wraps err, so errors.Is and errors.As
// still find the cause, whose own message is left as it is.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if masked := Text(msg); masked != msg {
		return &maskedError{msg: masked, err: err}
	}
	return err
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }
