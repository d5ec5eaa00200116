// Package lsptest is a language server client for tests: it starts a server process,
// speaks the LSP base protocol with it over real pipes, records everything the server
// sends, answers the server's requests from handlers the test sets, and models an
// editor's open documents, so that workspace/applyEdit can be answered the way an
// editor does (apply, report the change with didChange, answer applied).
//
// It is written independently of the server: its framing, JSON and position
// arithmetic are its own, so that a test through it checks the server rather than the
// server's libraries against themselves.
package lsptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
)

// Message is one JSON-RPC message from the server.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *ResponseError  `json:"error,omitempty"`
}

// IsRequest reports a request from the server (it has a method and an id).
func (m Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

// IsNotification reports a notification from the server.
func (m Message) IsNotification() bool { return m.Method != "" && !m.IsRequest() }

// ResponseError is a JSON-RPC error response, from either side.
type ResponseError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ResponseError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// Standard error codes.
const (
	CodeParseError           = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeInternalError        = -32603
	CodeServerNotInitialized = -32002
	CodeRequestCancelled     = -32800
)

// Handler answers a request from the server: its result, or an error (a
// *ResponseError is sent as it is, any other error as an internal error). ctx ends
// when the client closes.
type Handler func(ctx context.Context, params json.RawMessage) (any, error)

// Options configure Start.
type Options struct {
	// Args are the server's arguments; Dir its working directory; Env its whole
	// environment (nil: inherit).
	Args []string
	Dir  string
	Env  []string
}

// Client is a running server and the client end of its connection.
type Client struct {
	t testing.TB
	// cmd is the server process; nil for a server in this process (Serve), which
	// inproc describes.
	cmd    *exec.Cmd
	inproc *inProcess
	stdin  io.WriteCloser
	ctx    context.Context
	cancel context.CancelFunc

	wmu sync.Mutex // serialises frames
	seq atomic.Int64

	mu       sync.Mutex
	pending  map[string]chan Message
	handlers map[string]Handler
	log      []Message     // requests and notifications from the server, in order
	changed  chan struct{} // closed and replaced when log grows
	readErr  error

	stderr  testutil.Buffer
	exited  chan struct{}
	exitErr error

	editor *Editor
}

// Start starts the server binary and connects to it. The process is killed, if still
// running, when the test ends; its stderr is logged if the test failed, and a data race
// it reports (when built with -race) fails the test.
func Start(t testing.TB, binary string, o Options) *Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.Command(binary, o.Args...)
	cmd.Dir, cmd.Env = o.Dir, o.Env
	c := &Client{t: t, cmd: cmd, ctx: ctx, cancel: cancel, pending: map[string]chan Message{},
		handlers: map[string]Handler{}, changed: make(chan struct{}), exited: make(chan struct{})}
	c.editor = newEditor(c)
	cmd.Stderr = &c.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdin = stdin
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", binary, err)
	}
	c.Handle("workspace/applyEdit", c.editor.ApplyEdit)
	go c.readLoop(bufio.NewReaderSize(stdout, 64<<10))
	t.Cleanup(func() {
		c.cancel()
		c.stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(5 * time.Second):
			c.cmd.Process.Kill()
			<-c.exited
		}
		if strings.Contains(c.Stderr(), "WARNING: DATA RACE") {
			t.Errorf("the server reported a data race")
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", c.Stderr())
		}
	})
	return c
}

// inProcess is a server running in the test's process.
type inProcess struct {
	out  io.Closer // the server's output
	code int       // its exit code, once exited is closed
	done chan struct{}
}

// Serve runs a server in the test's process: serve speaks the protocol over in and out
// until it returns its exit code (as a server's main would). The client talks to it over
// pipes as it talks to a process; Stderr is empty (a test logs where it likes). When the
// test ends, the server's input is closed and serve gets five seconds to return.
func Serve(t testing.TB, serve func(in io.Reader, out io.Writer) int) *Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ip := &inProcess{out: outW, done: make(chan struct{})}
	c := &Client{t: t, inproc: ip, stdin: inW, ctx: ctx, cancel: cancel, pending: map[string]chan Message{},
		handlers: map[string]Handler{}, changed: make(chan struct{}), exited: make(chan struct{})}
	c.editor = newEditor(c)
	go func() {
		defer close(ip.done)
		ip.code = serve(inR, outW)
		// What the server wrote is read to the end, then the read loop sees EOF.
		outW.Close()
		inR.Close()
	}()
	c.Handle("workspace/applyEdit", c.editor.ApplyEdit)
	go c.readLoop(bufio.NewReaderSize(outR, 64<<10))
	t.Cleanup(func() {
		c.cancel()
		c.stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(5 * time.Second):
			t.Errorf("lsptest: the in-process server did not return within 5s of its input closing")
			outW.CloseWithError(errors.New("lsptest: the server did not stop"))
			<-c.exited
		}
	})
	return c
}

