package sandbox

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// denial matches the messages programs print when a write, a read or a connection is
// refused.
var denial = regexp.MustCompile(`(?i)permission denied|operation not permitted|read-only file system|network is unreachable|could not resolve host|temporary failure in name resolution|name or service not known|connection refused`)

// pathInLine finds the paths a message names: quoted, or a word that starts with /.
var pathInLine = regexp.MustCompile("['\"`‘“]?(/[^\\s'\"`’”:]*)")

// Explain returns what a contained command's failure owes to the sandbox, for the
// model: the paths its output says were refused that the policy does not let it write
// (or hides), and refused connections where the network is off; "" when the output
// shows nothing of the kind.
func (s *Sandbox) Explain(output string) string {
	if !s.status.Contained {
		return ""
	}
	p := s.policy
	var paths []string
	network := false
	for line := range strings.Lines(output) {
		m := denial.FindString(line)
		if m == "" {
			continue
		}
		switch strings.ToLower(m) {
		case "network is unreachable", "could not resolve host", "temporary failure in name resolution", "name or service not known", "connection refused":
			network = network || !p.Network
			continue
		}
		found := false
		for _, sub := range pathInLine.FindAllStringSubmatch(line, -1) {
			path := filepath.Clean(sub[1])
			if why := s.refusal(path); why != "" && !slices.Contains(paths, why) {
				paths, found = append(paths, why), true
			}
		}
		if !found && !p.Network && strings.Contains(strings.ToLower(line), "connect") {
			network = true
		}
	}
	if len(paths) == 0 && !network {
		return ""
	}
	var b strings.Builder
	b.WriteString("The sandbox may have refused this command: ")
	var parts []string
	for _, w := range paths {
		parts = append(parts, w)
	}
	if network {
		parts = append(parts, "contained commands cannot reach the network (tools.sandbox.network is off)")
	}
	b.WriteString(strings.Join(parts, "; "))
	b.WriteString(". If the command needs this, say so to the user: they can add a path to tools.sandbox.writablePaths or turn on tools.sandbox.network, or you can run the command again with sandbox: false and a one-line justification, which asks the user.")
	return b.String()
}

// refusal says why the sandbox refuses writing path, or "" when it does not.
func (s *Sandbox) refusal(path string) string {
	p := s.policy
	if p.Namespaces {
		for _, h := range p.Hidden {
			if within(path, h) {
				return fmt.Sprintf("%s is hidden from contained commands", path)
			}
		}
		for _, r := range p.ReadOnly {
			if within(path, r) {
				return fmt.Sprintf("%s is kept read-only inside the sandbox", path)
			}
		}
	}
	if strings.HasPrefix(path, "/dev/") || strings.HasPrefix(path, "/proc/") {
		return ""
	}
	for _, w := range p.Writable {
		if within(path, w) {
			return ""
		}
	}
	return fmt.Sprintf("%s is outside the paths contained commands may write (the workspace, the temporary directory, the build caches and tools.sandbox.writablePaths)", path)
}
