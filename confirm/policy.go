package confirm

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

// Policy decides, for each tool call, whether it runs, is refused or must be asked
// about, from the settings' rules, the approval mode and what the person allowed for
// the rest of the session. It is safe for concurrent use.
//
// Decide goes through these steps and stops at the first that decides:
//
//  1. The matching rule of highest priority wins (at equal priority deny beats ask and
//     ask beats allow); a deny rule refuses the call.
//  2. In plan mode a call that is not read-only is refused.
//  3. An allow rule allows the call, except that a shell command with a substitution or
//     a Dangerous reason (see Analysis), or that cannot be parsed, is asked about unless
//     the mode is yolo or an allow rule of that priority matched without commandPrefix
//     or commandRegex: a prefix like "git" must not let "git log $(rm -rf ~)" through.
//  4. An ask rule asks.
//  5. A call without Details needs no consent and runs.
//  6. Yolo mode runs everything.
//  7. auto_edit mode runs edits.
//  8. The session allowlist (see Remember): a shell command runs when each of its
//     Roots was allowed and it is neither substituting nor dangerous; an MCP call when
//     its server, or the server's tool, was allowed; any other call when its tool was.
//  9. Otherwise the call is asked about.
//
// Rules that set commandPrefix or commandRegex match only shell calls (Details of type
// execute). They are matched against each command of the line, in every form it has
// from its outermost wrapper in ("sudo rm -rf x" and "rm -rf x"). An allow rule
// matches only when every command of the line matches, and never a line that cannot
// be parsed; deny and ask rules match when any command, or the whole line, matches,
// so "ls && rm -rf x" cannot slip past a deny rule for "rm".
type Policy struct {
	rules []rule
	roots func() []string

	mu           sync.RWMutex
	mode         Mode
	allowRoots   map[string]bool // shell command roots
	allowTools   map[string]bool // tool names
	allowServers map[string]bool // MCP servers
	allowMCP     map[string]bool // serverToolKey of MCP tools
}

// rule is a Rule compiled.
type rule struct {
	Rule
	n        int // position in the settings, from 1
	prefixes []string
	command  *regexp.Regexp
	args     *regexp.Regexp
}

// NewPolicy returns a policy in the given mode (empty means default) with the settings'
// rules. roots returns the workspace roots, against which shell commands' writes are
// judged; nil means there are none. An invalid mode or rule is an error naming it.
func NewPolicy(mode Mode, rules []Rule, roots func() []string) (*Policy, error) {
	mode, err := ParseMode(string(mode))
	if err != nil {
		return nil, err
	}
	if roots == nil {
		roots = func() []string { return nil }
	}
	p := &Policy{
		roots:        roots,
		mode:         mode,
		allowRoots:   make(map[string]bool),
		allowTools:   make(map[string]bool),
		allowServers: make(map[string]bool),
		allowMCP:     make(map[string]bool),
	}
	for i, r := range rules {
		c, err := compileRule(i+1, r)
		if err != nil {
			return nil, err
		}
		p.rules = append(p.rules, c)
	}
	return p, nil
}

// compileRule checks r, the nth rule, and compiles its patterns.
func compileRule(n int, r Rule) (rule, error) {
	c := rule{Rule: r, n: n}
	bad := func(format string, args ...any) (rule, error) {
		return rule{}, fmt.Errorf("policy rule %d (toolName %q): %s", n, r.ToolName, fmt.Sprintf(format, args...))
	}
	switch r.Decision {
	case Allow, Ask, Deny:
	default:
		return bad("decision %q is not allow, ask or deny", r.Decision)
	}
	if r.ToolName != "" && !doublestar.ValidatePattern(r.ToolName) {
		return bad("toolName is not a valid glob")
	}
	for _, prefix := range r.CommandPrefix {
		prefix = strings.TrimSpace(prefix)
		if prefix == "" {
			return bad("commandPrefix has an empty prefix, which would match every command")
		}
		c.prefixes = append(c.prefixes, prefix)
	}
	var err error
	if r.CommandRegex != "" {
		if c.command, err = regexp.Compile(r.CommandRegex); err != nil {
			return bad("commandRegex: %v", err)
		}
	}
	if r.ArgsPattern != "" {
		if c.args, err = regexp.Compile(r.ArgsPattern); err != nil {
			return bad("argsPattern: %v", err)
		}
	}
	return c, nil
}

// String names the rule for verdict reasons.
func (r *rule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "policy rule %d (%s", r.n, r.Decision)
	if r.ToolName != "" {
		fmt.Fprintf(&b, " %s", r.ToolName)
	}
	if len(r.prefixes) > 0 {
		fmt.Fprintf(&b, ", commandPrefix %q", r.prefixes)
	}
	if r.CommandRegex != "" {
		fmt.Fprintf(&b, ", commandRegex %q", r.CommandRegex)
	}
	if r.ArgsPattern != "" {
		fmt.Fprintf(&b, ", argsPattern %q", r.ArgsPattern)
	}
	b.WriteString(")")
	return b.String()
}

