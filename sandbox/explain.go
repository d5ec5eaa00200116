package sandbox

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// denial matches the messages programs print when a write, a read or a connection is
// refused ("device or resource busy" is a rename onto a read-only bind mount).
var denial = regexp.MustCompile(`(?i)permission denied|operation not permitted|read-only file system|device or resource busy|network is unreachable|could not resolve host|temporary failure in name resolution|name or service not known|connection refused`)

// networkDenial are the denials that only a connection gets.
var networkDenial = regexp.MustCompile(`(?i)network is unreachable|could not resolve host|temporary failure in name resolution|name or service not known|connection refused|\bsocket: permission denied|/dev/(tcp|udp)/`)

// Note is the line a command's result ends with, in every front end: where it ran —
// contained, not contained and why, or outside at the model's request (outside) — and
// for a contained command that failed, what Explain finds in its output (printed
// from a command run in dir).
func (s *Sandbox) Note(outside, failed bool, output, dir string) string {
	if outside && s.status.Contained {
		return "Sandbox: not contained: run outside the sandbox at the model's request, with the user's consent."
	}
	note := "Sandbox: " + s.status.Summary + "."
	if failed {
		if why := s.Explain(output, dir); why != "" {
			note += " " + why
		}
	}
	return note
}

// Explain returns what a contained command's failure owes to the sandbox, for the
// model: the paths its output (from a command run in dir) says were refused that the
// policy does not let it write (or hides), and refused connections where the network
// is off; "" when the output shows nothing of the kind.
func (s *Sandbox) Explain(output, dir string) string {
	if !s.status.Contained {
		return ""
	}
	var parts []string
	network := false
	for line := range strings.Lines(output) {
		if !denial.MatchString(line) {
			continue
		}
		if networkDenial.MatchString(line) {
			network = network || !s.policy.Network
			continue
		}
		for _, path := range pathsIn(line) {
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			if why := s.refusal(filepath.Clean(path)); why != "" && !slices.Contains(parts, why) {
				parts = append(parts, why)
			}
		}
	}
	if network {
		parts = append(parts, "contained commands cannot reach the network (tools.sandbox.network is off)")
	}
	if len(parts) == 0 {
		return ""
	}
	return "The sandbox may have refused this command: " + strings.Join(parts, "; ") +
		". If the command needs this, say so to the user: they can add a path to tools.sandbox.writablePaths or turn on tools.sandbox.network, " +
		"or you can run the command again with sandbox: false and a one-line justification, which asks the user."
}

// pathsIn returns the words of a message that look like paths: quoted, or holding a
// slash or starting with a dot, without the colon that ends them.
func pathsIn(line string) []string {
	var out []string
	for _, f := range strings.Fields(line) {
		f = strings.Trim(f, "'\"`‘’“”:,()")
		if f != "" && (strings.Contains(f, "/") || strings.HasPrefix(f, ".")) && !strings.Contains(f, "://") {
			out = append(out, f)
		}
	}
	return out
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
