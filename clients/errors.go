package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/agentls/agentls/tools/web/redact"
)

// Error is a failed model call, described so that a person knows what to fix: which key
// was rejected, which URL did not answer, what the server said. It never holds the key.
type Error struct {
	// StatusCode is the HTTP status of the failure; 0 when no answer came.
	StatusCode int
	msg        string
	// code is the error code of the server's error body, when it gave a string one
	// (OpenAI's "context_length_exceeded").
	code string
	err  error
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the underlying SDK or network error.
func (e *Error) Unwrap() error { return e.err }

// endpoint describes where a client sends its calls, for error messages.
type endpoint struct {
	// name prefixes messages, e.g. "gemini (gemini-2.5-flash)".
	name string
	// url is the base URL shown when the server cannot be reached.
	url string
	// credential says where the key came from ("the API key in GEMINI_API_KEY"); empty
	// when none was given.
	credential string
	// keyHint names what to set when no credential was given and one is needed.
	keyHint string
	// secret is removed from every message.
	secret string
}

// errorf returns an *Error with a message that shows neither the key nor the secrets
// of URLs: messages name the base URL, and the SDKs' errors quote request URLs, whose
// userinfo or query (a proxy's ?key=) may hold credentials.
func (ep endpoint) errorf(status int, err error, format string, args ...any) *Error {
	msg := ep.name + ": " + fmt.Sprintf(format, args...)
	if ep.secret != "" {
		msg = strings.ReplaceAll(msg, ep.secret, "[redacted]")
	}
	return &Error{StatusCode: status, msg: redact.Text(msg), err: err}
}

// statusError describes an HTTP failure: status, the server's message, and how many
// attempts the retry transport made (0 when unknown).
func (ep endpoint) statusError(status int, message string, attempts int, err error) *Error {
	message = strings.TrimSpace(message)
	if message == "" {
		message = http.StatusText(status)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		if ep.credential == "" {
			return ep.errorf(status, err, "%s refused the request without an API key (%d): %s; set %s", ep.url, status, message, ep.keyHint)
		}
		return ep.errorf(status, err, "%s was rejected (%d): %s", ep.credential, status, message)
	case status == http.StatusBadRequest:
		return ep.errorf(status, err, "the request was rejected (400): %s", message)
	case status == http.StatusNotFound:
		return ep.errorf(status, err, "not found at %s (404), check the model name: %s", ep.url, message)
	case status == http.StatusTooManyRequests:
		return ep.errorf(status, err, "rate limited (429)%s: %s", afterAttempts(attempts), message)
	case status >= 500:
		return ep.errorf(status, err, "server error %d%s: %s", status, afterAttempts(attempts), message)
	default:
		return ep.errorf(status, err, "HTTP %d: %s", status, message)
	}
}

func afterAttempts(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" after %d attempts", n)
}

// transportError describes a failure to get any answer; ctx errors pass through so that
// callers can tell a cancellation.
func (ep endpoint) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return ep.errorf(0, err, "cannot connect to %s: connection refused (is the server running?)", ep.url)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return ep.errorf(0, err, "cannot resolve the host of %s: %v", ep.url, dnsErr)
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return ep.errorf(0, err, "cannot reach %s: %v", ep.url, netErr)
	}
	return ep.errorf(0, err, "%v", err)
}

// callError describes a failed call from what the retry transport saw of the answer and
// from the SDK's error (sdkStatus and sdkMsg, for failures inside a stream that started
// well).
func (ep endpoint) callError(ctx context.Context, err error, ci *callInfo, sdkStatus int, sdkMsg string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	attempts, status, body, wait := ci.get()
	if status >= 400 {
		msg := errorMessage(body)
		if msg == "" {
			msg = sdkMsg
		}
		if wait > 0 {
			msg = fmt.Sprintf("the server asks to wait %v before trying again: %s", wait, msg)
		}
		e := ep.statusError(status, msg, attempts, err)
		e.code = errorCode(body)
		return e
	}
	if sdkStatus >= 400 {
		return ep.statusError(sdkStatus, sdkMsg, attempts, err)
	}
	return ep.transportError(ctx, err)
}

// errorMessage finds the server's explanation in an error body: the message of Google's
// and OpenAI's {"error": {"message": …}}, Ollama's {"error": "…"}, or the text itself.
func errorMessage(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	var shapes []json.RawMessage
	if body[0] == '[' {
		// Google APIs sometimes wrap the error in an array.
		_ = json.Unmarshal(body, &shapes)
	} else {
		shapes = []json.RawMessage{body}
	}
	for _, raw := range shapes {
		var e struct {
			Error   json.RawMessage `json:"error"`
			Message string          `json:"message"`
		}
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case e.Message != "":
			return e.Message
		}
	}
	text := string(body)
	if len(text) > 500 {
		text = text[:500] + "…"
	}
	return text
}

// errorCode finds the string code of an error body, {"error": {"code": "…"}}.
func errorCode(body []byte) string {
	var e struct {
		Error struct {
			Code any `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &e) != nil {
		return ""
	}
	code, _ := e.Error.Code.(string)
	return code
}

// contextOverflow holds what servers say, in lower case, when a request is larger than
// the model's context window: Gemini ("The input token count (N) exceeds the maximum
// number of tokens allowed (M)."), OpenAI and vLLM ("This model's maximum context length
// is N tokens…", code context_length_exceeded), llama.cpp ("the request exceeds the
// available context size").
var contextOverflow = []string{
	"exceeds the maximum number of tokens",
	"input token count",
	"context_length_exceeded",
	"maximum context length",
	"exceeds the available context size",
	"exceed_context_size_error",
}

// IsContextOverflow reports whether err is a model call that failed because the request
// is larger than the model's context window, which shortening the history (compression)
// can fix; no retry of the same request can.
func IsContextOverflow(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.StatusCode == 0 {
		return false
	}
	msg := strings.ToLower(e.msg + " " + e.code)
	for _, s := range contextOverflow {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
