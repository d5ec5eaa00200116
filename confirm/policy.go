package confirm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
//  1. The matching rule that wins (see Source: the stricter of the user's and the
//     workspace's winners, each by priority, at equal priority deny beating ask and
//     ask beating allow) refuses the call when it is a deny rule. A deny rule with a
//     command condition also refuses, failing closed, a shell call whose line cannot
//     be parsed or has an Opaque command, since what it hides could match.
//  2. In plan mode a call that is not read-only is refused. A call the person
//     rejected for the rest of the session ("reject always", see RememberIn) is
//     refused. A call whose Details say PersonOnly is asked about: no rule, mode or
//     earlier answer allows it.
//  3. An edit of a sensitive file (see SensitivePath) or a shell command that writes
//     one, or that opens a network connection through bash's /dev/tcp or /dev/udp
//     (see Analysis.Network), is asked about, unless the mode is yolo: no allow rule,
//     "always" or auto_edit covers it.
//  4. An allow rule allows the call, except that a shell command with a substitution
//     (anything bash evaluates as code) or a Dangerous reason, or that cannot be
//     parsed, is asked about unless the mode is yolo or an allow rule of that priority
//     matched without commandPrefix or commandRegex: a prefix like "git" must not let
//     "git log $(rm -rf ~)" through.
//  5. An ask rule asks.
//  6. A call without Details needs no consent and runs; one whose Details say
//     NoAlways is asked about.
//  7. Yolo mode runs everything.
//  8. auto_edit mode runs edits.
//  9. The session's "always" answers (Grants, see RememberIn): an edit runs when
//     every edit was allowed; a shell command runs when each of its
//     Roots was allowed and it is neither substituting, dangerous nor opaque; an MCP
//     call when its server, or the server's tool, was allowed; any other call when
//     its tool was.
//  10. Otherwise the call is asked about.
//
// Rules that set commandPrefix or commandRegex match only shell calls (Details of type
// execute). They are matched against each command of the line, in the forms it has
// from its outermost wrapper in. An allow rule matches only when every command of the
// line matches in an exact form — with its leading assignments and the wrapper words
// that change what runs ("GIT_SSH_COMMAND=x git fetch", "env -i make") — and never a
// line that cannot be parsed; deny and ask rules match when any command matches in any
// form, the looser ones included (assignments and wrapper options dropped, "git -C dir
// commit" as "git commit"), or the whole line matches, so "ls && FOO=1 rm -rf x"
// cannot slip past a deny rule for "rm".
type Policy struct {
	rules []rule
	roots func() []string
	// protected are the user's settings folders, sensitive wherever the workspace is.
	protected []string

	mu   sync.RWMutex
	mode Mode
	// grants are the "always" answers of callers that keep none of their own (one
	// front end's direct calls, a test): Decide and Remember use them.
	grants Grants
	// autoAllowContained is tools.sandbox.autoAllow: a contained shell command that no
	// rule names and nothing in it is a concern runs without a question.
	autoAllowContained bool
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
		roots:     roots,
		protected: protectedPaths(),
		mode:      mode,
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
	if r.Decision == Allow && r.Source == SourceExtension {
		return bad("an extension's rule cannot allow")
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
	switch {
	case r.Origin != "":
		fmt.Fprintf(&b, " from %s,", r.Origin)
	case r.Source == SourceWorkspace:
		b.WriteString(" from the workspace settings,")
	}
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
	if len(r.prefixes) > 0 {
		match := r.hasPrefix
		if r.Decision != Allow {
			// A wrapper agentls does not know (setarch x86_64 rm …) could run the
			// command from its arguments: deny and ask rules fail closed on them.
			match = func(c string) bool {
				return slices.ContainsFunc(r.prefixes, func(p string) bool { return mayRun(c, p) })
			}
		}
		if !r.matchCommands(ex, match) {
			return false
		}
	}
	if r.command != nil && !r.matchCommands(ex, r.command.MatchString) {
		return false
	}
	return true
}

// matchCommands applies match to the commands of a shell call: for an allow rule every
// command must match in one of its exact forms, for the others any form of one
// command, or the whole line, is enough.
func (r *rule) matchCommands(ex *execInfo, match func(string) bool) bool {
	if r.Decision == Allow {
		if ex.err != nil || len(ex.forms) == 0 {
			return false
		}
		for _, f := range ex.forms {
			if !slices.ContainsFunc(f.exact, match) {
				return false
			}
		}
		return true
	}
	if match(ex.line) {
		return true
	}
	for _, f := range ex.forms {
		if slices.ContainsFunc(f.exact, match) || slices.ContainsFunc(f.loose, match) {
			return true
		}
	}
	return false
}

// hasPrefix reports whether command starts with one of the rule's prefixes, at a word
// boundary.
func (r *rule) hasPrefix(command string) bool {
	return slices.ContainsFunc(r.prefixes, func(p string) bool { return hasCommandPrefix(command, p) })
}

// execInfo is the analysis of a shell call.
type execInfo struct {
	line     string
	analysis Analysis
	forms    []forms
	err      error
}

// unsafe reports a command line that no prefix rule or allowlist entry may allow.
func (e *execInfo) unsafe() bool {
	return e.err != nil || e.analysis.Substitution || len(e.analysis.Dangerous) > 0
}

// hidden reports a command line that may run commands no rule can see: it cannot be
// parsed, a command in it is Opaque, or bash evaluates data in it as code (a variable
// holding a[$(cmd)] runs cmd).
func (e *execInfo) hidden() bool {
	return e.err != nil || len(e.analysis.Opaque) > 0 || len(e.analysis.Code) > 0
}

// concerns says why the command line is unsafe.
func (e *execInfo) concerns() string {
	var why []string
	if e.err != nil {
		why = append(why, "it could not be analysed ("+e.err.Error()+")")
	}
	if e.analysis.Substitution {
		what := "a command or process substitution"
		if len(e.analysis.Code) > 0 {
			what = strings.Join(e.analysis.Code, "; ")
		}
		why = append(why, "bash evaluates part of it as code ("+what+")")
	}
	if len(e.analysis.Dangerous) > 0 {
		why = append(why, "it is dangerous ("+strings.Join(e.analysis.Dangerous, "; ")+")")
	}
	return strings.Join(why, ", and ")
}

// analyze analyses the command of execute details.
func (p *Policy) analyze(d *Details) *execInfo {
	a, forms, err := analyze(d.Command, lineEnv{Dir: d.Directory, Roots: p.roots(), Protected: p.protected})
	return &execInfo{line: strings.TrimSpace(d.Command), analysis: a, forms: forms, err: err}
}

// protectedPaths are the user's agentls configuration folder (settings, trusted
// folders) and Gemini CLI's user folder: a write there changes what is allowed.
func protectedPaths() []string {
	var out []string
	if d, err := os.UserConfigDir(); err == nil {
		out = append(out, filepath.Join(d, "agentls"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".gemini"))
	}
	return out
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

// WithMode returns a policy like p in mode m: the same rules, and the "always" answers
// given to p's own Grants so far. p does not change: a Config holding it stays as it
// was.
func (p *Policy) WithMode(m Mode) *Policy {
	return &Policy{rules: p.rules, roots: p.roots, protected: p.protected, mode: m, grants: p.grants.clone(),
		autoAllowContained: p.autoAllowContained}
}

// WithAutoAllowContained returns a policy like p (as WithMode does) that runs, in the
// default and auto_edit modes, a shell command that will run contained
// (Details.Sandbox is SandboxContained) when it would be asked about only because no
// rule names it: the setting tools.sandbox.autoAllow.
func (p *Policy) WithAutoAllowContained(on bool) *Policy {
	q := p.WithMode(p.Mode())
	q.autoAllowContained = on
	return q
}

// AutoAllowContained reports whether p runs contained commands no rule names.
func (p *Policy) AutoAllowContained() bool { return p.autoAllowContained }

// Decide says whether c runs, is refused, or must be asked about; see Policy for how.
// The answers it goes by are the policy's own Grants.
func (p *Policy) Decide(c Call) Verdict {
	return p.DecideWith(c, p.Mode(), &p.grants)
}

// DecideIn is Decide in the given approval mode rather than the policy's.
func (p *Policy) DecideIn(c Call, mode Mode) Verdict {
	return p.DecideWith(c, mode, &p.grants)
}

// DecideWith is Decide for one session: in its approval mode, with its "always"
// answers g.
func (p *Policy) DecideWith(c Call, mode Mode, g *Grants) Verdict {
	var ex *execInfo
	if c.Details != nil && c.Details.Type == TypeExecute {
		ex = p.analyze(c.Details)
	}
	win, blanket := p.match(c, ex)

	if win != nil && win.Decision == Deny {
		reason := "denied by " + win.String()
		if win.DenyMessage != "" {
			reason += ": " + win.DenyMessage
		}
		return Verdict{Decision: Deny, Reason: reason}
	}
	if ex != nil && ex.hidden() {
		if r := p.denyCouldMatch(c); r != nil {
			return Verdict{Decision: Deny, Reason: fmt.Sprintf("denied: %s cannot be checked against %s (%s)", hiddenWhat(ex), r, "a command it runs is not known until run time")}
		}
	}
	if mode == ModePlan && !c.ReadOnly {
		return Verdict{Decision: Deny, Reason: "plan mode runs only read-only tools"}
	}
	if c.Details != nil && !c.Details.NoAlways {
		if k := g.rejected(rejectKeys(c, ex)); k != "" {
			return Verdict{Decision: Deny, Reason: "the user rejected " + keyText(k) + " for the rest of this session"}
		}
	}
	if c.Details != nil && c.Details.PersonOnly {
		return p.ask(c, ex, "only the user's answer lets this call run")
	}
	if ex != nil && c.Details.Sandbox == SandboxOutside {
		// The model asked to leave the sandbox: the person decides each time, whatever
		// rules and earlier answers say; yolo has answered every question already.
		switch mode {
		case ModePlan:
			return Verdict{Decision: Deny, Reason: "plan mode runs no command outside the sandbox"}
		case ModeYolo:
			return Verdict{Decision: Allow, Reason: "yolo mode (outside the sandbox)"}
		}
		once := *c.Details
		once.NoAlways = true
		return p.ask(Call{Tool: c.Tool, ReadOnly: c.ReadOnly, Server: c.Server, Args: c.Args, Details: &once}, ex,
			"the command asks to run outside the sandbox: "+c.Details.Justification)
	}
	if why := p.sensitive(c, ex); why != "" && mode != ModeYolo {
		return p.ask(c, ex, why)
	}
	if win != nil && win.Decision == Allow {
		if ex != nil && ex.unsafe() && !blanket && mode != ModeYolo {
			return p.ask(c, ex, fmt.Sprintf("%s matches the command, but %s", win, ex.concerns()))
		}
		return Verdict{Decision: Allow, Reason: "allowed by " + win.String()}
	}
	if win != nil && win.Decision == Ask {
		return p.ask(c, ex, "asked by "+win.String())
	}
	if c.Details == nil {
		return Verdict{Decision: Allow, Reason: "the tool needs no confirmation"}
	}
	if c.Details.NoAlways {
		return p.ask(c, ex, "the call is asked about every time")
	}
	if mode == ModeYolo {
		return Verdict{Decision: Allow, Reason: "yolo mode"}
	}
	if mode == ModeAutoEdit && c.Details.Type == TypeEdit {
		return Verdict{Decision: Allow, Reason: "auto_edit mode"}
	}
	if c.Details.Type == TypeEdit && g.allEdits() {
		return Verdict{Decision: Allow, Reason: "every edit was allowed for this session"}
	}
	if allowlisted(c, ex, g) {
		return Verdict{Decision: Allow, Reason: "allowed for this session"}
	}
	if ex != nil && ex.unsafe() {
		return p.ask(c, ex, "the command needs confirmation: "+ex.concerns())
	}
	if p.autoAllowContained && ex != nil && !ex.hidden() && c.Details.Sandbox == SandboxContained &&
		(mode == ModeDefault || mode == ModeAutoEdit) {
		return Verdict{Decision: Allow, Reason: "it runs contained, and tools.sandbox.autoAllow is on"}
	}
	return p.ask(c, ex, "the call needs confirmation")
}

// DeniesOutright reports whether the rules refuse every call of tool, whatever its
// arguments and in every mode: a deny rule naming it (or a glob matching it) without
// conditions, which no other rule can outrank for any call. Such a tool need not be
// declared to the model at all (Gemini CLI does not declare it either). Where a rule
// of the same tier with a higher priority, or for an extension's rule any rule of the
// user's, or a system rule that does not deny, names the tool, some call might escape
// the deny: the tool stays declared and Decide judges each call.
func (p *Policy) DeniesOutright(tool string) bool {
	names := func(r *rule) bool {
		if r.ToolName == "" {
			return true
		}
		ok, _ := doublestar.Match(r.ToolName, tool)
		return ok
	}
	var denies [SourceAdmin + 1]*rule
	for i := range p.rules {
		r := &p.rules[i]
		if r.Decision != Deny || r.commandRule() || r.args != nil || !names(r) {
			continue
		}
		if d := denies[r.Source]; d == nil || r.Priority > d.Priority {
			denies[r.Source] = r
		}
	}
	for _, d := range denies {
		if d != nil && !slices.ContainsFunc(p.rules, func(r rule) bool { return names(&r) && mayLetThrough(&r, d) }) {
			return true
		}
	}
	return false
}

// mayLetThrough reports whether r, a rule naming the tool that d, the strongest deny
// without conditions of its source, refuses, could decide some call of it otherwise.
func mayLetThrough(r, d *rule) bool {
	switch {
	case r.Source == SourceAdmin && d.Source != SourceAdmin:
		// A system rule decides over every other.
		return r.Decision != Deny
	case d.Source == SourceExtension && r.Source == SourceUser:
		// A rule of the user's that matches a call takes the extensions' place.
		return true
	}
	return r.Source == d.Source && r.Decision != Deny && r.Priority > d.Priority
}

// hiddenWhat names what of a shell call no rule can see.
func hiddenWhat(ex *execInfo) string {
	switch {
	case ex.err != nil:
		return "the command line, which could not be parsed,"
	case len(ex.analysis.Opaque) > 0:
		return fmt.Sprintf("%q", ex.analysis.Opaque[0])
	}
	return fmt.Sprintf("the command line, in which bash evaluates data as code (%s),", ex.analysis.Code[0])
}

// denyCouldMatch returns a deny rule with a command condition that applies to c's
// tool, or nil: such a rule could match a command that c hides.
func (p *Policy) denyCouldMatch(c Call) *rule {
	for i := range p.rules {
		r := &p.rules[i]
		if r.Decision != Deny || !r.commandRule() {
			continue
		}
		if r.ToolName != "" {
			if ok, _ := doublestar.Match(r.ToolName, c.Tool); !ok {
				continue
			}
		}
		if r.args != nil && !r.args.Match(c.Args) {
			continue
		}
		return r
	}
	return nil
}

// sensitive says why c writes a sensitive file or opens a network connection no
// guard watches, or returns "".
func (p *Policy) sensitive(c Call, ex *execInfo) string {
	switch {
	case c.Details == nil:
	case c.Details.Type == TypeEdit && c.Details.Path != "":
		if why := sensitiveEdit(c.Details.Path, p.roots(), p.protected); why != "" {
			return fmt.Sprintf("%s needs confirmation in every mode but yolo: %s", c.Details.Path, why)
		}
	case ex != nil && len(ex.analysis.Sensitive) > 0:
		return fmt.Sprintf("the command writes %s, which needs confirmation in every mode but yolo", strings.Join(ex.analysis.Sensitive, ", "))
	case ex != nil && len(ex.analysis.Network) > 0:
		return fmt.Sprintf("the command opens a network connection through bash's %s, which needs confirmation in every mode but yolo: no rule for a program covers it, and web_fetch's address guard does not watch it", strings.Join(ex.analysis.Network, ", "))
	}
	return ""
}

// match returns the winning rule for c, nil if none matches, and whether an allow rule
// without a command condition matched at the winning priority. The system rules' winner,
// when one matches, decides. Otherwise the user's, the workspace's and the extensions'
// rules each have a winner; the extensions' stands in for the user's when no rule of
// the user's matches, and the stricter of that and the workspace's wins (see Source).
func (p *Policy) match(c Call, ex *execInfo) (win *rule, blanket bool) {
	var wins [SourceAdmin + 1]*rule
	var blankets [SourceAdmin + 1]bool
	for i := range p.rules {
		r := &p.rules[i]
		if !r.matches(c, ex) {
			continue
		}
		t := r.Source
		w := wins[t]
		switch {
		case w == nil || r.Priority > w.Priority ||
			r.Priority == w.Priority && strictness(r.Decision) > strictness(w.Decision):
			wins[t], blankets[t] = r, r.Decision == Allow && !r.commandRule()
		case r.Priority == w.Priority && r.Decision == w.Decision:
			blankets[t] = blankets[t] || r.Decision == Allow && !r.commandRule()
		}
	}
	if wins[SourceAdmin] != nil {
		return wins[SourceAdmin], blankets[SourceAdmin]
	}
	if wins[SourceUser] == nil {
		wins[SourceUser], blankets[SourceUser] = wins[SourceExtension], blankets[SourceExtension]
	}
	user, ws := wins[SourceUser], wins[SourceWorkspace]
	switch {
	case user == nil:
		return ws, blankets[SourceWorkspace]
	case ws == nil || strictness(user.Decision) >= strictness(ws.Decision):
		return user, blankets[SourceUser]
	default:
		return ws, blankets[SourceWorkspace]
	}
}

// strictness orders decisions: deny over ask over allow.
func strictness(d Decision) int {
	switch d {
	case Deny:
		return 2
	case Ask:
		return 1
	}
	return 0
}

// ask returns an Ask verdict with the details to show, and the answers to offer
// (see Offer) unless the question brings its own (which the scheduler gives ids).
func (p *Policy) ask(c Call, ex *execInfo, reason string) Verdict {
	d := c.Details
	if d == nil {
		d = &Details{
			Type:   TypeInfo,
			Title:  fmt.Sprintf("Allow %s?", c.Tool),
			Prompt: fmt.Sprintf("A policy rule asks before the tool %s runs.", c.Tool),
		}
	} else {
		copied := *d
		d = &copied
	}
	if ex != nil && len(d.RootCommands) == 0 && len(ex.analysis.Roots) > 0 {
		d.RootCommands = ex.analysis.Roots
	}
	if len(d.Choices) == 0 && d.Type != TypeAsk {
		d.Choices = p.offer(Call{Tool: c.Tool, ReadOnly: c.ReadOnly, Server: c.Server, Args: c.Args, Details: d}, ex)
	}
	return Verdict{Decision: Ask, Reason: reason, Details: d}
}

// allowKeys returns the grant keys an "always" answer o to c allows, or none when o
// allows nothing for the session: a shell command that cannot be analysed, is
// dangerous or runs code no rule can see is asked about every time. An edit's
// ProceedAlways allows every edit (Grants.edits), not a key.
func allowKeys(c Call, ex *execInfo, o Outcome) []string {
	typ := TypeInfo
	if c.Details != nil {
		typ = c.Details.Type
	}
	switch {
	case typ == TypeExecute:
		if o == ProceedAlwaysServer || ex == nil || ex.unsafe() || ex.hidden() || len(ex.analysis.Roots) == 0 {
			return nil
		}
		keys := make([]string, len(ex.analysis.Roots))
		for i, r := range ex.analysis.Roots {
			keys[i] = keyRoot + r
		}
		return keys
	case o == ProceedAlwaysServer:
		if server := serverOf(c); server != "" {
			return []string{keyServer + server}
		}
		return nil
	case typ == TypeMCP:
		return []string{keyMCP + serverToolKey(c)}
	case typ == TypeEdit && o == ProceedAlways:
		return nil
	}
	return []string{keyTool + c.Tool}
}

// rejectKeys returns the grant keys a "reject always" answer to c refuses: each
// program of a shell command (its whole line when it has none), the MCP server's
// tool, or the tool.
func rejectKeys(c Call, ex *execInfo) []string {
	switch {
	case ex != nil && len(ex.analysis.Roots) > 0:
		keys := make([]string, len(ex.analysis.Roots))
		for i, r := range ex.analysis.Roots {
			keys[i] = keyRoot + r
		}
		return keys
	case ex != nil:
		return []string{keyLine + ex.line}
	case c.Details != nil && c.Details.Type == TypeMCP:
		return []string{keyMCP + serverToolKey(c)}
	}
	return []string{keyTool + c.Tool}
}

// allowlisted reports whether the person allowed calls like c for the session.
func allowlisted(c Call, ex *execInfo, g *Grants) bool {
	switch c.Details.Type {
	case TypeExecute:
		return g.allowed(allowKeys(c, ex, ProceedAlways))
	case TypeMCP:
		server := serverOf(c)
		return server != "" && g.allowed([]string{keyServer + server}) || g.allowed([]string{keyMCP + serverToolKey(c)})
	}
	return g.allowed([]string{keyTool + c.Tool})
}

// Remember records, in the policy's own Grants, an answer that holds for the rest
// of the session; see RememberIn.
func (p *Policy) Remember(c Call, o Outcome) { p.RememberIn(&p.grants, c, o) }

// RememberIn records in g an answer that holds for the rest of the session:
//
//   - ProceedAlways on a shell command allowlists its Roots (which carry the
//     command's assignments, see Analysis), unless it has a substitution, a Dangerous
//     reason or an Opaque command, or cannot be parsed (those are asked about every
//     time); on an edit it allows every edit, as auto_edit does; on an MCP call it
//     allowlists that tool of that server; on any other call, the tool.
//   - ProceedAlwaysServer allowlists the MCP server of c.
//   - ProceedAlwaysTool allowlists the MCP server's tool; for a shell command it does
//     what ProceedAlways does (a shell tool as a whole is never allowlisted); for any
//     other call it allowlists the tool.
//   - RejectAlways refuses, without asking, every later call with a program of the
//     shell command (its line, when it has none), the MCP server's tool, or the tool.
//
// Other outcomes, and answers to calls whose Details say NoAlways, change nothing.
func (p *Policy) RememberIn(g *Grants, c Call, o Outcome) {
	if c.Details != nil && c.Details.NoAlways {
		return
	}
	var ex *execInfo
	if c.Details != nil && c.Details.Type == TypeExecute {
		ex = p.analyze(c.Details)
	}
	switch {
	case o == RejectAlways:
		keys := rejectKeys(c, ex)
		g.mu.Lock()
		g.set(&g.reject, keys)
		g.mu.Unlock()
	case o == ProceedAlways && c.Details != nil && c.Details.Type == TypeEdit:
		g.mu.Lock()
		g.edits = true
		g.mu.Unlock()
	case o.Always():
		keys := allowKeys(c, ex, o)
		g.mu.Lock()
		g.set(&g.allow, keys)
		g.mu.Unlock()
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

// RuleFor returns the settings rule that saves an "always" answer o to c (see
// Answer.Persist), allowing from then on what Remember allows for the session, or
// narrower:
//
//   - a shell command: an allow rule for the tool with its Roots as commandPrefix, so
//     that each command of a line must start with one of them (and a line with a
//     substitution or a dangerous command is still asked about);
//   - an MCP call: the tool, or for ProceedAlwaysServer every tool of the server (the
//     registered names of its tools start with the server's name and "__");
//   - an edit: the tool (not every edit, as the session's auto_edit switch does);
//   - any other call: the tool.
//
// An answer that is not an "always" one, to a NoAlways question, or to a shell
// command that Remember would not remember either, is an error saying why.
func (p *Policy) RuleFor(c Call, o Outcome) (Rule, error) {
	if !o.Always() {
		return Rule{}, fmt.Errorf("%s is not an \"always\" answer", o)
	}
	if c.Details != nil && c.Details.NoAlways {
		return Rule{}, errors.New("this question is asked every time; its answer is not saved")
	}
	r := Rule{ToolName: c.Tool, Decision: Allow}
	switch {
	case c.Details != nil && c.Details.Type == TypeExecute:
		ex := p.analyze(c.Details)
		if ex.unsafe() || ex.hidden() || len(ex.analysis.Roots) == 0 {
			return Rule{}, errors.New("the command is asked about every time (it cannot be analysed, is dangerous, or runs code no rule can see); its answer is not saved")
		}
		r.CommandPrefix = slices.Clone(ex.analysis.Roots)
	case o == ProceedAlwaysServer:
		server := serverOf(c)
		if server == "" {
			return Rule{}, errors.New("the call names no MCP server")
		}
		r.ToolName = server + "__*"
	}
	if r.ToolName == "" {
		return Rule{}, errors.New("the call names no tool")
	}
	return r, nil
}
