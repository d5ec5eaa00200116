package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/settings"
)

// initializeParams are the parts of the initialize params agentls reads. The
// capabilities stay raw (see ClientCapabilities); URIs are parsed here so that a bad
// one is reported by name.
type initializeParams struct {
	ProcessID             *int32            `json:"processId"`
	RootURI               *string           `json:"rootUri"`
	RootPath              *string           `json:"rootPath"`
	WorkspaceFolders      []workspaceFolder `json:"workspaceFolders"`
	Capabilities          jsontext.Value    `json:"capabilities"`
	InitializationOptions jsontext.Value    `json:"initializationOptions"`
	ClientInfo            *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// initialize negotiates capabilities, loads the settings and builds the tool system
// for the workspace roots.
func (s *Server) initialize(_ context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p initializeParams
	if err := decodeParams("initialize", params, &p); err != nil {
		return nil, err
	}
	caps := ParseClientCapabilities(p.Capabilities)
	roots, err := s.initialRoots(p)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params for initialize: %v", err)
	}
	overrides, err := decodeSettings(p.InitializationOptions)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params for initialize: initializationOptions: %v", err)
	}
	enc := caps.PositionEncoding()
	s.mu.Lock()
	s.caps, s.enc, s.initOptions = caps, enc, overrides
	s.writeBehind = !caps.Rich() && p.ClientInfo != nil && writesBehind(p.ClientInfo.Name)
	s.mu.Unlock()
	if err := s.buildToolbox(roots); err != nil {
		return nil, jsonrpc2.Errorf(codeRequestFailed, "agentls cannot start: %v", err)
	}
	s.mu.Lock()
	s.phase = phaseRunning
	s.mu.Unlock()
	client := "unknown"
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	s.log.Info("initialized", "client", client, "roots", roots, "positionEncoding", enc,
		"rich", caps.Rich(), "applyEdit", caps.ApplyEdit(), "documentChanges", caps.DocumentChanges(),
		"showMessageRequest", caps.ShowMessageRequest())
	return protocol.InitializeResult{
		Capabilities: serverCapabilities(enc, s.cmds.names()),
		ServerInfo:   protocol.ServerInfo{Name: "agentls", Version: protocol.NewOptional(s.opts.Version)},
	}, nil
}

// initialRoots returns the workspace roots of initialize: the workspace folders, else
// rootUri, else rootPath, else the current directory. Folders that are not local
// directories are skipped with a warning; it is an error only if none is left.
func (s *Server) initialRoots(p initializeParams) ([]string, error) {
	var named []string
	switch {
	case len(p.WorkspaceFolders) > 0:
		for _, f := range p.WorkspaceFolders {
			named = append(named, f.URI)
		}
	case p.RootURI != nil && *p.RootURI != "":
		named = []string{*p.RootURI}
	case p.RootPath != nil && *p.RootPath != "":
		named = []string{*p.RootPath}
	default:
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("no workspace folder was given and the current directory is unknown: %w", err)
		}
		s.log.Warn("the client named no workspace folder; using the current directory", "dir", wd)
		return []string{wd}, nil
	}
	var roots, problems []string
	for _, n := range named {
		dir, err := rootDir(n)
		if err != nil {
			s.log.Warn("skipping a workspace folder", "folder", n, "error", err)
			problems = append(problems, err.Error())
			continue
		}
		roots = append(roots, dir)
	}
	if len(roots) == 0 {
		return nil, fmt.Errorf("no usable workspace folder: %s", problems)
	}
	return roots, nil
}

// rootDir turns a folder URI (or, for rootPath, a path) into an existing directory.
func rootDir(name string) (string, error) {
	p, err := filePath(name)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("workspace folder %s: %w", p, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace folder %s is not a directory", p)
	}
	return p, nil
}

// filePath returns the absolute, cleaned path of a file URI (or of an absolute path).
func filePath(name string) (string, error) {
	u, err := uri.Parse(name)
	if err != nil {
		return "", fmt.Errorf("%q is not a URI: %w", name, err)
	}
	if !u.IsFile() {
		return "", fmt.Errorf("%q is not a file URI", name)
	}
	p := u.FsPath()
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q does not name an absolute path", name)
	}
	return filepath.Clean(p), nil
}

