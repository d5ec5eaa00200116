package shell

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Session is the persistent shell of one session (tools.shell.persistent): the working
// directory and the exported variables a command leaves carry to the session's next
// command, as in one terminal (Kode's BashTool keeps one bash process for this).
//
// No process lives between commands: each command runs as before, in a process group
// of its own that cancelling ends, and an EXIT trap it runs in reports its environment
// to a file agentls reads after it. So nothing is left behind when a command is
// cancelled; the shell then starts afresh, as a killed terminal would, and the next
// command's result says so.
//
// What the shell reports is the command's to forge: it can define functions named
// printf or env, or assign PWD. So the working directory is not taken from the report
// but from the kernel (/proc/PID/cwd of the shell, read while its EXIT trap waits for
// agentls; see cwdProbe), resolved physically and checked against the roots; and the
// reported variables are carried only when every name is a shell identifier, so that
// what the policy is shown (export NAME=value; …) is what bash runs.
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
			// capture carries only identifiers, which shellQuote leaves as they are;
			// quoting the name too keeps any other from changing the line's shape.
			fmt.Fprintf(&b, " %s=%s", shellQuote(k), shellQuote(st.set[k]))
		}
		parts = append(parts, b.String())
	}
	if len(st.unset) > 0 {
		names := slices.Sorted(maps.Keys(st.unset))
		for i, k := range names {
			names[i] = shellQuote(k)
		}
		parts = append(parts, "unset "+strings.Join(names, " "))
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
		// A part of the path may have become a link since (a checkout), so it is
		// resolved again: the command is analysed where chdir(2) will put it.
		dir, why := s.physicalDir(p.cwd)
		if why != "" {
			p.note = joinNotes(p.note, fmt.Sprintf("The shell's working directory %s %s, so the shell went back to the workspace root.", p.cwd, why))
			dir = ""
		}
		p.cwd = dir
	}
	dir := p.cwd
	if dir == "" {
		dir = root
	}
	return shellState{dir: dir, set: maps.Clone(p.set), unset: maps.Clone(p.unset)}
}

// physicalDir returns the directory dir names with every link resolved, as the kernel
// resolves it on chdir, or says why it cannot be a persistent shell's working
// directory. Its lexical form is never used: "up/.." with up a link to "." is judged as
// the root by a path cleaner, but is the root's parent to chdir.
func (s *Shell) physicalDir(dir string) (string, string) {
	if !filepath.IsAbs(dir) {
		return "", "is not an absolute path"
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "no longer exists"
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", "no longer exists"
	}
	// The roots are resolved too (workspace.SetRoots), so a plain prefix test is
	// the kernel's answer.
	if !slices.ContainsFunc(s.ws.Roots(), func(r string) bool { return within(r, real) }) {
		return "", "is outside the workspace"
	}
	return real, ""
}

// within reports whether the clean absolute path p is root or below it.
func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
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