// commandRule reports whether the rule sets a shell command condition.
func (r *rule) commandRule() bool { return len(r.prefixes) > 0 || r.command != nil }

// matches reports whether the rule applies to c; ex is the analysis of a shell call,
// nil for other calls.
func (r *rule) matches(c Call, ex *execInfo) bool {
	if r.ToolName != "" {
		if ok, _ := doublestar.Match(r.ToolName, c.Tool); !ok {
			return false
		}
	}
	if r.args != nil && !r.args.Match(c.Args) {
		return false
	}
	if !r.commandRule() {
		return true
	}
	if ex == nil {
		return false
	}
	if len(r.prefixes) > 0 && !r.matchCommands(ex, r.hasPrefix) {
		return false
	}
	if r.command != nil && !r.matchCommands(ex, r.command.MatchString) {
		return false
	}
	return true
}

// matchCommands applies match to the commands of a shell call: for an allow rule every
// command must match in some form, for the others one form of one command, or the
// whole line, is enough.
func (r *rule) matchCommands(ex *execInfo, match func(string) bool) bool {
	anyForm := func(forms []string) bool {
		for _, f := range forms {
			if match(f) {
				return true
			}
		}
		return false
	}
	if r.Decision == Allow {
		if ex.err != nil || len(ex.forms) == 0 {
			return false
		}
		for _, forms := range ex.forms {
			if !anyForm(forms) {
				return false
			}
		}
		return true
	}
	if match(ex.line) {
		return true
	}
	for _, forms := range ex.forms {
		if anyForm(forms) {
			return true
		}
	}
	return false
}

// hasPrefix reports whether command starts with one of the rule's prefixes, at a word
// boundary.
func (r *rule) hasPrefix(command string) bool {
	for _, p := range r.prefixes {
		if command == p || strings.HasPrefix(command, p+" ") {
			return true
		}
	}
	return false
}

// execInfo is the analysis of a shell call.
type execInfo struct {
	line     string
	analysis Analysis
	forms    [][]string
	err      error
}

// unsafe reports a command line that no prefix rule or allowlist entry may allow.
func (e *execInfo) unsafe() bool {
	return e.err != nil || e.analysis.Substitution || len(e.analysis.Dangerous) > 0
}

// concerns says why the command line is unsafe.
func (e *execInfo) concerns() string {
	var why []string
	if e.err != nil {
		why = append(why, "it could not be analysed ("+e.err.Error()+")")
	}
	if e.analysis.Substitution {
		why = append(why, "it has a command or process substitution")
	}
	if len(e.analysis.Dangerous) > 0 {
		why = append(why, "it is dangerous ("+strings.Join(e.analysis.Dangerous, "; ")+")")
	}
	return strings.Join(why, ", and ")
}

// analyze analyses the command of execute details.
func (p *Policy) analyze(d *Details) *execInfo {
	a, forms, err := analyze(d.Command, d.Directory, p.roots())
	return &execInfo{line: strings.TrimSpace(d.Command), analysis: a, forms: forms, err: err}
}

// Mode returns the approval mode.
func (p *Policy) Mode() Mode {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.mode
}

// SetMode changes the approval mode, for the front end's mode switch.
func (p *Policy) SetMode(m Mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
}

// Decide says whether c runs, is refused, or must be asked about; see Policy for how.
func (p *Policy) Decide(c Call) Verdict {
	var ex *execInfo
	if c.Details != nil && c.Details.Type == TypeExecute {
		ex = p.analyze(c.Details)
	}
	win, blanket := p.match(c, ex)
	mode := p.Mode()

	if win != nil && win.Decision == Deny {
		return Verdict{Decision: Deny, Reason: "denied by " + win.String()}
	}
	if mode == ModePlan && !c.ReadOnly {
		return Verdict{Decision: Deny, Reason: "plan mode runs only read-only tools"}
	}
	if win != nil && win.Decision == Allow {
		if ex != nil && ex.unsafe() && !blanket && mode != ModeYolo {
			return ask(c, ex, fmt.Sprintf("%s matches the command, but %s", win, ex.concerns()))
		}
		return Verdict{Decision: Allow, Reason: "allowed by " + win.String()}
	}
	if win != nil && win.Decision == Ask {
		return ask(c, ex, "asked by "+win.String())
	}
	if c.Details == nil {
		return Verdict{Decision: Allow, Reason: "the tool needs no confirmation"}
	}
	if mode == ModeYolo {
		return Verdict{Decision: Allow, Reason: "yolo mode"}
	}
	if mode == ModeAutoEdit && c.Details.Type == TypeEdit {
		return Verdict{Decision: Allow, Reason: "auto_edit mode"}
	}
	if p.allowlisted(c, ex) {
		return Verdict{Decision: Allow, Reason: "allowed for this session"}
	}
	if ex != nil && ex.unsafe() {
		return ask(c, ex, "the command needs confirmation: "+ex.concerns())
	}
	return ask(c, ex, "the call needs confirmation")
}

