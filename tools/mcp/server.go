package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/web/redact"
)

// Backoff between failed connection attempts: the first retry may come after
// backoffBase, each further one after twice the previous wait, up to backoffMax. The
// first attempt after a connection is lost is never delayed.
const (
	backoffBase = 2 * time.Second
	backoffMax  = 2 * time.Minute
)

// clientVersion is the version agentls reports to servers.
const clientVersion = "0.1.0"

// conn is one connection to a server.
type conn struct {
	sess  *sdk.ClientSession
	stdio bool
	// cmd is the process of a stdio server started from its configuration.
	cmd       *exec.Cmd
	cancel    context.CancelFunc // ends the connection's long-lived context
	stderr    *stderrLog
	done      chan struct{} // closed when the connection has ended and reason is set
	reason    string
	closeOnce sync.Once
	closeErr  error
}

// close closes the session once and returns what closing it returned (for a stdio
// server, how its process ended).
func (c *conn) close() error {
	c.closeOnce.Do(func() {
		if c.cmd == nil {
			c.closeErr = c.sess.Close()
			c.cancel()
			return
		}
		// The SDK closes the server's stdin and signals the process it started if it
		// has not ended after 2*terminateDelay. Before that, after terminateDelay,
		// its whole group is sent SIGTERM, so that a server behind a wrapper goes
		// too; what is left once the process has ended is stopped after.
		closed := make(chan struct{})
		go func() {
			t := time.NewTimer(terminateDelay)
			defer t.Stop()
			select {
			case <-closed:
			case <-t.C:
				terminateGroup(c.cmd)
			}
		}()
		c.closeErr = c.sess.Close()
		close(closed)
		stopGroup(c.cmd, terminateDelay)
		c.cancel()
	})
	return c.closeErr
}

// server is the state of one configured server.
type server struct {
	m    *Manager
	name string
	cfg  ServerConfig

	statusMu sync.Mutex // orders OnStatus calls
	reloadMu sync.Mutex // serialises tool list loads
	tokens   atomic.Int64

	mu         sync.Mutex
	state      State
	reason     string
	conn       *conn
	connecting chan struct{} // closed when the running connection attempt ends
	failures   int           // failed attempts since the last success
	retryAt    time.Time
	invalid    error  // the configuration cannot work; no attempt is made
	oauth      *oauth // nil for a server without OAuth
	tools      []tools.Tool
	toolNames  map[string]string // the server's tool name → registered name
	prompts    bool
	resources  bool
	calls      map[string]*progressSink // by progress token
	// completions are closed when the server says a URL elicitation is complete,
	// by elicitation id (urlRequired).
	completions map[string]chan struct{}
}

func newServer(m *Manager, name string, cfg ServerConfig) *server {
	s := &server{m: m, name: name, cfg: cfg, state: StateDisconnected, calls: map[string]*progressSink{}}
	if m.opts.Transport == nil {
		if err := cfg.Validate(); err != nil {
			s.invalid = fmt.Errorf("invalid configuration: %w", err)
			s.state, s.reason = StateError, s.invalid.Error()
		}
	}
	if s.invalid == nil && m.opts.Transport == nil {
		o, err := newOAuth(s)
		if err != nil {
			s.invalid = fmt.Errorf("invalid configuration: %w", err)
			s.state, s.reason = StateError, s.invalid.Error()
		}
		s.oauth = o
	}
	return s
}

// status returns the server's status.
func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusLocked()
}

func (s *server) statusLocked() ServerStatus {
	kind, _ := s.cfg.Transport()
	return ServerStatus{Name: s.name, State: s.state, Error: s.reason, Transport: kind,
		Description: s.cfg.Description, Tools: len(s.tools), Prompts: s.prompts,
		Resources: s.resources, Trusted: s.cfg.Trust}
}

// transition changes the state under s.mu by calling change, then reports the new
// status; reports of one server never overtake each other.
func (s *server) transition(change func()) { s.transitionThen(change, nil) }