// isName reports whether k is a shell variable name, [A-Za-z_][A-Za-z0-9_]*: the only
// names bash's export makes, and the only ones shown to the policy as "export k=…"
// mean what they say there.
func isName(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// maxShownName bounds how much of a refused variable name a note quotes.
const maxShownName = 40

// capture records the state a command left: the environment its EXIT trap wrote to
// file (NUL-separated NAME=value entries), compared with base, the environment agentls
// gives commands; and cwd, the shell's working directory as the kernel reported it
// while the trap ran. It returns a note for the command's result when the directory
// changed or something could not be kept. A file the command left empty (it replaced
// the trap, or exec'd another program) leaves the state as it was.
//
// The file is the command's to write, so its entries are judged: an entry whose name
// is not an identifier (such as BASH_FUNC_f%%, an exported function, or a name holding
// a newline) drops every carried variable, since nothing shown to the policy as an
// export could stand for it.
func (p *Session) capture(s *Shell, file string, cwd kernelDir, base []string, before string) string {
	data, err := os.ReadFile(file)
	if err != nil || len(data) == 0 {
		return ""
	}
	if !cwd.known {
		return "The shell did not report where the command left it (the command closed or took over the descriptors of the shell's exit trap), " +
			"so the session's shell keeps the working directory and variables it had before the command."
	}
	var note string
	set, unset, bad := parseEnv(data, base)
	if bad != "" {
		set, unset = nil, nil
		if len(bad) > maxShownName {
			bad = bad[:maxShownName] + "…"
		}
		note = fmt.Sprintf("The command left a variable named %q, which is not a shell variable name (an exported function, say), "+
			"so the session's shell carries none of its variables: the next command runs without the variables earlier commands exported.", bad)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.set, p.unset = set, unset
	root := s.ws.Roots()[0]
	dir, why := s.physicalDir(cwd.path)
	if cwd.gone || why == "" && !cwd.is(dir) {
		// Removed, or moved or replaced since the trap ran: the name no longer names
		// the shell's directory.
		dir, why = "", "no longer exists"
	}
	switch {
	case why != "":
		p.cwd = ""
		return joinNotes(note, fmt.Sprintf("The command left the shell in %s, which %s, so the shell's working directory was reset to the workspace root.", cwd.path, why))
	case dir == before:
		return note
	case dir == root:
		p.cwd = ""
	default:
		p.cwd = dir
	}
	return joinNotes(note, fmt.Sprintf("The shell's working directory is now %s; the session's next command runs there.", s.displayDir(dir)))
}

// parseEnv returns the variables an env -0 listing data sets or changes against base,
// and those of base it lacks; bad is the first name that is not an identifier, when
// there is one.
func parseEnv(data []byte, base []string) (set map[string]string, unset map[string]bool, bad string) {
	baseVars := map[string]string{}
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		baseVars[k] = v
	}
	set, unset = map[string]string{}, map[string]bool{}
	seen := map[string]bool{}
	for _, kv := range strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00") {
		k, v, ok := strings.Cut(kv, "=")
		_, inBase := baseVars[k]
		switch {
		case ok && !isName(k) && inBase:
			// agentls's own environment holds it (an exported function of the user's
			// shell, which bash gives back re-spelt): not the command's to carry, and
			// the next command gets it as agentls gives it.
			seen[k] = true
			continue
		case !ok || !isName(k):
			if bad == "" {
				bad = k
			}
			continue
		case ignoredVars[k]:
			continue
		}
		seen[k] = true
		if bv, in := baseVars[k]; !in || bv != v {
			set[k] = v
		}
	}
	for k := range baseVars {
		// A name of agentls's own environment that is not an identifier is not one
		// bash can unset; the next command gets it from base as before.
		if !seen[k] && !ignoredVars[k] && isName(k) {
			unset[k] = true
		}
	}
	return set, unset, bad
}

// stateTrap returns the text put in front of a command line so that, when the shell
// exits, it writes its environment to file and then lets agentls read its working
// directory from the kernel (see cwdProbe): it writes a byte to the probe's pipe
// (descriptor 3 when the shell starts) and waits for agentls's byte back on the other
// (descriptor 4). The descriptors are moved first to ones bash picks above 9, so that a
// command's own use of 3 and 4 does not disturb them. It ends in "; " so that the
// command stays on the first line of the script, as bash's messages number it.
//
// The trap calls builtins, with functions that would shadow them removed first, so that
// a command's printf or env function does not replace what the trap writes. That is
// defence in depth only: a command can still forge the file (a function named unset
// or builtin), which is why the directory comes from the kernel and the names in the
// file are checked.
func stateTrap(file string) string {
	return "exec {__agentls_sync}>&3 {__agentls_ack}<&4 3>&- 4<&-; " +
		"__agentls_save() { __agentls_rc=$?; " +
		"\\unset -f unset builtin command env printf read exit set trap 2>/dev/null; builtin set +eu; " +
		"builtin command -p env -0 >" + shellQuote(file) + " 2>/dev/null; " +
		"builtin printf x >&\"$__agentls_sync\" 2>/dev/null && builtin read -r -n 1 -u \"$__agentls_ack\" __agentls_rc_ 2>/dev/null; " +
		"builtin exit \"$__agentls_rc\"; }; trap __agentls_save EXIT; "
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
