package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/mcp"
)

// sessionState is an ACP session: a session of the host of its workspace (its cwd and
// the client's MCP servers, see workspaceHost), which it shares with the connection's
// other sessions of that workspace. Its model and its "always" answers are its own.
type sessionState struct {
	c    *conn
	id   string
	cwd  string
	wh   *workspaceHost
	host *session.Host // wh's
	// caps are what the client said it can do.
	caps sdk.ClientCapabilities

	mu sync.Mutex
	// model, when set, names the model the session's client is made for (the model
	// config option); else the settings decide.
	model string
	// thoughts, when set, says whether the session's model shows its reasoning (the
	// thoughts config option); else the settings decide (model.includeThoughts).
	thoughts *bool
	// calls are the tool calls shown to the client and not yet ended, by id.
	calls map[string]*callView
	// commands are the session's slash commands (commands.go).
	commands []command
	// executing are the ids of the run_shell_command calls starting to execute, by
	// their arguments (terminal.go).
	executing map[string][]string
	// elicits cancel the questions put to the client and not yet answered, by their
	// number in the session (elicitSeq counts them; elicit.go).
	elicits   map[int]context.CancelFunc
	elicitSeq int
}

// close cancels what the session runs and lets it go from its host; the host stays,
// for the connection's other sessions, until the connection ends.
func (st *sessionState) close() {
	st.cancelElicits()
	st.host.Cancel(st.id)
	if err := st.host.CloseSession(st.id); err != nil {
		// A cancelled prompt is still ending: the host lets the session go once idle.
		st.c.log.Info("closing a session", "session", st.id, "error", err)
	}
}

// workspaceHost is the host of the sessions of one workspace: one cwd, with one set of
// client MCP servers. The connection's sessions of that workspace share it, so they
// share the workspace's path locks and MCP server processes; its Asker, Observe,
// elicitor and writer find the session of each call by its id (session.IDOf).
type workspaceHost struct {
	c *conn
	// ready is closed once host, or err, is set.
	ready chan struct{}
	host  *session.Host
	err   error

	mu sync.Mutex
	// held counts the calls holding each file's editor text in the workspace's
	// documents (fs.go).
	held map[string]int
}