// Stderr returns what the server wrote to stderr so far.
func (c *Client) Stderr() string { return c.stderr.String() }

// Editor returns the client's model of the editor's documents.
func (c *Client) Editor() *Editor { return c.editor }

// Handle sets the handler of server requests for method, replacing any earlier one
// (including the editor's workspace/applyEdit). Requests without a handler are answered
// with MethodNotFound, as an editor that does not know the method would.
func (c *Client) Handle(method string, h Handler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handlers[method] = h
}

// Call sends a request and waits for its response; result (may be nil) receives the
// result. An error response is returned as a *ResponseError.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return c.Go(method, params).Wait(ctx, result)
}

// Pending is a request in flight.
type Pending struct {
	c   *Client
	id  string
	ch  chan Message
	err error
}

// Go sends a request without waiting for the response: requests pipeline.
func (c *Client) Go(method string, params any) *Pending {
	id := strconv.FormatInt(c.seq.Add(1), 10)
	p := &Pending{c: c, id: id, ch: make(chan Message, 1)}
	c.mu.Lock()
	c.pending[id] = p.ch
	c.mu.Unlock()
	p.err = c.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	return p
}

// ID is the request's id.
func (p *Pending) ID() int64 {
	n, _ := strconv.ParseInt(p.id, 10, 64)
	return n
}

