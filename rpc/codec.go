package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// The transport: the LSP base protocol (Content-Length framed JSON-RPC 2.0) over a byte
// stream, and the payload codec.
//
// jsonrpc2's own header stream ends the connection at the first malformed frame. An
// editor's language server must not die of one bad message, so this stream answers a
// frame that is not a JSON-RPC message with the error the JSON-RPC specification
// prescribes (id null when the id cannot be read) and reads on. After a frame whose
// Content-Length was wrong, it skips ahead to the next "Content-Length:" header.

const (
	// maxContentLength bounds one message. An editor sends whole documents in didOpen,
	// but nothing near this; a larger declared length is taken as garbage.
	maxContentLength = 256 << 20
	// maxHeaderLine bounds a header line while looking for the next frame; longer
	// garbage is discarded as it is read.
	maxHeaderLine = 1 << 20
)

// stream is a jsonrpc2.Stream over a reader and a writer with LSP framing that survives
// malformed input.
type stream struct {
	in     *bufio.Reader
	closer io.Closer // closes the input, if it can be closed, to unblock a read
	out    io.Writer
	log    *slog.Logger
	// onEOF is called once when the input ends or fails, before the connection
	// learns of it (from then on it writes nothing more).
	onEOF   func()
	eofOnce sync.Once
	body    []byte // the body of the frame last read, reused (see Read)
	wmu     sync.Mutex
	wbuf    []byte // the frame being written, reused; guarded by wmu
	garbage int    // bytes skipped since the last frame, for the log
	// closed is closed when the connection closes the stream: once it is closing and
	// every request has been answered.
	closed    chan struct{}
	closeOnce sync.Once
}

func newStream(in io.Reader, out io.Writer, log *slog.Logger, onEOF func()) *stream {
	s := &stream{in: bufio.NewReaderSize(in, 64<<10), out: out, log: log, onEOF: onEOF, closed: make(chan struct{})}
	if c, ok := in.(io.Closer); ok {
		s.closer = c
	}
	return s
}

// frameError is a frame that cannot be read as one message; it is answered and the
// stream reads on.
type frameError struct {
	code jsonrpc2.Code
	msg  string
}

func (e *frameError) Error() string { return e.msg }

// Read implements jsonrpc2.Stream: it returns the next well-formed message, answering
// every malformed one on the way. A request borrows the body buffer, which the next
// Read reuses: the connection reads on only after the handler returned or released
// the request with jsonrpc2.Async, which copies it.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		body, n, err := s.readFrame()
		if err != nil {
			var fe *frameError
			if errors.As(err, &fe) {
				s.answer(ctx, jsonrpc2.ID{}, fe.code, fe.msg)
				continue
			}
			s.eofOnce.Do(s.onEOF)
			return nil, 0, err
		}
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			id, code, why := diagnose(body, err)
			s.answer(ctx, id, code, why)
			continue
		}
		return msg, n, nil
	}
}

// answer writes an error response for a message that never reached a handler.
func (s *stream) answer(ctx context.Context, id jsonrpc2.ID, code jsonrpc2.Code, msg string) {
	s.log.Warn("malformed message from the client", "code", code, "error", msg)
	if _, err := s.Write(ctx, jsonrpc2.NewResponse(id, nil, jsonrpc2.NewError(code, msg))); err != nil {
		s.log.Warn("answering a malformed message", "error", err)
	}
}

// maxKeptBody is the largest message body buffer kept for the next message.
const maxKeptBody = 4 << 20

