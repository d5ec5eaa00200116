// Package mcp connects agentls to the MCP servers of the mcpServers setting and offers
// their tools, prompts and resources as agentls tools.
//
// A Manager owns one connection per server: a process over stdio, or streamable HTTP or
// SSE. Each MCP tool becomes a tools.Tool named <server>__<tool>; calls go through the
// scheduler like any other, with confirmation unless the server is trusted. A server
// that fails to start or dies takes nothing else down: its tools stay registered and
// fail with an execution_failed error naming the server and the reason, and the next
// call tries to reconnect, with backoff between failed attempts.
//
// HTTP and SSE servers that answer 401 are authorized by OAuth (oauth.go, over the SDK's
// auth package), with tokens kept per server and user (tokens.go); servers' questions
// (elicitation) go to the front end's Elicitor (elicit.go).
package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/web/redact"
)

// State is the connection state of a server.
type State string

// The states of a server.
const (
	StateConnecting   State = "connecting"
	StateConnected    State = "connected"
	StateDisconnected State = "disconnected"
	StateError        State = "error"
)

// ServerStatus is what a front end shows of one server.
type ServerStatus struct {
	Name  string `json:"name"`
	State State  `json:"state"`
	// Error says why the server is in StateError or StateDisconnected.
	Error string `json:"error,omitempty"`
	// Transport is stdio, http or sse (empty for an invalid configuration).
	Transport   string `json:"transport,omitempty"`
	Description string `json:"description,omitempty"`
	// Tools counts the server's registered tools.
	Tools     int  `json:"tools"`
	Prompts   bool `json:"prompts,omitempty"`
	Resources bool `json:"resources,omitempty"`
	Trusted   bool `json:"trusted,omitempty"`
}

// Connected reports whether the server is connected and its tools are registered.
func (s ServerStatus) Connected() bool { return s.State == StateConnected }

// Options configure a Manager.
type Options struct {
	// Servers are the configured servers by name.
	Servers map[string]ServerConfig
	// Dir is the working directory of stdio servers without their own cwd, and the
	// base of relative cwds: the workspace root. Empty means agentls's own.
	Dir string
	// Logger receives connection events and servers' stderr; nil discards. Names are
	// logged, never header or environment values, and URLs without their secrets (the
	// password of a userinfo, tokens in the query: see package redact), the SDK's
	// records included.
	Logger *slog.Logger
	// OnTools is called whenever a server's tool list is loaded or reloaded (after
	// connecting, reconnecting, or a tools/list_changed notification) with the
	// server's complete list, so that the owner can replace that server's tools in its
	// registry. It must not block for long and must not call Close.
	OnTools func(server string, tools []tools.Tool)
	// OnStatus is called whenever a server's status changes, in order for each server.
	OnStatus func(ServerStatus)
	// Getenv looks up the variables named in env and header values; nil means
	// os.Getenv.
	Getenv func(string) string
	// Transport, when set, makes the transport of each server instead of the one its
	// configuration describes: for embedding a server in the same process (benchmarks,
	// tests). It is called once per connection attempt.
	Transport func(ctx context.Context, name string, cfg ServerConfig) (sdk.Transport, error)

	// TokenDir is where OAuth tokens are kept (see DefaultTokenDir); empty keeps them in
	// memory only.
	TokenDir string
	// Authorize shows a person a server's authorization page, for the browser step of
	// OAuth; nil means nobody can be asked, and a server that needs authorization says
	// so in its status.
	Authorize AuthorizeFunc
	// AutoAuthorize lets a server's 401 start the browser step by itself, as on the
	// command line; otherwise it starts only with Manager.Authorize.
	AutoAuthorize bool
	// EnterpriseIDToken, when set, gives the person's ID token for enterprise-managed
	// authorization (an oauth block with "enterprise") instead of a login at the
	// identity provider in the browser: for the conformance client, whose scenario
	// hands it one.
	EnterpriseIDToken IDTokenFunc
	// Elicit asks the person a server's question (elicitation/create); nil declines
	// every question.
	Elicit Elicitor
}