// decodeSettings reads settings overrides: initializationOptions, or the settings of
// workspace/didChangeConfiguration. They have the keys of the settings file; a client
// that nests them under "agentls" (as VS Code sections do) is understood too.
func decodeSettings(raw jsontext.Value) (settings.Settings, error) {
	var out settings.Settings
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	if len(raw) > 0 && raw[0] != '{' {
		return out, errors.New("want an object with the keys of the settings file")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return out, errors.New("want an object with the keys of the settings file")
	}
	if nested, ok := obj["agentls"]; ok && len(obj) == 1 {
		raw = jsontext.Value(nested)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, err
	}
	if _, err := confirm.ParseMode(out.ApprovalMode); err != nil {
		return out, fmt.Errorf("approvalMode: %w", err)
	}
	return out, nil
}

// initialized starts loading the external tools; agentls registers no capabilities
// dynamically.
func (s *Server) initialized(context.Context, jsonrpc2.RawMessage) error {
	s.announceMode()
	// The external tools load only now: loading them may ask the user whether to trust
	// the folder, and nothing may be asked before the client has the initialize result.
	s.loadExternal(s.currentHost())
	return nil
}

// shuttingDown enters the shutdown phase before the next message is read: after
// shutdown only exit is accepted.
func (s *Server) shuttingDown() {
	s.mu.Lock()
	s.phase = phaseShutdown
	s.mu.Unlock()
	s.log.Info("shutdown")
}

// shutdownGrace is how long shutdown lets the requests in flight finish on their own
// before it cancels them, and then how long it waits for their answers.
const shutdownGrace = time.Second

// shutdown answers once the requests in flight have been answered: they may finish
// for a moment, then they (and the tool calls they run) are cancelled.
func (s *Server) shutdown(context.Context, jsonrpc2.RawMessage) (any, error) {
	if !s.requests.waitFor(1, shutdownGrace) { // 1: this request
		s.mu.Lock()
		host := s.host
		s.mu.Unlock()
		host.Cancel("")
		s.requests.cancelAll()
		if !s.requests.waitFor(1, shutdownGrace) {
			s.log.Warn("requests still running after shutdown")
		}
	}
	return nil, nil
}

// didChangeWorkspaceFolders updates the roots, and with them the workspace settings.
func (s *Server) didChangeWorkspaceFolders(_ context.Context, params jsonrpc2.RawMessage) error {
	var p struct {
		Event struct {
			Added   []workspaceFolder `json:"added"`
			Removed []workspaceFolder `json:"removed"`
		} `json:"event"`
	}
	if err := decodeParams("workspace/didChangeWorkspaceFolders", params, &p); err != nil {
		return err
	}
	_, _, tb := s.state()
	roots := tb.Workspace.Roots()
	for _, f := range p.Event.Removed {
		dir, err := filePath(f.URI)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			real = dir
		}
		roots = slices.DeleteFunc(roots, func(r string) bool { return r == dir || r == real })
	}
	for _, f := range p.Event.Added {
		dir, err := rootDir(f.URI)
		if err != nil {
			s.log.Warn("ignoring an added workspace folder", "folder", f.URI, "error", err)
			continue
		}
		roots = append(roots, dir)
	}
	if len(roots) == 0 {
		return errors.New("every workspace folder was removed; keeping the last one, since tools need a root")
	}
	if err := tb.Workspace.SetRoots(roots...); err != nil {
		return err
	}
	s.log.Info("workspace folders changed", "roots", tb.Workspace.Roots())
	return s.reconfigure()
}

// didChangeConfiguration takes new settings overrides (null keeps the previous ones)
// and re-reads the settings files.
func (s *Server) didChangeConfiguration(_ context.Context, params jsonrpc2.RawMessage) error {
	var p struct {
		Settings jsontext.Value `json:"settings"`
	}
	if err := decodeParams("workspace/didChangeConfiguration", params, &p); err != nil {
		return err
	}
	if len(p.Settings) > 0 && string(p.Settings) != "null" {
		over, err := decodeSettings(p.Settings)
		if err != nil {
			s.showError(fmt.Sprintf("agentls: the new configuration was not applied: %v", err))
			return err
		}
		s.mu.Lock()
		s.config = over
		s.mu.Unlock()
	}
	if err := s.reconfigure(); err != nil {
		s.showError(fmt.Sprintf("agentls: the new configuration was not applied: %v", err))
		return err
	}
	return nil
}

// showError shows message in the editor (window/showMessage needs no capability).
func (s *Server) showError(message string) {
	s.send("window/showMessage", protocol.ShowMessageParams{Type: protocol.MessageTypeError, Message: message})
}