// hostFor returns the host of the workspace rooted at cwd, with the additional roots
// extra and the client's MCP servers, made (with its tools loaded) by the first
// session of that workspace.
func (c *conn) hostFor(ctx context.Context, cwd string, extra []string, servers []sdk.McpServer) (*workspaceHost, error) {
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams("cwd %q is not an absolute path", cwd)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, invalidParams("cwd %q is not a directory", cwd)
	}
	var realExtra []string
	for i, d := range extra {
		if !filepath.IsAbs(d) {
			return nil, invalidParams("additionalDirectories[%d]: %q is not an absolute path", i, d)
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, invalidParams("additionalDirectories[%d]: %q is not a directory", i, d)
		}
		realExtra = append(realExtra, realDir(d))
	}
	overrides, err := mcpSettings(servers)
	if err != nil {
		return nil, err
	}
	key, err := json.Marshal(struct {
		Root      string
		Extra     []string
		Overrides settings.Settings
	}{realDir(cwd), realExtra, overrides})
	if err != nil {
		return nil, failed("%v", err)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, failed("the connection is closing")
	}
	wh, found := c.hosts[string(key)]
	if !found {
		wh = &workspaceHost{c: c, ready: make(chan struct{}), held: map[string]int{}}
		c.hosts[string(key)] = wh
	}
	c.mu.Unlock()
	if found {
		select {
		case <-wh.ready:
			return wh, wh.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	wh.host, wh.err = c.newHost(ctx, wh, append([]string{cwd}, extra...), overrides)
	if wh.err != nil {
		c.mu.Lock()
		if c.hosts[string(key)] == wh {
			delete(c.hosts, string(key))
		}
		c.mu.Unlock()
	}
	close(wh.ready)
	return wh, wh.err
}

// newHost makes the host of wh in roots (the cwd, then the additional directories)
// with the client's MCP servers (overrides), whose tools are loaded before it returns.
func (c *conn) newHost(ctx context.Context, wh *workspaceHost, roots []string, overrides settings.Settings) (*session.Host, error) {
	store, err := c.store()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	caps := c.caps
	c.mu.Unlock()
	o := c.srv.o
	// MCP servers' questions go to a client that takes forms (and URLs); else they are
	// declined.
	var elicit mcp.Elicitor
	switch {
	case urlClient(caps):
		elicit = hostURLElicitor{hostElicitor{wh}, formClient(caps)}
	case formClient(caps):
		elicit = hostElicitor{wh}
	}
	host, err := session.NewHost(session.HostOptions{
		Toolbox: toolbox.Options{
			Roots: roots,
			// Additional directories are confined as the cwd is: readable by the user,
			// and not where the sandbox keeps commands out.
			CheckRoots: true,
			ConfigDir:  o.ConfigDir,
			GeminiDir:  o.GeminiDir,
			// The client's servers count as the user's own settings: the workspace's
			// settings files can only tighten them, as for an editor's options.
			Overrides:    overrides,
			Tool:         func(t tools.Tool) tools.Tool { return wh.adaptTool(caps, t) },
			MCPElicit:    elicit,
			MCPAuthorize: wh.authorize(urlClient(caps)),
			Logger:       c.log,
		},
		Store:     store,
		NewClient: c.newClient,
		Asker:     hostAsker{c},
		Observe:   c.observe,
		Logger:    c.log,
	})
	var re *toolbox.RootError
	switch {
	case errors.As(err, &re):
		return nil, invalidParams("additionalDirectories: %v", re)
	case err != nil:
		return nil, failed("cannot set up the workspace %s: %v", roots[0], err)
	}
	if caps.Fs.WriteTextFile {
		host.Toolbox().Workspace.SetWriter(clientWriter{c: c, read: caps.Fs.ReadTextFile})
	}
	if err := host.StartExternal(ctx); err != nil {
		c.log.Warn("external tools", "error", err)
	}
	return host, nil
}

// newState makes a session state in the workspace rooted at cwd, with the additional
// roots extra and the client's MCP servers; its session is opened next (open).
func (c *conn) newState(ctx context.Context, cwd string, extra []string, servers []sdk.McpServer) (*sessionState, error) {
	wh, err := c.hostFor(ctx, cwd, extra, servers)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	caps := c.caps
	c.mu.Unlock()
	return &sessionState{c: c, cwd: cwd, wh: wh, host: wh.host, caps: caps, calls: map[string]*callView{},
		executing: map[string][]string{}, elicits: map[int]context.CancelFunc{}}, nil
}

// stateKey carries the session state whose session is being opened or prompted, for
// newClient.
type stateKey struct{}

// newClient makes the model client of a session being opened, for the model the
// session chose if it did.
func (c *conn) newClient(ctx context.Context, s settings.Settings) (clients.Client, error) {
	if st, ok := ctx.Value(stateKey{}).(*sessionState); ok {
		return st.newClient(ctx, s)
	}
	if c.srv.o.NewClient == nil {
		return nil, nil
	}
	return c.srv.o.NewClient(ctx, s)
}

// stateOf returns the session whose tool call runs with ctx, or nil.
func (c *conn) stateOf(ctx context.Context) *sessionState {
	id := session.IDOf(ctx)
	if id == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id]
}

// observe passes a host's update to its session.
func (c *conn) observe(u session.Update) {
	c.mu.Lock()
	st := c.sessions[u.Session]
	c.mu.Unlock()
	if st != nil {
		st.observe(u)
	}
}

// hostAsker is the Asker of a workspace's host: the session of the call asks.
type hostAsker struct{ c *conn }

// Ask implements confirm.Asker.
func (a hostAsker) Ask(ctx context.Context, req confirm.Request) (confirm.Answer, error) {
	st := a.c.stateOf(ctx)
	if st == nil {
		return confirm.Answer{}, errors.New("the call belongs to no ACP session of this connection: nobody can be asked")
	}
	return st.Ask(ctx, req)
}

// store returns the store of the sessions.
func (c *conn) store() (*session.Store, error) {
	dir := c.srv.o.SessionDir
	if dir == "" {
		d, err := session.StateDir()
		if err != nil {
			return nil, failed("agentls has no state directory for its sessions: %v", err)
		}
		dir = d
	}
	return session.NewStore(dir), nil
}

