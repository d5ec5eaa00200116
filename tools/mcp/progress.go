package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress notifications and the response of a call arrive in order, but the SDK hands
// the response to the caller at once while it queues notifications for a handler
// goroutine: without care the last progress lines of a call would often be lost when
// the call returns first. So notifications are also counted as they are read off the
// wire (by countingConn for stdio and in-memory connections, by sseCounter in the HTTP
// response bodies of the HTTP transports), and a call, once answered, waits until its
// handler has caught up with what was read before the answer.

// maxProgressDrain bounds that wait, should a count ever be off.
const maxProgressDrain = time.Second

const methodProgress = "notifications/progress"

// progressSink writes a call's progress notifications to its live output until the
// call ends.
type progressSink struct {
	mu       sync.Mutex
	out      io.Writer
	received int // notifications read off the wire
	handled  int // notifications written (or dropped) by the handler
	ended    bool
}

func (p *progressSink) write(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handled++
	if !p.ended && p.out != nil {
		_, _ = io.WriteString(p.out, line)
	}
}

func (p *progressSink) saw() {
	p.mu.Lock()
	p.received++
	p.mu.Unlock()
}

// drain waits until every notification read has been written, then ends the sink.
func (p *progressSink) drain() {
	deadline := time.Now().Add(maxProgressDrain)
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.handled < p.received && time.Now().Before(deadline) {
		p.mu.Unlock()
		time.Sleep(time.Millisecond)
		p.mu.Lock()
	}
	p.ended = true
}

// sawProgress counts a progress notification for token read off the wire.
func (s *server) sawProgress(token string) {
	s.mu.Lock()
	sink := s.calls[token]
	s.mu.Unlock()
	if sink != nil {
		sink.saw()
	}
}

// sawMessage counts data, one JSON-RPC message, if it is a progress notification.
func (s *server) sawMessage(method string, params json.RawMessage) {
	if method != methodProgress {
		return
	}
	var p struct {
		Token any `json:"progressToken"`
	}
	if json.Unmarshal(params, &p) == nil {
		if token, ok := p.Token.(string); ok {
			s.sawProgress(token)
		}
	}
}

// progress routes a progress notification to the call that asked for it, as a line
// "progress 3/10: message".
func (s *server) progress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	s.mu.Lock()
	sink := s.calls[token]
	s.mu.Unlock()
	if sink == nil {
		return
	}
	line := "progress " + strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		line += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		line += ": " + p.Message
	}
	sink.write(line + "\n")
}

// countingTransport counts the progress notifications its connections read.
type countingTransport struct {
	inner sdk.Transport
	s     *server
}

func (t *countingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Connection: c, s: t.s}, nil
}

type countingConn struct {
	sdk.Connection
	s *server
}

func (c *countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil {
		c.s.sawMessage(req.Method, req.Params)
	}
	return msg, err
}

// sseCounter is an http.RoundTripper that counts the progress notifications in the
// event streams of its responses.
type sseCounter struct {
	base http.RoundTripper
	s    *server
}

func (t *sseCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		resp.Body = &sseBody{ReadCloser: resp.Body, s: t.s}
	}
	return resp, nil
}

// sseBody passes an event stream through, counting progress notifications in its
// data lines (the JSON-RPC messages, one a line) as they go by.
type sseBody struct {
	io.ReadCloser
	s    *server
	line []byte
	skip bool // the current line is too long to be a progress notification
}

// maxSSELine bounds the part of a line kept for inspection; progress notifications
// are far shorter.
const maxSSELine = 64 << 10

func (b *sseBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	data := p[:n]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		chunk := data
		if i >= 0 {
			chunk = data[:i]
		}
		if !b.skip {
			if len(b.line)+len(chunk) > maxSSELine {
				b.skip, b.line = true, b.line[:0]
			} else {
				b.line = append(b.line, chunk...)
			}
		}
		if i < 0 {
			break
		}
		if !b.skip {
			b.inspect(bytes.TrimRight(b.line, "\r"))
		}
		b.line, b.skip = b.line[:0], false
		data = data[i+1:]
	}
	return n, err
}

func (b *sseBody) inspect(line []byte) {
	rest, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !bytes.Contains(rest, []byte(methodProgress)) {
		return
	}
	var msg struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(rest, &msg) == nil {
		b.s.sawMessage(msg.Method, msg.Params)
	}
}
