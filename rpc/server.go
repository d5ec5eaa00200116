// Package rpc is agentls's editor protocol (docs/protocol.md): a language server over
// stdio that gives editors agentls's tools through standard LSP (commands, applied
// edits, confirmations through the editor's UI) and, to clients that declare the
// experimental.agentls capability, the richer agentls/* methods.
//
// The server is one Server per connection, split by concern: server.go holds the
// connection and the dispatch of messages; lifecycle.go initialize, shutdown and the
// workspace and configuration notifications; codec.go the framing and the payload
// codec; capabilities.go what the client may be sent (every capability check goes
// through ClientCapabilities); config.go settings and the tool system; documents.go the
// document sync into the workspace overlay; commands.go the commands and agentls/*
// methods, served by a commandHandler whose table decodes each command's argument and
// resolves what it needs (deps) once per call; updates.go the agentls/update
// notifications; progress.go live output; diagnostics.go and codeactions.go
// diagnostics and the code actions on them; editwriter.go the workspace.Writer that
// turns edits into workspace/applyEdit; confirm.go the confirm.Asker; prompt.go the agent's sessions behind agentls.prompt,
// and transcript.go their Markdown transcripts for clients without agentls/update;
// editordiags.go the editor's own diagnostics of what a call changed, which a client
// that reports them gives the model (and the get_diagnostics tool).
//
// Concurrency: messages are read one at a time. Notifications, initialize and the
// phase change of shutdown are handled on the read loop, strictly in arrival order, so
// incremental didChange edits apply in order; they must never wait for the client.
// Every other request is released with jsonrpc2.Async and runs concurrently, which is
// what lets it send requests to the editor and wait for the answers.
//
// Tool calls reach the editor through scheduler observers (s.observers), which get each
// event with the session of its call (the editor's for agentls.runTool): updates.go
// sends agentls/update to rich clients, progress.go live output as $/progress or
// window/logMessage, diagnostics.go the locations of calls, their failures and the
// compiler-style lines of shell output as diagnostics; codeactions.go answers
// textDocument/codeAction.
package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// DefaultConfirmTimeout is how long a confirmation put through window/showMessageRequest
// waits for an answer unless Options.ConfirmTimeout says otherwise. No answer is a
// refusal.
const DefaultConfirmTimeout = 5 * time.Minute

// LSP error codes that jsonrpc2 does not define.
const (
	codeRequestFailed    jsonrpc2.Code = -32803
	codeRequestCancelled jsonrpc2.Code = -32800
)

// drainTimeout bounds the wait for requests in flight when the connection ends.
const drainTimeout = 2 * time.Second

// Options configure a Server.
type Options struct {
	// Version is reported as serverInfo.version.
	Version string
	// ConfigDir is the user's agentls configuration directory; empty means
	// settings.ConfigDir().
	ConfigDir string
	// ConfirmTimeout bounds the wait for an answer to a window/showMessageRequest
	// confirmation; zero means DefaultConfirmTimeout.
	ConfirmTimeout time.Duration
	// Logger receives the server's log (never stdout, which carries the protocol); nil
	// discards it.
	Logger *slog.Logger

	// NewClient makes the model client of a new session from the settings in force
	// (and, as the caller decides, the environment). Nil means the server has no
	// model: prompts fail saying so, and the code actions that prompt are not offered.
	// An error (no API key, say) is the prompt's error, so it should say what to set.
	NewClient func(ctx context.Context, s settings.Settings) (clients.Client, error)
	// StateDir is agentls's state directory: sessions are stored in its sessions
	// directory and transcripts in its transcripts directory. Empty means the parent
	// of session.StateDir().
	StateDir string
	// MaxTurns caps the model turns of a prompt; 0 means the settings' model.maxSessionTurns
	// (whose 0 means the session's default).
	MaxTurns int

	// onlyTools, when not empty, keeps only these tools registered and loads no
	// discovered or MCP tools: the fuzz target must not run a shell, or any program its
	// settings name, on whatever the fuzzer writes.
	onlyTools []string
}

// phase is where the server is in the LSP lifecycle.
type phase int

const (
	phaseNew      phase = iota // waiting for initialize
	phaseRunning               // initialized
	phaseShutdown              // after shutdown: only exit is accepted
)