// transitionThen is transition with then, when not nil, run after the change and
// before the new status is reported.
func (s *server) transitionThen(change, then func()) {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	s.mu.Lock()
	old := s.statusLocked()
	change()
	st := s.statusLocked()
	s.mu.Unlock()
	if then != nil {
		then()
	}
	if st != old && s.m.opts.OnStatus != nil {
		s.m.opts.OnStatus(st)
	}
}

// reasonClosed is the reason of a server's state once the manager is closed.
const reasonClosed = "agentls closed the connection"

// errClosed is returned once the manager is closed.
var errClosed = errors.New("the MCP manager is closed")

// session returns the server's session, connecting first if there is none and the
// backoff allows. Concurrent callers share one connection attempt.
func (s *server) session(ctx context.Context) (*conn, error) {
	for {
		s.mu.Lock()
		// Checked under s.mu: either Close sees the attempt this starts and waits for
		// it, or the attempt is not started.
		if s.m.closed.Load() {
			s.mu.Unlock()
			return nil, errClosed
		}
		if s.conn != nil {
			c := s.conn
			s.mu.Unlock()
			return c, nil
		}
		if s.invalid != nil {
			s.mu.Unlock()
			return nil, s.invalid
		}
		if ch := s.connecting; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if wait := time.Until(s.retryAt); wait > 0 {
			reason := s.reason
			s.mu.Unlock()
			return nil, fmt.Errorf("%s (the next attempt to connect is in %s)", reason, wait.Round(100*time.Millisecond))
		}
		ch := make(chan struct{})
		s.connecting = ch
		s.mu.Unlock()

		c, err := s.connect(ctx)
		s.mu.Lock()
		s.connecting = nil
		close(ch)
		s.mu.Unlock()
		return c, err
	}
}

// connect makes one connection attempt.
func (s *server) connect(ctx context.Context) (*conn, error) {
	s.transition(func() { s.state, s.reason = StateConnecting, "" })
	log := s.m.logger.With("server", s.name)
	log.Info("connecting to MCP server")
	start := time.Now()

	c, err := s.dial(ctx)
	// What the SDK and net/http say of a failed connection quotes the server's URL;
	// the reason becomes the status, tool errors and log lines, which must not show
	// its secrets.
	err = redact.Error(err)
	if err != nil {
		if s.m.closed.Load() {
			// Close cut the attempt short: the server is closed, not failed.
			s.transition(func() { s.state, s.reason = StateDisconnected, reasonClosed })
			return nil, errClosed
		}
		if ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
			// The caller gave up; that says nothing about the server.
			s.transition(func() { s.state, s.reason = StateDisconnected, "the connection attempt was cancelled" })
			return nil, err
		}
		reason := fmt.Sprintf("MCP server %q could not be started: %v", s.name, err)
		if kind, _ := s.cfg.Transport(); kind != TransportStdio {
			reason = fmt.Sprintf("MCP server %q could not be reached: %v", s.name, err)
		}
		if needs := s.currentOAuth().needsAuth(); needs != "" {
			reason = fmt.Sprintf("MCP server %q %s", s.name, needs)
		}
		attempt := 0
		s.transition(func() {
			s.failures++
			attempt = s.failures // read under s.mu: Reconnect and Authorize reset it
			s.retryAt = time.Now().Add(min(backoffBase<<(s.failures-1), backoffMax))
			s.state, s.reason = StateError, reason
		})
		log.Warn("MCP server failed to connect", "err", err, "attempt", attempt)
		return nil, errors.New(reason)
	}

	installed := false
	s.transition(func() {
		// Checked under s.mu: either Close finds the connection installed and closes
		// it, or it is not installed.
		if s.m.closed.Load() {
			s.state, s.reason = StateDisconnected, reasonClosed
			return
		}
		installed = true
		s.conn = c
		s.failures, s.retryAt = 0, time.Time{}
		s.state, s.reason = StateConnected, ""
		caps := c.sess.InitializeResult().Capabilities
		s.prompts = caps != nil && caps.Prompts != nil
		s.resources = caps != nil && caps.Resources != nil
	})
	if !installed {
		_ = c.close()
		return nil, errClosed
	}
	go s.watch(c)

	if err := s.reload(ctx, c); err != nil {
		log.Warn("MCP server's tools could not be listed", "err", err)
	}
	log.Info("MCP server connected", "elapsed", time.Since(start).Round(time.Millisecond), "tools", len(s.currentTools()))
	return c, nil
}