// newClient makes the session's model client, for the model the session chose if it
// did.
func (st *sessionState) newClient(ctx context.Context, s settings.Settings) (clients.Client, error) {
	newClient := st.c.srv.o.NewClient
	if newClient == nil {
		return nil, nil
	}
	st.mu.Lock()
	if st.model != "" {
		s.Model.Name = st.model
	}
	if st.thoughts != nil {
		s.Model.IncludeThoughts = *st.thoughts
	}
	st.mu.Unlock()
	return newClient(ctx, s)
}

// mcpSettings returns the client's MCP servers as settings, in the settings files'
// format (Gemini CLI's mcpServers: command/args/env, httpUrl, or url with type sse).
func mcpSettings(servers []sdk.McpServer) (settings.Settings, error) {
	type server struct {
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		URL     string            `json:"url,omitempty"`
		Type    string            `json:"type,omitempty"`
		HTTPURL string            `json:"httpUrl,omitempty"`
		Headers map[string]string `json:"headers,omitempty"`
	}
	byName := map[string]server{}
	for i, s := range servers {
		var name string
		var cfg server
		switch {
		case s.Stdio != nil:
			name = s.Stdio.Name
			cfg = server{Command: s.Stdio.Command, Args: s.Stdio.Args}
			if len(s.Stdio.Env) > 0 {
				cfg.Env = map[string]string{}
				for _, e := range s.Stdio.Env {
					cfg.Env[e.Name] = e.Value
				}
			}
		case s.Http != nil:
			name = s.Http.Name
			cfg = server{HTTPURL: s.Http.Url, Headers: headers(s.Http.Headers)}
		case s.Sse != nil:
			name = s.Sse.Name
			cfg = server{URL: s.Sse.Url, Type: "sse", Headers: headers(s.Sse.Headers)}
		default:
			return settings.Settings{}, invalidParams("mcpServers[%d]: agentls connects to MCP servers over stdio, http and sse only", i)
		}
		if name == "" {
			return settings.Settings{}, invalidParams("mcpServers[%d] has no name", i)
		}
		byName[name] = cfg
	}
	var out settings.Settings
	if len(byName) == 0 {
		return out, nil
	}
	b, err := json.Marshal(map[string]any{"mcpServers": byName})
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return out, invalidParams("mcpServers: %v", err)
	}
	return out, nil
}

func headers(hs []sdk.HttpHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}

// open opens the session id of st's host (a new one when empty), mapping the host's
// errors onto the protocol's.
func (st *sessionState) open(ctx context.Context, id string) (*session.Live, error) {
	// The model client may keep the context it was made with.
	l, err := st.host.Open(context.WithoutCancel(context.WithValue(ctx, stateKey{}, st)), id)
	var re *session.ResumeError
	switch {
	case err == nil:
		return l, nil
	case errors.Is(err, session.ErrNoModel), errors.Is(err, session.ErrModel) && !st.c.hasKey():
		return nil, st.c.authRequired(fmt.Sprintf("%v. %s", err, keyHint))
	case errors.As(err, &re):
		return nil, &sdk.RequestError{Code: codeNotFound,
			Message: fmt.Sprintf("%v (session/list lists the stored sessions; session/new starts a new one)", err)}
	}
	return nil, failed("%v", err)
}

// session returns the session id of the connection.
func (c *conn) session(id sdk.SessionId) (*sessionState, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.sessions[string(id)]
	if !ok {
		return nil, invalidParams("unknown session %q: start one with session/new, or resume a stored one with session/load", id)
	}
	return st, nil
}

// add makes st a session of the connection, closing the one it replaces.
func (c *conn) add(st *sessionState) {
	c.mu.Lock()
	old := c.sessions[st.id]
	c.sessions[st.id] = st
	c.mu.Unlock()
	switch {
	case old == nil || old == st:
	case old.host == st.host:
		// The same session of the same host: only the old state's questions go.
		old.cancelElicits()
	default:
		old.close()
	}
}

// NewSession starts a session in the workspace rooted at cwd.
func (c *conn) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	st, err := c.newState(ctx, p.Cwd, p.AdditionalDirectories, p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	l, err := st.open(ctx, "")
	if err != nil {
		st.close()
		return sdk.NewSessionResponse{}, err
	}
	st.id = l.ID()
	if withdrawn(ctx) {
		// Withdrawn while its workspace was set up: nobody will use it.
		st.close()
		return sdk.NewSessionResponse{}, cancelled()
	}
	c.add(st)
	c.log.Info("session/new", "session", st.id, "cwd", p.Cwd, "model", l.Model(), "mcpServers", len(p.McpServers))
	// After the answer, which tells the client of the session.
	cmds := st.loadCommands(ctx)
	c.out.after(`"sessionId":"`+st.id+`"`, func() { st.announceCommands(cmds) })
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(st.id), Modes: st.modes(), ConfigOptions: st.configOptions(l),
		Meta: st.meta()}, nil
}