// Manager owns the connections to the configured MCP servers. It is safe for
// concurrent use.
type Manager struct {
	opts     Options
	logger   *slog.Logger
	dir      string
	getenv   func(string) string
	servers  map[string]*server
	tokens   *tokenStore
	order    []string // server names, sorted
	resTools []tools.Tool
	closed   atomic.Bool
	// ctx ends when the manager is closed, cutting connection attempts short.
	ctx    context.Context
	cancel context.CancelFunc

	// namesMu guards names: every registered tool name, with the server holding it.
	namesMu sync.Mutex
	names   map[string]*server
}

// NewManager returns a manager of opts.Servers; nothing is started before Start.
func NewManager(opts Options) *Manager {
	m := &Manager{
		opts:    opts,
		logger:  opts.Logger,
		dir:     opts.Dir,
		getenv:  opts.Getenv,
		servers: map[string]*server{},
		names:   map[string]*server{},
		tokens:  &tokenStore{dir: opts.TokenDir},
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	} else {
		// Errors of the SDK and of net/http quote the server's URL, query and all,
		// and the SDK logs with this logger too.
		m.logger = slog.New(redact.NewHandler(m.logger.Handler()))
	}
	if m.getenv == nil {
		m.getenv = os.Getenv
	}
	for name, cfg := range opts.Servers {
		m.servers[name] = newServer(m, name, cfg)
		m.order = append(m.order, name)
	}
	slices.Sort(m.order)
	m.resTools = []tools.Tool{&listResourcesTool{m: m}, &readResourceTool{m: m}}
	return m
}

// Start connects every server at once and returns when each has connected or failed,
// each bounded by its connect timeout (see ServerConfig.ConnectTimeout) and all by ctx.
// Failures are reported through the servers' statuses, never as an error: Start
// returns an error only when the manager is closed.
func (m *Manager) Start(ctx context.Context) error {
	if m.closed.Load() {
		return errors.New("the MCP manager is closed")
	}
	var wg sync.WaitGroup
	for _, name := range m.order {
		s := m.servers[name]
		wg.Go(func() {
			if _, err := s.session(ctx); err != nil {
				m.logger.Debug("MCP server did not start", "server", name, "err", err)
			}
		})
	}
	wg.Wait()
	return nil
}

// Reconnect drops the server's connection, if any, and connects anew at once, ignoring
// the backoff: for a person's explicit "restart".
func (m *Manager) Reconnect(ctx context.Context, name string) error {
	s, ok := m.servers[name]
	if !ok {
		return fmt.Errorf("no MCP server is called %q", name)
	}
	s.drop("restart requested", true)
	_, err := s.session(ctx)
	return err
}

// Authorize runs the OAuth flow of the server called name, as a person asked: its
// browser step goes through Options.Authorize. It reconnects the server and returns
// once it is connected, or why not.
func (m *Manager) Authorize(ctx context.Context, name string) error {
	s, ok := m.servers[name]
	if !ok {
		return fmt.Errorf("no MCP server is called %q", name)
	}
	if s.oauth == nil {
		if s.invalid != nil {
			return s.invalid
		}
		return fmt.Errorf("MCP server %q does not use OAuth (a stdio server, \"oauth\": {\"enabled\": false}, or an Authorization header in its settings)", name)
	}
	s.oauth.interactive.Store(true)
	s.oauth.stepUps.Store(0)
	s.drop("authorization requested", true)
	_, err := s.session(ctx)
	return err
}