// dial connects and initialises a session, bounded by the connect timeout.
func (s *server) dial(ctx context.Context) (*conn, error) {
	timeout := s.cfg.ConnectTimeout()
	s.reloadOAuth(ctx)
	if o := s.currentOAuth(); o != nil && o.interactive.Load() {
		// The attempt may wait for a person in the browser.
		timeout = max(timeout, oauthFlowTimeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer context.AfterFunc(s.m.ctx, cancel)()

	life, cancelLife := context.WithCancel(context.Background())
	stderr := newStderrLog(s.m.logger, s.name)
	var (
		t   sdk.Transport
		err error
	)
	if s.m.opts.Transport != nil {
		t, err = s.m.opts.Transport(cctx, s.name, s.cfg)
	} else {
		t, err = s.m.transport(life, s, stderr)
	}
	if err != nil {
		cancelLife()
		return nil, err
	}
	ct, isCmd := t.(*sdk.CommandTransport)
	var cmd *exec.Cmd
	if isCmd {
		cmd = ct.Command
	}
	switch t.(type) {
	case *sdk.StreamableClientTransport, *sdk.SSEClientTransport, *sseTransport:
		// Progress notifications are counted in the HTTP responses (the streamable
		// client's connection must not be wrapped: the SDK needs its own type).
	default:
		t = &countingTransport{inner: t, s: s}
	}
	opts := &sdk.ClientOptions{
		Logger: s.m.logger.With("server", s.name),
		// agentls offers no roots or sampling to servers. It takes their questions
		// (form elicitation, and URL elicitation where the front end can send the
		// person to a URL) and puts them to the person through the front end, or
		// declines them when there is nobody to ask (see server.elicit).
		Capabilities:               &sdk.ClientCapabilities{Elicitation: s.m.elicitationCapabilities()},
		ElicitationHandler:         s.elicit,
		ElicitationCompleteHandler: s.elicitationComplete,
		ToolListChangedHandler: func(_ context.Context, req *sdk.ToolListChangedRequest) {
			go s.listChanged(req.Session)
		},
		ProgressNotificationHandler: s.progress,
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "agentls", Version: clientVersion}, opts)
	sess, err := client.Connect(cctx, t, nil)
	if err != nil {
		cancelLife()
		// The SDK has closed the connection, ending the process it started; what that
		// process started is ended too.
		stopGroup(cmd, terminateDelay)
		if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("it did not complete the MCP handshake within %s (the timeout setting)", timeout)
		}
		if tail := stderr.lastLines(); tail != "" {
			err = fmt.Errorf("%w; its last output on stderr: %s", err, tail)
		}
		return nil, err
	}
	return &conn{sess: sess, stdio: isCmd, cmd: cmd, cancel: cancelLife, stderr: stderr, done: make(chan struct{})}, nil
}

// watch waits for the connection to end and, unless it was dropped on purpose, marks
// the server disconnected, saying why.
func (s *server) watch(c *conn) {
	waitErr := c.sess.Wait()
	reason := "the connection was closed"
	if c.stdio {
		reason = describeExit(c.close(), c.stderr)
	} else if waitErr != nil {
		// A call refused for want of authorization ends an HTTP connection too; this
		// may record the loss before the call's own failure does, so it says why.
		reason = s.withNeeds("the connection ended: " + redact.Text(waitErr.Error()))
	}
	c.reason = reason
	close(c.done)
	s.lost(c, reason)
}

// lost marks the server disconnected if c is its current connection; the next call
// reconnects at once.
func (s *server) lost(c *conn, reason string) {
	dropped := false
	s.transition(func() {
		if s.conn != c {
			return
		}
		dropped = true
		s.conn = nil
		s.state, s.reason = StateDisconnected, fmt.Sprintf("MCP server %q disconnected: %s", s.name, reason)
	})
	if dropped {
		s.m.logger.Warn("MCP server disconnected", "server", s.name, "reason", reason)
		go func() { _ = c.close() }()
	}
}