// resume opens the stored session id in cwd, with the additional roots extra, or
// returns it when the connection has it already. A session started in another
// workspace is refused: its conversation is about that one.
func (c *conn) resume(ctx context.Context, id sdk.SessionId, cwd string, extra []string, servers []sdk.McpServer) (*sessionState, *session.Live, error) {
	if st, err := c.session(id); err == nil {
		if realDir(st.cwd) != realDir(cwd) {
			return nil, nil, invalidParams("session %s belongs to the workspace %s, not %s: resume it with that cwd", id, st.cwd, cwd)
		}
		l, err := st.open(ctx, st.id)
		return st, l, err
	}
	if err := c.checkWorkspace(string(id), cwd); err != nil {
		return nil, nil, err
	}
	st, err := c.newState(ctx, cwd, extra, servers)
	if err != nil {
		return nil, nil, err
	}
	l, err := st.open(ctx, string(id))
	if err != nil {
		st.close()
		return nil, nil, err
	}
	st.id = l.ID()
	c.add(st)
	return st, l, nil
}

// LoadSession resumes a stored session and replays its conversation as session/update
// notifications before answering.
func (c *conn) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	st, l, err := c.resume(ctx, p.SessionId, p.Cwd, p.AdditionalDirectories, p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	ups := l.Replay()
	for _, u := range ups {
		st.observe(u)
	}
	st.announceCommands(st.loadCommands(ctx))
	c.log.Info("session/load", "session", st.id, "updates", len(ups))
	return sdk.LoadSessionResponse{Modes: st.modes(), ConfigOptions: st.configOptions(l), Meta: st.meta()}, nil
}

// ResumeSession resumes a stored session without replaying it.
func (c *conn) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	st, l, err := c.resume(ctx, p.SessionId, p.Cwd, p.AdditionalDirectories, p.McpServers)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	st.announceCommands(st.loadCommands(ctx))
	return sdk.ResumeSessionResponse{Modes: st.modes(), ConfigOptions: st.configOptions(l), Meta: st.meta()}, nil
}

// CloseSession cancels what the session runs and closes it; it stays in the store.
func (c *conn) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	c.mu.Lock()
	st, ok := c.sessions[string(p.SessionId)]
	delete(c.sessions, string(p.SessionId))
	c.mu.Unlock()
	if !ok {
		return sdk.CloseSessionResponse{}, &sdk.RequestError{Code: codeNotFound, Message: fmt.Sprintf("unknown session %q", p.SessionId)}
	}
	st.close()
	return sdk.CloseSessionResponse{}, nil
}

// ListSessions lists the stored sessions, newest first, a page at a time: those
// started in cwd when the request names one.
func (c *conn) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	store, err := c.store()
	if err != nil {
		return sdk.ListSessionsResponse{}, err
	}
	q := session.PageQuery{}
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return sdk.ListSessionsResponse{}, invalidParams("cwd %q is not an absolute path", *p.Cwd)
		}
		q.Root = *p.Cwd
	}
	if p.Cursor != nil {
		q.Cursor = *p.Cursor
	}
	page, err := store.Page(q)
	switch {
	case errors.Is(err, session.ErrCursor):
		return sdk.ListSessionsResponse{}, invalidParams("%v", err)
	case err != nil:
		return sdk.ListSessionsResponse{}, failed("listing the sessions: %v", err)
	case ctx.Err() != nil:
		return sdk.ListSessionsResponse{}, cancelled()
	}
	out := sdk.ListSessionsResponse{Sessions: make([]sdk.SessionInfo, 0, len(page.Sessions))}
	for _, b := range page.Sessions {
		if len(b.Roots) == 0 {
			continue // stored by a version that did not record its workspace
		}
		info := sdk.SessionInfo{SessionId: sdk.SessionId(b.ID), Cwd: b.Roots[0], UpdatedAt: sdk.Ptr(b.Updated.UTC().Format(time.RFC3339))}
		if b.Title != "" {
			info.Title = sdk.Ptr(b.Title)
		}
		if len(b.Roots) > 1 {
			info.AdditionalDirectories = b.Roots[1:]
		}
		out.Sessions = append(out.Sessions, info)
	}
	if page.Next != "" {
		out.NextCursor = sdk.Ptr(page.Next)
	}
	return out, nil
}