// readFrame reads one header block and the body it announces. A header block without a
// usable Content-Length is a *frameError; input that is not a header at all is skipped
// up to the next "Content-Length:".
func (s *stream) readFrame() ([]byte, int64, error) {
	// The previous body was only lent until now. A large one (a big didOpen) is dropped
	// before waiting for the next message, which may be a long wait, rather than kept
	// alive until it arrives.
	if cap(s.body) > maxKeptBody {
		s.body = nil
	}
	length := -1
	headers := 0 // header lines of this block so far
	var read int64
	for {
		line, err := s.readLine()
		read += int64(len(line))
		if err != nil {
			if err == io.EOF && (headers > 0 || len(line) > 0) {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
		line = trimEOL(line)
		if len(line) == 0 {
			if headers == 0 {
				continue // blank lines between frames
			}
			break
		}
		name, value, ok := headerField(line)
		if !ok {
			// Not a header: the rest of a body whose Content-Length was too short, or
			// junk. Resume at a Content-Length header in the same line, if any.
			i := indexFold(line, "content-length:")
			if i < 0 {
				s.skipped(len(line))
				length, headers = -1, 0
				continue
			}
			s.skipped(i)
			length, headers = -1, 0
			line = line[i:]
			name, value, _ = headerField(line)
		}
		headers++
		if !equalFold(name, "content-length") {
			continue // Content-Type and unknown fields are ignored
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
		if err != nil || n < 0 {
			length = -2
			continue
		}
		if n > maxContentLength {
			length = -3
			continue
		}
		length = int(n)
	}
	switch length {
	case -1:
		return nil, 0, &frameError{jsonrpc2.ParseError, "parse error: the message has no Content-Length header"}
	case -2:
		return nil, 0, &frameError{jsonrpc2.ParseError, "parse error: the Content-Length header is not a non-negative number"}
	case -3:
		return nil, 0, &frameError{jsonrpc2.ParseError, fmt.Sprintf("parse error: the Content-Length is over the limit of %d bytes", maxContentLength)}
	}
	if s.garbage > 0 {
		s.log.Warn("skipped input that was not a message", "bytes", s.garbage)
		s.garbage = 0
	}
	if cap(s.body) < length {
		s.body = make([]byte, length)
	}
	s.body = s.body[:length]
	if _, err := io.ReadFull(s.in, s.body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, 0, err
	}
	return s.body, read + int64(length), nil
}

// readLine reads up to and including the next '\n'. A line over maxHeaderLine is
// garbage: all but its last bytes (which may begin a header) are dropped.
func (s *stream) readLine() ([]byte, error) {
	var acc []byte
	for {
		chunk, err := s.in.ReadSlice('\n')
		if err == nil {
			if acc == nil {
				return chunk, nil
			}
			return append(acc, chunk...), nil
		}
		acc = append(acc, chunk...)
		if err != bufio.ErrBufferFull {
			return acc, err
		}
		if len(acc) > maxHeaderLine {
			keep := len("content-length:")
			s.skipped(len(acc) - keep)
			acc = append(acc[:0], acc[len(acc)-keep:]...)
		}
	}
}

func (s *stream) skipped(n int) { s.garbage += n }

// Write implements jsonrpc2.Stream: one frame, header and body, in one write.
func (s *stream) Write(_ context.Context, msg jsonrpc2.Message) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	// The header goes in front of the body once its length is known: reserve room for
	// the longest header and write it right-aligned.
	const room = len("Content-Length: ") + 20 + len("\r\n\r\n")
	buf := append(s.wbuf[:0], make([]byte, room)...)
	buf = jsonrpc2.AppendMessage(buf, msg)
	var hdr [room]byte
	h := append(hdr[:0], "Content-Length: "...)
	h = strconv.AppendInt(h, int64(len(buf)-room), 10)
	h = append(h, "\r\n\r\n"...)
	start := room - len(h)
	copy(buf[start:], h)
	n, err := s.out.Write(buf[start:])
	if cap(buf) <= 1<<20 {
		s.wbuf = buf[:0]
	} else {
		s.wbuf = nil // do not keep a huge buffer for the life of the server
	}
	return int64(n), err
}

// Close implements jsonrpc2.Stream. It closes the input, where it can, to unblock the
// reader; the output is left to the caller, so that the last writes complete.
func (s *stream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}

// headerField splits "Name: value"; ok is false unless Name is an HTTP token.
func headerField(line []byte) (name, value []byte, ok bool) {
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return nil, nil, false
	}
	for _, c := range line[:i] {
		if !isTokenChar(c) {
			return nil, nil, false
		}
	}
	return line[:i], line[i+1:], true
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}

func equalFold(b []byte, s string) bool { return len(b) == len(s) && indexFold(b, s) == 0 }

// indexFold is bytes.Index ignoring ASCII case; s must be lower case.
func indexFold(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		j := 0
		for j < len(s) {
			c := b[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != s[j] {
				break
			}
			j++
		}
		if j == len(s) {
			return i
		}
	}
	return -1
}

// diagnose explains why body, which jsonrpc2 refused with err, is not a JSON-RPC
// message, and finds its id where it has a usable one, so the answer can name it.
func diagnose(body []byte, err error) (jsonrpc2.ID, jsonrpc2.Code, string) {
	var v any
	if jerr := json.Unmarshal(body, &v); jerr != nil {
		return jsonrpc2.ID{}, jsonrpc2.ParseError, "parse error: the message is not valid JSON: " + jerr.Error()
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if _, isArray := v.([]any); isArray {
			return jsonrpc2.ID{}, jsonrpc2.InvalidRequest, "invalid request: batches are not supported (the Language Server Protocol sends one message per frame)"
		}
		return jsonrpc2.ID{}, jsonrpc2.InvalidRequest, "invalid request: a message must be a JSON object"
	}
	var id jsonrpc2.ID
	switch x := obj["id"].(type) {
	case float64:
		if x == float64(int64(x)) {
			id = jsonrpc2.NewNumberID(int64(x))
		}
	case string:
		id = jsonrpc2.NewStringID(x)
	}
	why := "the message is not a valid JSON-RPC 2.0 request or response"
	_, hasMethod := obj["method"]
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	switch {
	case obj["jsonrpc"] != "2.0":
		why = `"jsonrpc" must be "2.0"`
	case hasMethod && (hasResult || hasError):
		why = `a message cannot have both "method" and "result" or "error"`
	case hasMethod:
		if _, ok := obj["method"].(string); !ok {
			why = `"method" must be a string`
		} else if _, ok := obj["id"]; ok && !id.IsValid() && obj["id"] != nil {
			why = `"id" must be an integer or a string`
		}
	default:
		why = `a request needs a "method"; a response needs an "id" and a "result" or an "error"`
	}
	if err != nil && !errors.Is(err, jsonrpc2.ErrInvalidRequest) && !errors.Is(err, jsonrpc2.ErrParse) {
		why += " (" + err.Error() + ")"
	}
	return id, jsonrpc2.InvalidRequest, "invalid request: " + why
}

// codec marshals params and results with go.lsp.dev/protocol, whose generated encoders
// and decoders handle the LSP union types; everything else goes through its
// encoding/json/v2 fallback. Raw messages pass through unchanged.
type codec struct{}

var _ jsonrpc2.Codec = codec{}

// Marshal implements jsonrpc2.Codec.
func (codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case json.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	}
	return protocol.Marshal(v)
}

// Unmarshal implements jsonrpc2.Codec.
func (codec) Unmarshal(data []byte, v any) error {
	switch p := v.(type) {
	case *jsonrpc2.RawMessage:
		*p = bytes.Clone(data)
		return nil
	case *json.RawMessage:
		*p = bytes.Clone(data)
		return nil
	}
	return protocol.Unmarshal(data, v)
}

// decodeParams decodes the params of method into v. Missing or mistyped params are an
// InvalidParams error that names the method and the problem.
func decodeParams(method string, params jsonrpc2.RawMessage, v any) error {
	if len(bytes.TrimSpace(params)) == 0 {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params for %s: params are missing", method)
	}
	if err := (codec{}).Unmarshal(params, v); err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params for %s: %v", method, err)
	}
	return nil
}