// route is how a request is served.
type route struct {
	serve func(ctx context.Context, params jsonrpc2.RawMessage) (any, error)
	// inline requests run on the read loop, in order with the notifications around
	// them; they must not wait for the client.
	inline bool
	// first, if set, runs on the read loop before a request that is not inline is
	// released: what must happen before the next message is read.
	first func()
}

// notification handles a notification on the read loop. Its params are borrowed from
// the read buffer (what it keeps, it copies), and its ctx is pooled by jsonrpc2 (no
// context may be derived from it; use s.ctx). An error is logged, never answered.
type notification func(ctx context.Context, params jsonrpc2.RawMessage) error

// Server is one agentls language server connection. Create it with New and run it with
// Serve.
type Server struct {
	opts Options
	log  *slog.Logger

	conn jsonrpc2.Conn
	// ctx lives as long as the connection; stop ends it, which cancels every request
	// and tool call.
	ctx  context.Context
	stop context.CancelFunc

	routes        map[string]route
	notifications map[string]notification
	// cmds serves the editor commands (commands.go).
	cmds *commandHandler
	// observers receive every scheduler event with the session of its call (updates.go,
	// progress.go, diagnostics.go, transcript.go); they are set up in New and not
	// changed afterwards.
	observers []func(session string, ev tools.Event)

	mu    sync.Mutex // guards the fields below
	phase phase
	caps  ClientCapabilities
	// writeBehind says that the client is a plain one known to take an applied edit
	// being written to disk under its modified buffer (see editwriter.go).
	writeBehind bool
	enc         workspace.PositionEncoding
	toolbox     *toolbox.Toolbox
	// host hosts the sessions of prompts (prompt.go); set with the toolbox, which it
	// owns. stateDir is where their transcripts go, stateErr why there is none.
	host     *session.Host
	stateDir string
	stateErr error
	// initOptions are the settings overrides of initializationOptions, config those of
	// the latest workspace/didChangeConfiguration.
	initOptions, config settings.Settings

	requests  requests       // incoming requests in flight, for $/cancelRequest
	docs      *documents     // the editor's documents
	memory    memoryReleaser // gives closed large documents' memory back (documents.go)
	confirms  confirmations
	trustAsk  trustAsk      // the trust question, put once per connection (external.go)
	announced announced     // tool calls announced to rich clients
	diags     diagnosticSet // agentls's diagnostics (diagnostics.go)
	streams   outputStreams // live output of running calls (progress.go)
	views     sessionViews  // the sessions of prompts as the client sees them (prompt.go)
	modes     modeAnnouncer // the approval mode last sent to a rich client (status.go)
	// diagReports are the editor's diagnostics reports the server waits for
	// (editordiags.go).
	diagReports collections
	seq         atomic.Uint64
}

// New returns a server; it does nothing until Serve.
func New(o Options) *Server {
	if o.ConfirmTimeout <= 0 {
		o.ConfirmTimeout = DefaultConfirmTimeout
	}
	s := &Server{opts: o, log: o.Logger, enc: workspace.PositionUTF16}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.docs = newDocuments()
	s.memory.free = debug.FreeOSMemory
	s.cmds = newCommandHandler(s)
	s.routes = map[string]route{
		"initialize":               {serve: s.initialize, inline: true},
		"shutdown":                 {serve: s.shutdown, first: s.shuttingDown},
		"workspace/executeCommand": {serve: s.cmds.executeCommand},
		"textDocument/codeAction":  {serve: s.codeAction},
	}
	s.notifications = map[string]notification{
		"initialized":                         s.initialized,
		"$/cancelRequest":                     s.cancelRequest,
		"textDocument/didOpen":                s.didOpen,
		"textDocument/didChange":              s.didChange,
		"textDocument/didClose":               s.didClose,
		"textDocument/didSave":                s.didSave,
		"workspace/didChangeWorkspaceFolders": s.didChangeWorkspaceFolders,
		"workspace/didChangeConfiguration":    s.didChangeConfiguration,
		"window/workDoneProgress/cancel":      s.cancelProgress,
		methodDiagnostics:                     s.receiveDiagnostics,
	}
	s.cmds.route(s.routes, s.notifications)
	s.observers = []func(string, tools.Event){s.sendUpdate, s.streamOutput, s.diagnose, s.transcribe}
	return s
}

