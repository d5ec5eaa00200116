package shell

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
)

// Session is the persistent shell of one session (tools.shell.persistent): the working
// directory and the exported variables a command leaves carry to the session's next
// command, as in one terminal (Kode's BashTool keeps one bash process for this).
//
// No process lives between commands: each command runs as before, in a process group
// of its own that cancelling ends, and an EXIT trap it runs in reports its working
// directory and environment to a file agentls reads after it. So nothing is left
// behind when a command is cancelled; the shell then starts afresh, as a killed
// terminal would, and the next command's result says so.
//
// Consent is not weakened. A command is analysed in the carried directory, so the
// files it writes resolve as they will at run time, and the carried variables are
// shown to the person and the policy in front of it (export NAME=value; unset NAME;
// …), as if the command line set them itself: an "always" given for "go" does not
// cover "export GOFLAGS=-x; go". It is safe for concurrent use; the commands of a
// session run one at a time.
type Session struct {
	// run is held while a command of the session runs, so that each starts where the
	// last one left.
	run sync.Mutex

	mu  sync.Mutex
	cwd string // "": the first root
	// set are the exported variables the session's commands set or changed, unset
	// those of agentls's environment they removed.
	set   map[string]string
	unset map[string]bool
	// note is said with the next command's result: why the shell started afresh.
	note string
}

// NewSession returns a fresh persistent shell, in the first root.
func NewSession() *Session { return &Session{} }

type sessionKey struct{}

// WithSession returns ctx for the calls of a session whose commands share p; a nil p
// runs each command alone.
func WithSession(ctx context.Context, p *Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, p)
}

func sessionFrom(ctx context.Context) *Session {
	p, _ := ctx.Value(sessionKey{}).(*Session)
	return p
}

// shellState is where a command of a persistent shell runs.
type shellState struct {
	dir   string
	set   map[string]string
	unset map[string]bool
}

// prefix shows the carried variables as the statements that would set them, in front
// of the command line a person approves and the policy analyses; "" when none is
// carried.
func (st shellState) prefix() string {
	var parts []string
	if len(st.set) > 0 {
		var b strings.Builder
		b.WriteString("export")
		for _, k := range slices.Sorted(maps.Keys(st.set)) {
			fmt.Fprintf(&b, " %s=%s", k, shellQuote(st.set[k]))
		}
		parts = append(parts, b.String())
	}
	if len(st.unset) > 0 {
		parts = append(parts, "unset "+strings.Join(slices.Sorted(maps.Keys(st.unset)), " "))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "; "
}

// env returns base with the carried variables applied.
func (st shellState) env(base []string) []string {
	out := make([]string, 0, len(base)+len(st.set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := st.set[k]; set || st.unset[k] {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range slices.Sorted(maps.Keys(st.set)) {
		out = append(out, k+"="+st.set[k])
	}
	return out
}

func (st shellState) equal(o shellState) bool {
	return st.dir == o.dir && maps.Equal(st.set, o.set) && maps.Equal(st.unset, o.unset)
}

// state returns where the next command runs. A directory that is gone or no longer
// inside the workspace sends the shell back to the first root, with a note.
func (p *Session) state(s *Shell) shellState {
	p.mu.Lock()
	defer p.mu.Unlock()
	root := s.ws.Roots()[0]
	if p.cwd != "" {
		if why := s.unusableDir(p.cwd); why != "" {
			p.note = joinNotes(p.note, fmt.Sprintf("The shell's working directory %s %s, so the shell went back to the workspace root.", p.cwd, why))
			p.cwd = ""
		}
	}
	dir := p.cwd
	if dir == "" {
		dir = root
	}
	return shellState{dir: dir, set: maps.Clone(p.set), unset: maps.Clone(p.unset)}
}

// unusableDir says why dir cannot be a persistent shell's working directory; "" if it
// can.
func (s *Shell) unusableDir(dir string) string {
	abs, err := s.ws.Resolve(dir)
	if err != nil {
		return "is outside the workspace"
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.IsDir() {
		return "no longer exists"
	}
	return ""
}

// takeNote returns and clears the note for the next result.
func (p *Session) takeNote() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.note
	p.note = ""
	return n
}

// restart forgets the directory and the variables, as a killed shell loses them, and
// leaves a note saying why for the next command.
func (p *Session) restart(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cwd, p.set, p.unset = "", nil, nil
	p.note = joinNotes(p.note, "The session's shell was restarted because "+why+
		": the next command runs in the workspace root, without the variables earlier commands exported.")
}

// ignoredVars are variables bash sets itself, which are not the commands' to carry.
var ignoredVars = map[string]bool{"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true}

// capture records the state a command left in file, as its EXIT trap wrote it (its
// working directory, then its environment, NUL-separated), against base, the
// environment agentls gives commands. It returns a note for the command's result when
// the directory changed or could not be kept. A file the command left empty (it
// replaced the trap, or exec'd another program) leaves the state as it was.
func (p *Session) capture(s *Shell, file string, base []string, before string) string {
	data, err := os.ReadFile(file)
	if err != nil || len(data) == 0 {
		return ""
	}
	fields := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	cwd, entries := fields[0], fields[1:]
	baseVars := map[string]string{}
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		baseVars[k] = v
	}
	set, unset := map[string]string{}, map[string]bool{}
	seen := map[string]bool{}
	for _, kv := range entries {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || ignoredVars[k] {
			continue
		}
		seen[k] = true
		if bv, in := baseVars[k]; !in || bv != v {
			set[k] = v
		}
	}
	for k := range baseVars {
		if !seen[k] && !ignoredVars[k] {
			unset[k] = true
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.set, p.unset = set, unset
	root := s.ws.Roots()[0]
	switch why := s.unusableDir(cwd); {
	case cwd == "" || cwd == before:
		return ""
	case why != "":
		p.cwd = ""
		return fmt.Sprintf("The command left the shell in %s, which %s, so the shell's working directory was reset to the workspace root.", cwd, why)
	case cwd == root:
		p.cwd = ""
	default:
		p.cwd = cwd
	}
	return fmt.Sprintf("The shell's working directory is now %s; the session's next command runs there.", s.displayDir(cwd))
}

// stateTrap returns the text put in front of a command line so that, when the shell
// exits, it writes its working directory and environment to file. It ends in "; " so
// that the command stays on the first line of the script, as bash's messages number it.
func stateTrap(file string) string {
	return "__agentls_save() { __agentls_rc=$?; { printf '%s\\0' \"$PWD\"; env -0; } >" + shellQuote(file) +
		" 2>/dev/null; exit \"$__agentls_rc\"; }; trap __agentls_save EXIT; "
}

// shellQuote quotes s for bash as one word.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r == '/' || r == ':' || r == ',' || r == '+' || r == '=' || r == '@' || r == '%' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}