// failed handles a call that failed because the connection broke: it returns why,
// preferring the server's exit status to the transport's error, and drops the
// connection so that the next call reconnects.
func (s *server) failed(c *conn, err error) string {
	if c.stdio {
		select {
		case <-c.done:
			return c.reason
		case <-time.After(3 * terminateDelay):
		}
	}
	reason := s.withNeeds(redact.Text(err.Error()))
	s.lost(c, reason)
	return reason
}

// withNeeds adds to why a connection broke that the server needs authorization (or a
// wider scope), when a refused call is the cause.
func (s *server) withNeeds(reason string) string {
	if needs := s.currentOAuth().needsAuth(); needs != "" {
		reason += "; the server " + needs
	}
	return reason
}

// drop closes the current connection, if any, and optionally forgets the backoff.
func (s *server) drop(reason string, resetBackoff bool) {
	var c *conn
	s.transition(func() {
		c = s.conn
		s.conn = nil
		if resetBackoff {
			s.failures, s.retryAt = 0, time.Time{}
		}
		if c != nil {
			s.state, s.reason = StateDisconnected, reason
		}
	})
	if c != nil {
		_ = c.close()
	}
}

// close ends the server's connection for good.
func (s *server) close() error {
	var (
		c   *conn
		err error
	)
	s.transition(func() {
		c = s.conn
		s.conn = nil
		s.state, s.reason = StateDisconnected, reasonClosed
	})
	if c != nil {
		err = c.close()
	}
	// Wait for a running connection attempt, which sees the closed manager and closes
	// what it made (or lists the tools of the connection closed above, and fails).
	s.mu.Lock()
	ch := s.connecting
	s.mu.Unlock()
	if ch != nil {
		<-ch
	}
	// A reload under way (after tools/list_changed) ends before Close returns, and
	// reports nothing once the manager is closed.
	s.reloadMu.Lock()
	s.reloadMu.Unlock()
	if c == nil {
		return nil
	}
	var exit interface{ ExitCode() int }
	if errors.As(err, &exit) || errors.Is(err, os.ErrProcessDone) {
		// A server ended by the signal Close sends, or exiting non-zero on stdin's
		// end, has still been stopped as asked.
		return nil
	}
	if err != nil {
		return fmt.Errorf("closing MCP server %q: %w", s.name, err)
	}
	return nil
}

// currentOAuth returns the server's OAuth state, nil without OAuth.
func (s *server) currentOAuth() *oauth {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oauth
}

// currentTools returns the server's registered tools.
func (s *server) currentTools() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// listChanged reloads the tools after a notifications/tools/list_changed.
func (s *server) listChanged(sess *sdk.ClientSession) {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil || c.sess != sess {
		return
	}
	// The manager owns the reload: closing it ends the wait for the server.
	ctx, cancel := context.WithTimeout(s.m.ctx, s.cfg.ConnectTimeout())
	defer cancel()
	if err := s.reload(ctx, c); err != nil {
		s.m.logger.Warn("MCP server's changed tools could not be listed", "server", s.name, "err", err)
	}
}

// reload lists the server's tools, keeps those the filters let through, names them and
// reports them through OnTools.
func (s *server) reload(ctx context.Context, c *conn) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	var list []*sdk.Tool
	if caps := c.sess.InitializeResult().Capabilities; caps == nil || caps.Tools != nil {
		for t, err := range c.sess.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			if s.cfg.includes(t.Name) {
				list = append(list, t)
			}
		}
	}
	raws := make([]string, len(list))
	for i, t := range list {
		raws[i] = t.Name
	}
	s.mu.Lock()
	prev := s.toolNames
	s.mu.Unlock()
	names := s.m.assignNames(s, raws, prev)
	ts := make([]tools.Tool, len(list))
	for i, t := range list {
		ts[i] = s.newTool(t, names[t.Name])
	}
	// The owner registers the tools before the status reports them, so that a front end
	// told of N tools can call them.
	if s.m.closed.Load() {
		return errClosed
	}
	s.transitionThen(func() {
		s.tools = ts
		s.toolNames = names
	}, func() {
		if s.m.opts.OnTools != nil {
			s.m.opts.OnTools(s.name, ts)
		}
	})
	return nil
}