// match returns the winning rule for c, nil if none matches, and whether an allow rule
// without a command condition matched at the winning priority.
func (p *Policy) match(c Call, ex *execInfo) (win *rule, blanket bool) {
	strength := map[Decision]int{Allow: 0, Ask: 1, Deny: 2}
	for i := range p.rules {
		r := &p.rules[i]
		if !r.matches(c, ex) {
			continue
		}
		switch {
		case win == nil || r.Priority > win.Priority ||
			r.Priority == win.Priority && strength[r.Decision] > strength[win.Decision]:
			win, blanket = r, r.Decision == Allow && !r.commandRule()
		case r.Priority == win.Priority && r.Decision == win.Decision:
			blanket = blanket || r.Decision == Allow && !r.commandRule()
		}
	}
	return win, blanket
}

// ask returns an Ask verdict with the details to show.
func ask(c Call, ex *execInfo, reason string) Verdict {
	d := c.Details
	switch {
	case d == nil:
		d = &Details{
			Type:   TypeInfo,
			Title:  fmt.Sprintf("Allow %s?", c.Tool),
			Prompt: fmt.Sprintf("A policy rule asks before the tool %s runs.", c.Tool),
		}
	case ex != nil && len(d.RootCommands) == 0 && len(ex.analysis.Roots) > 0:
		copied := *d
		copied.RootCommands = ex.analysis.Roots
		d = &copied
	}
	return Verdict{Decision: Ask, Reason: reason, Details: d}
}

// allowlisted reports whether the person allowed calls like c for the session.
func (p *Policy) allowlisted(c Call, ex *execInfo) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	switch c.Details.Type {
	case TypeExecute:
		if ex.unsafe() || len(ex.analysis.Roots) == 0 {
			return false
		}
		for _, root := range ex.analysis.Roots {
			if !p.allowRoots[root] {
				return false
			}
		}
		return true
	case TypeMCP:
		server := serverOf(c)
		return server != "" && p.allowServers[server] || p.allowMCP[serverToolKey(c)]
	default:
		return p.allowTools[c.Tool]
	}
}

// Remember records an answer that allows calls like c for the rest of the session:
//
//   - ProceedAlways on a shell command allowlists its Roots, unless it has a
//     substitution or a Dangerous reason or cannot be parsed (those are asked about
//     every time); on an edit it switches default mode to auto_edit; on an MCP call it
//     allowlists that tool of that server; on any other call, the tool.
//   - ProceedAlwaysServer allowlists the MCP server of c.
//   - ProceedAlwaysTool allowlists the MCP server's tool; for a shell command it does
//     what ProceedAlways does (a shell tool as a whole is never allowlisted); for any
//     other call it allowlists the tool.
//
// Other outcomes change nothing.
func (p *Policy) Remember(c Call, o Outcome) {
	typ := TypeInfo
	if c.Details != nil {
		typ = c.Details.Type
	}
	var roots []string
	if typ == TypeExecute && (o == ProceedAlways || o == ProceedAlwaysTool) {
		ex := p.analyze(c.Details)
		if ex.unsafe() {
			return
		}
		roots = ex.analysis.Roots
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch o {
	case ProceedAlways, ProceedAlwaysTool:
		switch typ {
		case TypeExecute:
			for _, r := range roots {
				p.allowRoots[r] = true
			}
		case TypeMCP:
			p.allowMCP[serverToolKey(c)] = true
		case TypeEdit:
			if o == ProceedAlwaysTool {
				p.allowTools[c.Tool] = true
			} else if p.mode == ModeDefault {
				p.mode = ModeAutoEdit
			}
		default:
			p.allowTools[c.Tool] = true
		}
	case ProceedAlwaysServer:
		if server := serverOf(c); server != "" {
			p.allowServers[server] = true
		}
	}
}

// serverOf is the MCP server of c.
func serverOf(c Call) string {
	if c.Server == "" && c.Details != nil {
		return c.Details.Server
	}
	return c.Server
}

// serverToolKey identifies an MCP server's tool in the allowlist.
func serverToolKey(c Call) string {
	tool := c.Tool
	if c.Details != nil && c.Details.Tool != "" {
		tool = c.Details.Tool
	}
	return serverOf(c) + "\x00" + tool
}