// Serve runs the protocol over in and out until the client sends exit, the input ends
// or ctx is cancelled, and returns the process exit code: 0 after an orderly shutdown
// and exit, 1 otherwise.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) int {
	s.ctx, s.stop = context.WithCancel(ctx)
	defer s.stop()
	st := newStream(in, out, s.log, func() {
		// The client may still read what is written (agentls driven by a script):
		// the requests in flight get a moment to answer before the end.
		s.log.Info("the client closed its end of the connection")
		if !s.requests.waitFor(0, drainTimeout) {
			s.log.Warn("requests still running when the client went away were abandoned")
		}
		s.stop()
	})
	s.conn = jsonrpc2.NewConn(st, jsonrpc2.WithCodec(codec{}))
	s.conn.Go(s.ctx, s.handle)
	select {
	case <-s.ctx.Done():
	case <-s.conn.Done():
		if err := s.conn.Err(); err != nil {
			s.log.Error("the connection failed", "error", err)
		}
	}
	s.stop()
	// Requests in flight see their contexts cancelled and answer; a tool that ignores
	// cancellation must not keep the process alive, though. The connection then closes
	// the stream once every answer is written. The read loop is not waited for: it may
	// be blocked reading an input the editor keeps open.
	if !s.requests.waitFor(0, drainTimeout) {
		s.log.Warn("requests still running at exit were abandoned")
	}
	go s.conn.Close()
	select {
	case <-st.closed:
	case <-time.After(drainTimeout):
	}
	s.mu.Lock()
	host, shutdown := s.host, s.phase == phaseShutdown
	s.mu.Unlock()
	if host != nil {
		if err := host.Close(); err != nil {
			s.log.Warn("stopping background tools", "error", err)
		}
	}
	if shutdown {
		return 0
	}
	return 1
}

// handle is the connection's handler: the whole chain from a message to its answer.
func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
	if !req.IsCall() {
		s.notify(ctx, req)
		return nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			// req stays valid until this handler returns.
			s.log.Error("request handler panicked", "method", req.Method(), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			result, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error while serving %s: %v", req.Method(), p)
		}
	}()
	r, known := s.routes[req.Method()]
	if err := s.gate(req.Method()); err != nil {
		return nil, err
	}
	if !known {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: agentls does not serve %q", req.Method())
	}
	id := req.ID()
	// The request context jsonrpc2 passes is pooled and recycled when the handler
	// returns, and a context derived from it can outlive that (context.WithCancel
	// watches it from a goroutine): the handler's context derives from the
	// connection's instead, and $/cancelRequest cancels it through s.requests.
	reqCtx := ctx
	ctx, cancel := context.WithCancel(jsonrpc2.DetachContext(reqCtx))
	cancelled := s.requests.add(id, cancel)
	defer func() {
		s.requests.remove(id)
		cancel()
	}()
	if !r.inline {
		if r.first != nil {
			r.first()
		}
		// From here on the request is our own copy and the read loop reads on.
		jsonrpc2.Async(reqCtx)
	}
	result, err = r.serve(ctx, req.Params())
	if err != nil && cancelled.Load() && !isWireError(err) {
		return nil, jsonrpc2.NewError(codeRequestCancelled, req.Method()+" was cancelled")
	}
	return result, err
}

func isWireError(err error) bool {
	var we *jsonrpc2.Error
	return errors.As(err, &we)
}

// gate applies the lifecycle to a request.
func (s *Server) gate(method string) error {
	s.mu.Lock()
	ph := s.phase
	s.mu.Unlock()
	switch {
	case ph == phaseNew && method != "initialize":
		return jsonrpc2.Errorf(jsonrpc2.ServerNotInitialized, "agentls is not initialized yet: send initialize first (got %s)", method)
	case ph == phaseRunning && method == "initialize":
		return jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "initialize was already received")
	case ph == phaseShutdown:
		return jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "agentls has shut down: after shutdown only the exit notification is accepted (got %s)", method)
	}
	return nil
}