// Logout forgets the OAuth token of the server called name, on disk and in memory, and
// disconnects it. It reports whether a token was stored.
func (m *Manager) Logout(name string) (bool, error) {
	s, ok := m.servers[name]
	if !ok {
		return false, fmt.Errorf("no MCP server is called %q", name)
	}
	if s.oauth == nil {
		return false, fmt.Errorf("MCP server %q does not use OAuth", name)
	}
	had, err := m.tokens.remove(name, s.oauth.resource.String())
	if err != nil {
		return had, err
	}
	s.drop("logged out", true)
	// A fresh handler holds no token.
	o, err := newOAuth(s)
	if err != nil {
		return had, err
	}
	s.mu.Lock()
	s.oauth = o
	s.mu.Unlock()
	return had, nil
}

// Statuses returns every server's status, by name.
func (m *Manager) Statuses() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.order))
	for _, name := range m.order {
		out = append(out, m.servers[name].status())
	}
	return out
}

// Tools returns the tools of every server whose tool list was loaded, by name, and,
// when a connected server offers resources, list_mcp_resources and read_mcp_resource.
// A server that was connected and is no longer keeps its tools here.
func (m *Manager) Tools() []tools.Tool {
	var out []tools.Tool
	resources := false
	for _, name := range m.order {
		s := m.servers[name]
		s.mu.Lock()
		out = append(out, s.tools...)
		resources = resources || s.resources
		s.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b tools.Tool) int { return cmp.Compare(a.Info().Name, b.Info().Name) })
	if resources {
		out = append(out, m.resTools...)
	}
	return out
}

// Close disconnects every server (stopping stdio servers) and makes later calls fail.
// It waits for the processes to exit.
func (m *Manager) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	m.cancel()
	errs := make([]error, len(m.order))
	var wg sync.WaitGroup
	for i, name := range m.order {
		s := m.servers[name]
		wg.Go(func() { errs[i] = s.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// server returns the server called name, or an error a model understands.
func (m *Manager) server(name string) (*server, error) {
	s, ok := m.servers[name]
	if !ok {
		return nil, tools.Errorf(tools.ErrInvalidParams, "no MCP server is called %q; the servers are %s", name, quoted(m.order))
	}
	return s, nil
}

func quoted(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", n)
	}
	return out
}

// assignNames gives the server's tools, in the order given, their registered names:
// tools.SanitizeName of "<server>__<tool>", which keeps names Gemini accepts (letters,
// digits, _ . : -, at most 63 characters, a long name keeping its first 30 and last 30
// characters joined by "___"). A tool keeps the name it had before a reload, and a
// name that needed no sanitising is kept as it is; a name another tool already holds —
// two tool names that sanitise alike, on one server or two — gets the suffix _2, _3, …
// (cut to stay within 63 characters). Between servers, the one whose tools were listed
// first keeps the plain name. prev maps the server's previous raw tool names to their
// registered names.
func (m *Manager) assignNames(s *server, raws []string, prev map[string]string) map[string]string {
	m.namesMu.Lock()
	defer m.namesMu.Unlock()
	for _, name := range prev {
		if m.names[name] == s {
			delete(m.names, name)
		}
	}
	out := make(map[string]string, len(raws))
	// Names the tools held before are reserved first, so a reload renames nothing.
	for _, raw := range raws {
		if name, ok := prev[raw]; ok && m.names[name] == nil {
			out[raw] = name
			m.names[name] = s
		}
	}
	// Then names that need no sanitising, so that a tool never loses its own valid
	// name to another's sanitised one.
	for _, raw := range raws {
		name := s.name + "__" + raw
		if _, ok := out[raw]; !ok && tools.SanitizeName(name) == name && m.names[name] == nil {
			out[raw] = name
			m.names[name] = s
		}
	}
	for _, raw := range raws {
		if _, ok := out[raw]; ok {
			continue
		}
		base := tools.SanitizeName(s.name + "__" + raw)
		name := base
		for n := 2; m.names[name] != nil; n++ {
			suffix := fmt.Sprintf("_%d", n)
			name = base[:min(len(base), 63-len(suffix))] + suffix
		}
		out[raw] = name
		m.names[name] = s
	}
	return out
}