// checkWorkspace refuses to resume the stored session id in cwd when it was started in
// another workspace; a session the store does not have is left to open to report.
func (c *conn) checkWorkspace(id, cwd string) error {
	store, err := c.store()
	if err != nil {
		return err
	}
	roots, err := store.Roots(id)
	if err != nil || len(roots) == 0 {
		return nil
	}
	if realDir(roots[0]) != realDir(cwd) {
		return invalidParams("session %s belongs to the workspace %s, not %s: resume it with that cwd", id, roots[0], cwd)
	}
	return nil
}

// DeleteSession removes a stored session (session/delete): one the connection has
// open is closed first. A session answering a prompt is not deleted.
func (c *conn) DeleteSession(_ context.Context, id string) error {
	if id == "" {
		return invalidParams("session/delete needs a sessionId")
	}
	c.mu.Lock()
	st := c.sessions[id]
	c.mu.Unlock()
	var err error
	if st != nil {
		err = st.host.DeleteSession(id)
	} else {
		var store *session.Store
		if store, err = c.store(); err == nil {
			err = store.Delete(id)
		}
	}
	switch {
	case errors.Is(err, session.ErrBusy):
		return &sdk.RequestError{Code: codeInvalidRequest, Message: fmt.Sprintf(
			"session %s is answering a prompt: send session/cancel (or wait for its answer), then delete it", id)}
	case errors.Is(err, fs.ErrNotExist):
		return &sdk.RequestError{Code: codeNotFound, Message: fmt.Sprintf("%v (session/list lists the stored sessions)", err)}
	case errors.Is(err, session.ErrOpenElsewhere):
		return &sdk.RequestError{Code: codeInvalidRequest, Message: fmt.Sprintf(
			"session %s is open in another agentls process (an editor, another ACP client or a terminal): close it there, then delete it", id)}
	case errors.Is(err, session.ErrInvalidID):
		return invalidParams("%v", err)
	case err != nil:
		return failed("%v", err)
	}
	if st != nil {
		c.mu.Lock()
		if c.sessions[id] == st {
			delete(c.sessions, id)
		}
		c.mu.Unlock()
		st.cancelElicits()
	}
	c.log.Info("session/delete", "session", id)
	return nil
}

// realDir returns dir with its symbolic links resolved, when it can be.
func realDir(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// The approval modes, as the client offers them.
var modes = []sdk.SessionMode{
	{Id: sdk.SessionModeId(confirm.ModeDefault), Name: "Default", Description: sdk.Ptr("Ask before edits, shell commands and untrusted tools")},
	{Id: sdk.SessionModeId(confirm.ModeAutoEdit), Name: "Auto edit", Description: sdk.Ptr("Make edits without asking; ask before the rest")},
	{Id: sdk.SessionModeId(confirm.ModeYolo), Name: "YOLO", Description: sdk.Ptr("Ask about nothing (deny rules still apply)")},
	{Id: sdk.SessionModeId(confirm.ModePlan), Name: "Plan", Description: sdk.Ptr("Read-only: run only tools that change nothing")},
}

// meta is the _meta of a session's new, load and resume answers: how its commands are
// contained (`agentls sandbox --json`), under "agentls/sandbox".
func (st *sessionState) meta() map[string]any {
	return map[string]any{"agentls/sandbox": st.host.Toolbox().Config().Sandbox.Status()}
}

func (st *sessionState) modes() *sdk.SessionModeState {
	m, _ := st.host.Mode(st.id)
	return &sdk.SessionModeState{AvailableModes: modes, CurrentModeId: sdk.SessionModeId(cmp.Or(m, confirm.ModeDefault))}
}

// SetSessionMode sets the session's approval mode and tells the client.
func (c *conn) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	st, err := c.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	m, err := st.setMode(string(p.ModeId))
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	st.modeChanged(m, true)
	return sdk.SetSessionModeResponse{}, nil
}