// notify handles a notification on the read loop. Unknown notifications are ignored,
// as LSP requires; nothing a notification does ends the connection.
func (s *Server) notify(ctx context.Context, req *jsonrpc2.Request) {
	method := req.Method()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("notification handler panicked", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	if method == "exit" {
		s.log.Info("exit")
		s.stop()
		return
	}
	s.mu.Lock()
	ph := s.phase
	s.mu.Unlock()
	h, ok := s.notifications[method]
	switch {
	case !ok:
		s.log.Debug("ignoring notification", "method", method)
		return
	case ph != phaseRunning:
		s.log.Debug("ignoring notification outside the initialized phase", "method", method)
		return
	}
	if err := h(ctx, req.Params()); err != nil {
		s.log.Warn("bad notification", "method", method, "error", err)
	}
}

// state returns the negotiated state and the tool system; the toolbox is nil before
// initialize.
func (s *Server) state() (ClientCapabilities, workspace.PositionEncoding, *toolbox.Toolbox) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps, s.enc, s.toolbox
}

// capabilities returns what the client advertised.
func (s *Server) capabilities() ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// observe hands a scheduler event of a call of session to every observer.
func (s *Server) observe(session string, ev tools.Event) {
	for _, o := range s.observers {
		o(session, ev)
	}
}

// call sends a request to the client and waits for the answer. If ctx ends first, the
// client is told with $/cancelRequest, so that it can take down a dialog it shows.
func (s *Server) call(ctx context.Context, method string, params, result any) error {
	id, err := s.conn.Call(ctx, method, params, result)
	if err != nil && ctx.Err() != nil && id.IsValid() {
		if nerr := s.conn.Notify(s.ctx, "$/cancelRequest", cancelParams{ID: idValue(id)}); nerr != nil {
			s.log.Debug("cancelling a request to the client", "method", method, "error", nerr)
		}
	}
	return err
}

// send sends a notification to the client; a failure (the client has gone) is logged.
func (s *Server) send(method string, params any) {
	if err := s.conn.Notify(s.ctx, method, params); err != nil {
		s.log.Debug("sending a notification", "method", method, "error", err)
	}
}

// requests tracks the incoming requests being served, for $/cancelRequest.
type requests struct {
	mu sync.Mutex
	m  map[jsonrpc2.ID]request
}

type request struct {
	cancel    context.CancelFunc
	cancelled *atomic.Bool
}

// add records a request; the flag reports whether it was cancelled by the client.
func (r *requests) add(id jsonrpc2.ID, cancel context.CancelFunc) *atomic.Bool {
	flag := new(atomic.Bool)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[jsonrpc2.ID]request{}
	}
	r.m[id] = request{cancel: cancel, cancelled: flag}
	return flag
}

func (r *requests) remove(id jsonrpc2.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, id)
}

// waitFor waits up to timeout until at most n requests are being served, and reports
// whether that happened.
func (r *requests) waitFor(n int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		r.mu.Lock()
		left := len(r.m)
		r.mu.Unlock()
		if left <= n {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cancelAll cancels every request being served.
func (r *requests) cancelAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, req := range r.m {
		req.cancel()
	}
}

// cancel cancels the request id, if it is still being served.
func (r *requests) cancel(id jsonrpc2.ID) bool {
	r.mu.Lock()
	req, ok := r.m[id]
	r.mu.Unlock()
	if ok {
		req.cancelled.Store(true)
		req.cancel()
	}
	return ok
}

// cancelParams are the params of $/cancelRequest: a number or a string id.
type cancelParams struct {
	ID any `json:"id"`
}

func idValue(id jsonrpc2.ID) any {
	if n, ok := id.Number(); ok {
		return n
	}
	str, _ := id.StringValue()
	return str
}

// cancelRequest handles $/cancelRequest: the request it names is cancelled (a tool call
// it runs ends cancelled). An id that is not being served is ignored.
func (s *Server) cancelRequest(_ context.Context, params jsonrpc2.RawMessage) error {
	var p cancelParams
	if err := decodeParams("$/cancelRequest", params, &p); err != nil {
		return err
	}
	var id jsonrpc2.ID
	switch v := p.ID.(type) {
	case float64:
		id = jsonrpc2.NewNumberID(int64(v))
	case string:
		id = jsonrpc2.NewStringID(v)
	default:
		return fmt.Errorf("$/cancelRequest: id %v is neither a number nor a string", p.ID)
	}
	if s.requests.cancel(id) {
		s.log.Debug("request cancelled by the client", "id", strings.Trim(fmt.Sprint(p.ID), `"`))
	}
	return nil
}