// Wait waits for the response.
func (p *Pending) Wait(ctx context.Context, result any) error {
	if p.err != nil {
		return p.err
	}
	select {
	case m, ok := <-p.ch:
		if !ok {
			return fmt.Errorf("the connection ended before the response: %w", p.c.readError())
		}
		if m.Error != nil {
			return m.Error
		}
		if result != nil && len(m.Result) > 0 {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("decoding the result %s: %w", m.Result, err)
			}
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	return c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Cancel sends $/cancelRequest for the request id.
func (c *Client) Cancel(id int64) error {
	return c.Notify("$/cancelRequest", map[string]any{"id": id})
}

// WriteRaw writes bytes to the server's input as they are: for malformed input.
func (c *Client) WriteRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.stdin.Write(b)
	return err
}

// Frame returns body with an LSP header.
func Frame(body []byte) []byte {
	return append([]byte("Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"), body...)
}

func (c *Client) send(msg any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return c.WriteRaw(Frame(body))
}

// CloseInput closes the server's stdin, as an editor that goes away does.
func (c *Client) CloseInput() error { return c.stdin.Close() }

// Wait waits for the server process to exit and returns its exit code.
func (c *Client) Wait(ctx context.Context) (int, error) {
	select {
	case <-c.exited:
	case <-ctx.Done():
		return -1, ctx.Err()
	}
	if c.inproc != nil {
		select {
		case <-c.inproc.done:
			return c.inproc.code, nil
		default:
			return -1, errors.New("the in-process server's output ended before it returned")
		}
	}
	var exit *exec.ExitError
	switch {
	case c.exitErr == nil:
		return 0, nil
	case errors.As(c.exitErr, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, fmt.Errorf("the server was killed by %v", ws.Signal())
		}
		return exit.ExitCode(), nil
	}
	return -1, c.exitErr
}

// Received returns the requests and notifications the server sent with method, in
// order; with method empty, everything the server sent but the responses to this
// client's requests.
func (c *Client) Received(method string) []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Message
	for _, m := range c.log {
		if method == "" || m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// WaitFor waits for a request or notification with method for which match (nil: any)
// is true, including one received already.
func (c *Client) WaitFor(ctx context.Context, method string, match func(Message) bool) (Message, error) {
	seen := 0
	for {
		c.mu.Lock()
		log, changed, rerr := c.log, c.changed, c.readErr
		c.mu.Unlock()
		for ; seen < len(log); seen++ {
			if m := log[seen]; m.Method == method && (match == nil || match(m)) {
				return m, nil
			}
		}
		if rerr != nil {
			return Message{}, fmt.Errorf("waiting for %s: the connection ended: %w", method, rerr)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Message{}, fmt.Errorf("waiting for %s: %w", method, ctx.Err())
		}
	}
}

func (c *Client) readError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// readLoop reads the server's messages until its output ends.
func (c *Client) readLoop(r *bufio.Reader) {
	var err error
	for {
		var body []byte
		body, err = readFrame(r)
		if err != nil {
			break
		}
		var m Message
		if jerr := json.Unmarshal(body, &m); jerr != nil {
			err = fmt.Errorf("the server sent a frame that is not JSON: %v: %q", jerr, body)
			break
		}
		if m.JSONRPC != "2.0" {
			err = fmt.Errorf("the server sent a message without jsonrpc 2.0: %s", body)
			break
		}
		if m.Method == "" {
			c.deliver(m)
			continue
		}
		c.mu.Lock()
		c.log = append(c.log, m)
		close(c.changed)
		c.changed = make(chan struct{})
		h := c.handlers[m.Method]
		c.mu.Unlock()
		if m.IsRequest() {
			go c.answer(m, h)
		}
	}
	if errors.Is(err, io.EOF) {
		err = io.EOF
	}
	c.mu.Lock()
	c.readErr = err
	close(c.changed)
	c.changed = make(chan struct{})
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	if c.inproc != nil {
		select {
		case <-c.inproc.done:
		case <-c.ctx.Done():
			// The test is over and the server stuck: Cleanup reports it.
		}
		close(c.exited)
		return
	}
	c.exitErr = c.cmd.Wait()
	close(c.exited)
}

func (c *Client) deliver(m Message) {
	id := string(m.ID)
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	if ok {
		ch <- m
		return
	}
	// An answer to no request of ours: an error about a message the server could not
	// read (id null), or about raw input with an id. Unmatched returns them.
	c.log = append(c.log, m)
	close(c.changed)
	c.changed = make(chan struct{})
}

// Unmatched returns the responses that answer no request sent with Call or Go: the
// server's errors about messages it could not read (id null), or about raw messages
// written with WriteRaw.
func (c *Client) Unmatched() []Message {
	var out []Message
	for _, m := range c.Received("") {
		if m.Method == "" {
			out = append(out, m)
		}
	}
	return out
}

// answer runs the handler of a server request and sends its response.
func (c *Client) answer(m Message, h Handler) {
	resp := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if h == nil {
		resp["error"] = &ResponseError{Code: CodeMethodNotFound, Message: "unhandled method " + m.Method}
	} else {
		res, err := h(c.ctx, m.Params)
		var re *ResponseError
		switch {
		case errors.As(err, &re):
			resp["error"] = re
		case err != nil:
			resp["error"] = &ResponseError{Code: CodeInternalError, Message: err.Error()}
		default:
			resp["result"] = res
		}
	}
	if err := c.send(resp); err != nil && c.ctx.Err() == nil {
		c.t.Logf("lsptest: answering %s: %v", m.Method, err)
	}
}

// readFrame reads one Content-Length framed body.
func readFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && length < 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading a header: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("malformed header line %q", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("a frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading a body of %d bytes: %w", length, err)
	}
	return body, nil
}

// Initialize sends initialize with params, then initialized, and returns the result.
// The editor model takes the position encoding the server chose.
func (c *Client) Initialize(ctx context.Context, params any) (json.RawMessage, error) {
	var res json.RawMessage
	if err := c.Call(ctx, "initialize", params, &res); err != nil {
		return nil, err
	}
	var caps struct {
		Capabilities struct {
			PositionEncoding string `json:"positionEncoding"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(res, &caps); err != nil {
		return nil, fmt.Errorf("decoding the initialize result: %w", err)
	}
	enc := caps.Capabilities.PositionEncoding
	if enc == "" {
		enc = "utf-16"
	}
	c.editor.SetEncoding(enc)
	return res, c.Notify("initialized", map[string]any{})
}

// Shutdown sends shutdown and exit, and waits for the server to exit; it returns the
// exit code.
func (c *Client) Shutdown(ctx context.Context) (int, error) {
	if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
		return -1, err
	}
	if err := c.Notify("exit", nil); err != nil {
		return -1, err
	}
	return c.Wait(ctx)
}