// setMode sets the session's approval mode to the mode named id.
func (st *sessionState) setMode(id string) (confirm.Mode, error) {
	m, err := confirm.ParseMode(id)
	if err != nil || id == "" {
		return "", invalidParams("unknown mode %q: the modes are default, auto_edit, yolo and plan", id)
	}
	if !st.host.SetMode(st.id, m) {
		if _, err := st.open(context.Background(), st.id); err != nil {
			return "", err
		}
		st.host.SetMode(st.id, m)
	}
	st.c.log.Info("session/set_mode", "session", st.id, "mode", m)
	return m, nil
}

// modeChanged tells the client that the session's mode is now m: current_mode_update
// for the clients of modes and, with options, config_option_update for those that
// read only configOptions, the mode being one of them.
func (st *sessionState) modeChanged(m confirm.Mode, options bool) {
	st.c.notify(st.id, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(m)}})
	if !options {
		return
	}
	if _, live := st.host.Mode(st.id); !live {
		return // let go meanwhile: its options are told when it is next opened
	}
	l, err := st.open(context.Background(), st.id)
	if err != nil {
		st.c.log.Debug("config_option_update not sent", "session", st.id, "error", err)
		return
	}
	st.c.notify(st.id, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: st.configOptionsWith(m, l.Model())}})
}

// The ids of the config options: the approval mode (the modes again, for the clients
// that read only configOptions), the model, and whether a Gemini model shows its
// reasoning (a boolean of category model_config).
const (
	modeConfigID     = "mode"
	modelConfigID    = "model"
	thoughtsConfigID = "thoughts"
)

// categoryModelConfig is the category of model parameters, which the Go SDK's types
// do not name yet.
const categoryModelConfig sdk.SessionConfigOptionCategory = "model_config"

// geminiModels are the models offered besides the one in use, when it is Gemini.
var geminiModels = []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"}

// configOptions returns the session's config options: the approval mode and the model.
func (st *sessionState) configOptions(l *session.Live) []sdk.SessionConfigOption {
	return st.configOptionsWith(confirm.Mode(st.modes().CurrentModeId), l.Model())
}

