package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/tools"
)

// Live shell output by the convention Zed renders for claude-agent-acp and codex-acp.
// A client that declares clientCapabilities._meta.terminal_output (Zed does) is shown a
// shell command that agentls runs itself (the client has no terminal capability, or the
// command runs in the background) as a terminal of the call's own: the tool_call
// carries {type: "terminal", terminalId: <the call's id>} as its content and
// _meta.terminal_info {terminal_id, cwd}; each chunk of output comes as a
// tool_call_update with _meta.terminal_output {terminal_id, data}; the final update
// carries _meta.terminal_exit {terminal_id, exit_code, signal}. What is shown is
// bounded: the first liveHead bytes as they come, then the last liveTail bytes at the
// end with a line saying how much was left out between them and where the whole
// output is (the shell tool's file, when it saved one). The model's result is the
// shell tool's as always.

// The bounds of the output a terminal of the convention shows.
const (
	liveHead = 64 << 10
	liveTail = 64 << 10
)

// metaTerminalClient reports whether the client renders the terminal convention.
func metaTerminalClient(caps sdk.ClientCapabilities) bool {
	on, _ := caps.Meta["terminal_output"].(bool)
	return on
}

// liveTerminal is what a terminal of the convention was shown of a call's output.
type liveTerminal struct {
	// shown counts the bytes sent; tail keeps the last liveTail bytes of those not
	// sent once the head is full, and elided counts those.
	shown  int
	tail   []byte
	elided int64
}

// metaTerminal reports whether the shell call with args runs in agentls for a client
// of the convention, so that it is shown as a terminal of its own.
func (st *sessionState) metaTerminal(name string, args json.RawMessage) bool {
	if name != shellTool || !metaTerminalClient(st.caps) {
		return false
	}
	var a struct {
		IsBackground bool `json:"is_background"`
	}
	_ = json.Unmarshal(args, &a)
	// A foreground command of a client with terminals runs in one of those.
	return !st.caps.Terminal || a.IsBackground
}

// terminalCwd is the directory the shell call with args runs in.
func (st *sessionState) terminalCwd(args json.RawMessage) string {
	root := st.host.Toolbox().Workspace.Roots()[0]
	var a struct {
		DirPath string `json:"dir_path"`
	}
	if json.Unmarshal(args, &a) != nil || a.DirPath == "" {
		return root
	}
	if filepath.IsAbs(a.DirPath) {
		return filepath.Clean(a.DirPath)
	}
	return filepath.Join(root, a.DirPath)
}

// take returns the part of chunk to send now: all of it while the head has room, else
// what fits, the rest kept as the tail.
func (t *liveTerminal) take(chunk string) string {
	room := max(liveHead-t.shown, 0)
	if len(chunk) <= room {
		t.shown += len(chunk)
		return chunk
	}
	// A character cut at the bound goes with the rest.
	cut := room
	for cut > 0 && chunk[cut]&0xC0 == 0x80 {
		cut--
	}
	send := chunk[:cut]
	t.shown = liveHead
	rest := chunk[len(send):]
	t.elided += int64(len(rest))
	t.tail = append(t.tail, rest...)
	if over := len(t.tail) - liveTail; over > 0 {
		t.tail = t.tail[over:]
	}
	return send
}

// end returns what the terminal shows after the head once the call ended: nothing
// when the whole output was shown, else a line saying what was left out and where
// the whole is, then the tail.
func (t *liveTerminal) end(r *tools.CallResult) string {
	if t.elided == 0 {
		return ""
	}
	tail := string(t.tail)
	tail = tail[startOfChar(tail):]
	left := t.elided - int64(len(tail))
	where := "the model received it as the shell tool reports it"
	if r != nil && r.OutputFile != "" {
		where = "the full output is saved in " + r.OutputFile
	}
	return fmt.Sprintf("\n[agentls: %d bytes of output are not shown here; %s]\n%s", left, where, tail)
}

// startOfChar returns the index of the first character that starts in s.
func startOfChar(s string) int {
	for i := range min(len(s), 4) {
		if s[i]&0xC0 != 0x80 {
			return i
		}
	}
	return 0
}

// exitMeta is the terminal_exit of a call's result: its exit code or signal, from the
// shell tool's summary ("Exit code N", "Killed by SIGNAL").
func exitMeta(id string, r *tools.CallResult) map[string]any {
	m := map[string]any{"terminal_id": id, "exit_code": nil, "signal": nil}
	if r == nil {
		return m
	}
	switch {
	case strings.HasPrefix(r.Summary, "Exit code "):
		code, _, _ := strings.Cut(strings.TrimPrefix(r.Summary, "Exit code "), ",")
		if n, err := strconv.Atoi(code); err == nil {
			m["exit_code"] = n
		}
	case strings.HasPrefix(r.Summary, "Killed by "):
		sig, _, _ := strings.Cut(strings.TrimPrefix(r.Summary, "Killed by "), ",")
		m["signal"] = sig
	case r.Error != nil:
		// Refused, cancelled or failed before it ran: no code.
	}
	return m
}

// withMeta returns meta (nil or a map of its own) with key set to v.
func withMeta(meta map[string]any, key string, v any) map[string]any {
	if meta == nil {
		meta = map[string]any{}
	}
	meta[key] = v
	return meta
}
