package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// maxLine is the longest message accepted, as the SDK's connection bounds it.
const maxLine = 10 << 20

// filterInput copies the client's messages from in to the SDK's connection (to) and
// answers those the SDK would drop without a word: a line that is not JSON gets a
// Parse error, a batch, a value that is not an object, or an object that is neither a
// request, a notification nor a response gets an Invalid request error, each with a
// message saying what is wrong. The connection goes on serving.
func filterInput(in io.Reader, to io.Writer, out io.Writer, log *slog.Logger) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 {
			if msg := checkMessage(line); msg != nil {
				log.Warn("bad input", "error", msg.Error.Message)
				b, _ := json.Marshal(msg)
				if _, werr := out.Write(append(b, '\n')); werr != nil {
					return werr
				}
			} else if _, werr := to.Write(append(renameNew(line), '\n')); werr != nil {
				return werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// readLine reads a line without its end; a line longer than maxLine is an error,
// which ends the connection.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a message longer than %d bytes", maxLine)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// errorMessage is a JSON-RPC error response.
type errorMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   errorObject     `json:"error"`
}

type errorObject struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// checkMessage returns the error answering line, or nil when line is a message for
// the SDK's connection.
func checkMessage(line []byte) *errorMessage {
	null := json.RawMessage("null")
	bad := func(id json.RawMessage, code int, format string, args ...any) *errorMessage {
		return &errorMessage{JSONRPC: "2.0", ID: id, Error: errorObject{Code: code, Message: fmt.Sprintf(format, args...)}}
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return bad(null, -32700, "Parse error: the message is not JSON (%v); ACP messages are JSON-RPC 2.0 objects, one per line", err)
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] == '[' {
		return bad(null, codeInvalidRequest, "Invalid request: ACP does not take JSON-RPC batches; send one message per line")
	}
	if trimmed[0] != '{' {
		return bad(null, codeInvalidRequest, "Invalid request: a message must be a JSON-RPC 2.0 object, not %s", trimmed)
	}
	var m struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return bad(null, codeInvalidRequest, "Invalid request: %v", err)
	}
	id := null
	if len(m.ID) > 0 {
		switch m.ID[0] {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			id = m.ID
		case 'n':
		default:
			return bad(null, codeInvalidRequest, "Invalid request: \"id\" must be a string or a number, not %s", m.ID)
		}
	}
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return bad(id, codeInvalidRequest, "Invalid request: \"jsonrpc\" must be \"2.0\"")
	case len(m.Method) > 0 && m.Method[0] != '"':
		return bad(id, codeInvalidRequest, "Invalid request: \"method\" must be a string, not %s", m.Method)
	case len(m.Method) == 0 && len(m.ID) == 0:
		return bad(null, codeInvalidRequest, "Invalid request: the message has neither \"method\" nor \"id\"")
	case len(m.Method) == 0 && len(m.Result) == 0 && len(m.Error) == 0:
		return bad(id, codeInvalidRequest, "Invalid request: the message has no \"method\" (a request) and no \"result\" or \"error\" (a response)")
	}
	return nil
}
