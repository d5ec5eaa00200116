package confirm

import (
	"fmt"
	"maps"
	"strings"
	"sync"
)

// Grants are what a person answered "always" in one session: the calls they allowed,
// and the calls they refused, for the rest of that session. Each session has its own,
// so that nothing one session is told changes another. The zero value is empty and
// ready to use; a Grants is safe for concurrent use.
type Grants struct {
	mu     sync.Mutex
	allow  map[string]bool // grant keys (key… below) allowed
	reject map[string]bool // grant keys refused
	edits  bool            // every edit runs, as in auto_edit
}

// The kinds of grant key: a shell command's root (see Analysis.Roots), a tool, an
// MCP server, an MCP server's tool, and a command line that has no roots.
const (
	keyRoot   = "root\x00"
	keyTool   = "tool\x00"
	keyServer = "server\x00"
	keyMCP    = "mcp\x00"
	keyLine   = "line\x00"
)

// set adds keys to the set m of g; g.mu is held.
func (g *Grants) set(m *map[string]bool, keys []string) {
	if *m == nil {
		*m = map[string]bool{}
	}
	for _, k := range keys {
		(*m)[k] = true
	}
}

// clone returns a copy of g, which changes apart from it.
func (g *Grants) clone() Grants {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Grants{allow: maps.Clone(g.allow), reject: maps.Clone(g.reject), edits: g.edits}
}

// allowed reports whether every key was allowed.
func (g *Grants) allowed(keys []string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		if !g.allow[k] {
			return false
		}
	}
	return len(keys) > 0
}

// rejected returns the first key that was refused, or "".
func (g *Grants) rejected(keys []string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		if g.reject[k] {
			return k
		}
	}
	return ""
}

// allEdits reports whether the person allowed every edit for the session.
func (g *Grants) allEdits() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.edits
}

// keyText says what a grant key stands for, for a person.
func keyText(k string) string {
	kind, rest, _ := strings.Cut(k, "\x00")
	switch kind + "\x00" {
	case keyRoot:
		return fmt.Sprintf("the command %q", rest)
	case keyServer:
		return "the MCP server " + rest
	case keyMCP:
		server, tool, _ := strings.Cut(rest, "\x00")
		return fmt.Sprintf("the tool %s of the MCP server %s", tool, server)
	case keyLine:
		return fmt.Sprintf("the command line %q", rest)
	}
	return "the tool " + rest
}
