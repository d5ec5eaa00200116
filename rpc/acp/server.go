// Package acp serves the Agent Client Protocol (ACP v1: newline-delimited JSON-RPC on
// stdio), the protocol Zed, the JetBrains IDEs, CodeCompanion and agent-shell use to
// talk to coding agents, over agentls's session core (session.Host).
//
// It is a thin adapter: each ACP session is a session of the session.Host of its
// workspace (rooted at the session's cwd, with the client's MCP servers merged into the
// user's settings; the connection's sessions of one workspace share it), whose update
// stream becomes session/update notifications and whose
// confirmations become session/request_permission requests. The protocol types and the
// JSON-RPC connection are those of github.com/coder/acp-go-sdk.
package acp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/settings"
)

// Options configure a Server.
type Options struct {
	// Version is agentls's version, sent as agentInfo.
	Version string
	// NewClient makes the model client of a session from the settings in force. Nil
	// means there is no model: session/new fails.
	NewClient func(ctx context.Context, s settings.Settings) (clients.Client, error)
	// ConfigDir is the user's configuration directory; empty means settings.ConfigDir().
	ConfigDir string
	// GeminiDir is Gemini CLI's user directory; empty means ~/.gemini.
	GeminiDir string
	// SessionDir is where sessions are stored; empty means session.StateDir(), the
	// store the other front ends use.
	SessionDir string
	// Getenv reads the environment for the API keys initialize reports on; nil means
	// os.Getenv.
	Getenv func(string) string
	Logger *slog.Logger
}

// Server serves ACP on one connection.
type Server struct {
	o   Options
	log *slog.Logger
}

// New returns a server with options o.
func New(o Options) *Server {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	return &Server{o: o, log: log}
}

// Serve serves ACP on in and out until the client closes in or ctx is cancelled, then
// cancels what runs and closes every session.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lineWriter{w: out}
	pr, pw := io.Pipe()
	c := &conn{srv: s, log: s.log, sessions: map[string]*sessionState{}, hosts: map[string]*workspaceHost{}, out: w}
	c.sdk = sdk.NewAgentSideConnection(c, w, pr)
	c.sdk.SetLogger(s.log)
	go func() {
		err := filterInput(in, watchAuth{w: pw, ids: &c.authIDs}, w, s.log)
		pw.CloseWithError(err)
	}()
	select {
	case <-ctx.Done():
	case <-c.sdk.Done():
	}
	s.log.Info("the connection ended; closing the sessions")
	c.closeAll()
	pr.Close()
	return ctx.Err()
}

// lineWriter serialises whole JSON-RPC lines on the output: those of the SDK's
// connection (an elicitation/create request's scope moved into place, liftScope) and
// the errors filterInput answers malformed input with.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
	// afters run, each once, after the first line that holds their needle is written.
	afters []after
}

type after struct {
	needle []byte
	fn     func()
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(liftFields(liftScope(p)))
	n := len(p)
	if err != nil {
		n = 0
	}
	for i := 0; i < len(w.afters); i++ {
		if a := w.afters[i]; bytes.Contains(p, a.needle) {
			w.afters = slices.Delete(w.afters, i, i+1)
			i--
			go a.fn()
		}
	}
	return n, err
}

// after runs fn once a line holding needle has been written: a notification that
// must follow the answer that tells the client of its session.
func (w *lineWriter) after(needle string, fn func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.afters = append(w.afters, after{[]byte(needle), fn})
}

// conn is the state of one client connection: what the client can do and its sessions.
type conn struct {
	srv *Server
	log *slog.Logger
	sdk *sdk.AgentSideConnection
	out *lineWriter

	mu       sync.Mutex
	caps     sdk.ClientCapabilities
	sessions map[string]*sessionState
	// hosts are the hosts of the workspaces of the sessions, by workspace (hostFor);
	// closed says that the connection ended: no host is made after closeAll.
	hosts  map[string]*workspaceHost
	closed bool
	// oauthSeq numbers the MCP authorization pages put to the client as URL questions.
	oauthSeq int

	// authIDs are the ids of the authenticate requests not yet answered (auth.go).
	authIDs authIDs
}

var (
	_ sdk.Agent       = (*conn)(nil)
	_ sdk.AgentLoader = (*conn)(nil)
)

// closeAll withdraws every session's questions and closes the hosts, cancelling what
// runs; no host is made after it.
func (c *conn) closeAll() {
	c.mu.Lock()
	all, hosts := c.sessions, c.hosts
	c.sessions, c.hosts, c.closed = map[string]*sessionState{}, map[string]*workspaceHost{}, true
	c.mu.Unlock()
	for _, st := range all {
		st.cancelElicits()
	}
	for _, wh := range hosts {
		<-wh.ready // one being made is closed once made
		if wh.host == nil {
			continue
		}
		if err := wh.host.Close(); err != nil {
			c.log.Warn("closing a workspace's sessions", "error", err)
		}
	}
}

// notify sends a session/update for the session id.
func (c *conn) notify(id string, u sdk.SessionUpdate) {
	err := c.sdk.SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: u})
	if err != nil {
		c.log.Debug("session/update not sent", "session", id, "error", err)
	}
}