// configOptionsWith returns the config options of a session in mode m with model cur.
func (st *sessionState) configOptionsWith(m confirm.Mode, cur string) []sdk.SessionConfigOption {
	var modeOpts sdk.SessionConfigSelectOptionsUngrouped
	for _, md := range modes {
		modeOpts = append(modeOpts, sdk.SessionConfigSelectOption{Name: md.Name, Value: sdk.SessionConfigValueId(md.Id), Description: md.Description})
	}
	mode := sdk.NewSessionConfigOptionSelect(sdk.SessionConfigValueId(m), sdk.SessionConfigSelectOptions{Ungrouped: &modeOpts})
	mode.Select.Id = modeConfigID
	mode.Select.Name = "Mode"
	mode.Select.Description = sdk.Ptr("What agentls may do without asking")
	mode.Select.Category = sdk.Ptr(sdk.SessionConfigOptionCategoryMode)

	names := []string{cur}
	if strings.HasPrefix(cur, "gemini-") {
		names = append(names, geminiModels...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var opts sdk.SessionConfigSelectOptionsUngrouped
	for _, n := range names {
		opts = append(opts, sdk.SessionConfigSelectOption{Name: n, Value: sdk.SessionConfigValueId(n)})
	}
	o := sdk.NewSessionConfigOptionSelect(sdk.SessionConfigValueId(cur), sdk.SessionConfigSelectOptions{Ungrouped: &opts})
	o.Select.Id = modelConfigID
	o.Select.Name = "Model"
	o.Select.Category = sdk.Ptr(sdk.SessionConfigOptionCategoryModel)
	if !strings.HasPrefix(cur, "gemini-") {
		return []sdk.SessionConfigOption{mode, o}
	}
	t := sdk.NewSessionConfigOptionBoolean(st.showsThoughts())
	t.Boolean.Id = thoughtsConfigID
	t.Boolean.Name = "Show thinking"
	t.Boolean.Description = sdk.Ptr("Ask the model for summaries of its reasoning, shown as thoughts")
	t.Boolean.Category = sdk.Ptr(categoryModelConfig)
	return []sdk.SessionConfigOption{mode, o, t}
}

// showsThoughts reports whether the session's model is asked for its reasoning.
func (st *sessionState) showsThoughts() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.thoughts != nil {
		return *st.thoughts
	}
	return st.host.Toolbox().Config().Settings.Model.IncludeThoughts
}

// SetSessionConfigOption sets the session's approval mode (as session/set_mode does),
// its model or whether its model shows its reasoning: for a new model, or a new
// value of the latter, the session is let go and resumed from the store with a client
// made for it.
func (c *conn) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if b := p.Boolean; b != nil {
		st, err := c.session(b.SessionId)
		if err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
		if b.ConfigId != thoughtsConfigID {
			return sdk.SetSessionConfigOptionResponse{}, invalidParams("config option %q is not a boolean: agentls's boolean option is %q", b.ConfigId, thoughtsConfigID)
		}
		l, err := st.open(ctx, st.id)
		if err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
		if !strings.HasPrefix(l.Model(), "gemini-") {
			return sdk.SetSessionConfigOptionResponse{}, invalidParams("config option %q is offered for Gemini models only, not %s", thoughtsConfigID, l.Model())
		}
		if b.Value != st.showsThoughts() {
			if l, err = st.remake(ctx, func() { st.thoughts = sdk.Ptr(b.Value) }); err != nil {
				return sdk.SetSessionConfigOptionResponse{}, err
			}
			c.log.Info("session/set_config_option", "session", st.id, thoughtsConfigID, b.Value)
		}
		return sdk.SetSessionConfigOptionResponse{ConfigOptions: st.configOptions(l)}, nil
	}
	v := p.ValueId
	if v == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("agentls's config options, %q and %q, take a value id", modeConfigID, modelConfigID)
	}
	st, err := c.session(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	switch v.ConfigId {
	case modeConfigID:
		m, err := st.setMode(string(v.Value))
		if err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
		l, err := st.open(ctx, st.id)
		if err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
		// The answer carries the options; the clients of modes hear of it too.
		st.modeChanged(m, false)
		return sdk.SetSessionConfigOptionResponse{ConfigOptions: st.configOptionsWith(m, l.Model())}, nil
	case modelConfigID:
	case thoughtsConfigID:
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("config option %q takes a boolean (type \"boolean\")", v.ConfigId)
	default:
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("unknown config option %q: agentls has %q, %q and %q", v.ConfigId, modeConfigID, modelConfigID, thoughtsConfigID)
	}
	l, err := st.open(ctx, st.id)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	valid := slices.Collect(maps.Keys(optionValues(st.configOptions(l), modelConfigID)))
	if !slices.Contains(valid, string(v.Value)) {
		slices.Sort(valid)
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("model %q is not one of %s", v.Value, strings.Join(valid, ", "))
	}
	if string(v.Value) != l.Model() {
		if l, err = st.remake(ctx, func() { st.model = string(v.Value) }); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
		c.log.Info("session/set_config_option", "session", st.id, "model", l.Model())
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: st.configOptions(l)}, nil
}

// remake applies change to the choices the session's model client is made from (with
// st.mu held) and renews the session with a client made for them; while a prompt
// runs, the change is undone and refused.
func (st *sessionState) remake(ctx context.Context, change func()) (*session.Live, error) {
	st.mu.Lock()
	model, thoughts := st.model, st.thoughts
	change()
	st.mu.Unlock()
	l, err := st.host.Renew(context.WithoutCancel(context.WithValue(ctx, stateKey{}, st)), st.id)
	if err != nil {
		st.mu.Lock()
		st.model, st.thoughts = model, thoughts
		st.mu.Unlock()
		if errors.Is(err, session.ErrBusy) {
			return nil, &sdk.RequestError{Code: codeInvalidRequest,
				Message: fmt.Sprintf("the model's options cannot change while the session answers a prompt: %v", err)}
		}
		return nil, failed("%v", err)
	}
	return l, nil
}

// optionValues returns the values of the select option id of opts.
func optionValues(opts []sdk.SessionConfigOption, id string) map[string]bool {
	out := map[string]bool{}
	for _, o := range opts {
		if o.Select == nil || string(o.Select.Id) != id || o.Select.Options.Ungrouped == nil {
			continue
		}
		for _, v := range *o.Select.Options.Ungrouped {
			out[string(v.Value)] = true
		}
	}
	return out
}
