package mcp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateDelay is how long a stdio server may take to exit once its stdin is closed,
// before its process group is sent SIGTERM (see conn.close); the SDK signals and then
// kills the process itself should it still run after twice as long.
const terminateDelay = 2 * time.Second

// expand replaces $VAR and ${VAR} in s with values from getenv.
func expand(s string, getenv func(string) string) string {
	return os.Expand(s, getenv)
}

// transport builds the transport of the server from its configuration. life bounds
// the connection's long-lived parts (the SSE stream); stderr receives a stdio server's
// standard error.
func (m *Manager) transport(life context.Context, s *server, stderr *stderrLog) (sdk.Transport, error) {
	cfg := s.cfg
	kind, err := cfg.Transport()
	if err != nil {
		return nil, err
	}
	switch kind {
	case TransportStdio:
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Dir = m.dir
		if cfg.Cwd != "" {
			dir := cfg.Cwd
			if !filepath.IsAbs(dir) && m.dir != "" {
				dir = filepath.Join(m.dir, dir)
			}
			cmd.Dir = dir
		}
		env := os.Environ()
		for _, k := range sortedKeys(cfg.Env) {
			env = append(env, k+"="+expand(cfg.Env[k], m.getenv))
		}
		cmd.Env = env
		cmd.Stderr = stderr
		// A grandchild holding stderr open must not keep Wait, and so Close, blocked.
		cmd.WaitDelay = terminateDelay
		ownProcessGroup(cmd)
		// The SDK signals the process it started this long after closing its stdin;
		// conn.close signals the process group halfway (see there).
		return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * terminateDelay}, nil
	case TransportSSE:
		return &sseTransport{
			inner: &sdk.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: m.httpClient(s)},
			life:  life,
		}, nil
	default:
		endpoint := cfg.URL
		if endpoint == "" {
			endpoint = cfg.HTTPURL
		}
		return &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: m.httpClient(s), MaxRetries: 1}, nil
	}
}

// httpClient returns the HTTP client of the server: it adds the configured headers,
// expanded from the environment, to every request, and counts progress notifications
// (see sseCounter).
func (m *Manager) httpClient(s *server) *http.Client {
	var rt http.RoundTripper = http.DefaultTransport
	if len(s.cfg.Headers) > 0 {
		h := make(http.Header, len(s.cfg.Headers))
		for k, v := range s.cfg.Headers {
			h.Set(k, expand(v, m.getenv))
		}
		rt = &headerTransport{base: rt, headers: h}
	}
	if o := s.currentOAuth(); o != nil {
		rt = &authTransport{o: o, base: rt}
	}
	return &http.Client{Transport: &sseCounter{base: rt, s: s}}
}

// headerTransport adds headers to each request.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, vs := range t.headers {
		req.Header[k] = slices.Clone(vs)
	}
	return t.base.RoundTrip(req)
}

// sseTransport connects an SSE client transport whose event stream lives as long as
// life, while the context of Connect only bounds the connection attempt: the SDK opens
// the stream with the context it is given, so handing it a timeout would end the
// stream with the timeout.
type sseTransport struct {
	inner sdk.Transport
	life  context.Context
}

func (t *sseTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	type result struct {
		conn sdk.Connection
		err  error
	}
	done := make(chan result, 1)
	go func() {
		// A stream that never opens is ended with life, which dial cancels when the
		// attempt fails.
		c, err := t.inner.Connect(t.life)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.conn, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.conn != nil {
				_ = r.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// stderrLog writes a stdio server's standard error to the log, a line at a time, with
// bounds: lines are cut at maxStderrLine bytes and after maxStderrLines lines only a
// count is kept. It remembers the last few lines to explain a crash.
type stderrLog struct {
	logger *slog.Logger
	server string

	mu      sync.Mutex
	partial []byte
	lines   int
	dropped int
	tail    []string
}

const (
	maxStderrLine  = 1000
	maxStderrLines = 500
	stderrTail     = 3
)

func newStderrLog(logger *slog.Logger, server string) *stderrLog {
	return &stderrLog{logger: logger, server: server}
}

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := max(0, maxStderrLine-len(l.partial))
			l.partial = append(l.partial, p[:min(room, len(p))]...)
			break
		}
		room := max(0, maxStderrLine-len(l.partial))
		l.partial = append(l.partial, p[:min(room, i)]...)
		l.line(string(l.partial))
		l.partial = l.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// line handles one complete line; l.mu is held.
func (l *stderrLog) line(s string) {
	s = strings.TrimRight(s, "\r")
	if strings.TrimSpace(s) == "" {
		return
	}
	l.tail = append(l.tail, s)
	if len(l.tail) > stderrTail {
		l.tail = l.tail[1:]
	}
	l.lines++
	switch {
	case l.lines <= maxStderrLines:
		l.logger.Info("MCP server stderr", "server", l.server, "line", s)
	case l.lines == maxStderrLines+1:
		l.logger.Warn("MCP server writes much to stderr; further lines are not logged", "server", l.server)
		fallthrough
	default:
		l.dropped++
	}
}

// lastLines returns the last lines written, joined, for an error message.
func (l *stderrLog) lastLines() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	tail := slices.Clone(l.tail)
	if len(l.partial) > 0 {
		tail = append(tail, string(l.partial))
	}
	return strings.Join(tail, " | ")
}

// describeExit explains why a stdio server's process ended.
func describeExit(err error, stderr *stderrLog) string {
	msg := "the server closed the connection"
	if err != nil {
		msg = fmt.Sprintf("the server exited (%v)", err)
	}
	if tail := stderr.lastLines(); tail != "" {
		msg += "; its last output on stderr: " + tail
	}
	return msg
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
