package tools

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agentls/agentls/confirm"
)

// Filter is the tool selection of the settings: coreTools and excludeTools.
//
// A tool is enabled when Core is empty or names it, and Exclude does not name it
// outright. An entry may carry command prefixes in parentheses:
//
//   - In Core, "run_shell_command(git status)" enables run_shell_command but restricts it
//     to command lines each of whose simple commands starts with one of the prefixes given
//     by such entries, at a word boundary. A plain "run_shell_command" entry lifts the
//     restriction.
//   - In Exclude, "run_shell_command(rm)" leaves the tool enabled but forbids every
//     command line one of whose simple commands starts with that prefix.
//
// A tool restricted either way refuses command substitution outright, since what a
// substitution runs cannot be checked before it runs. Wrappers such as timeout, env or
// bash -c are looked through (see confirm.Analyze), so the command they run is what is
// checked; an allowlist also refuses sudo, doas and su.
type Filter struct {
	Core    []string
	Exclude []string
}

// commandRule is what a Filter says of one tool.
type commandRule struct {
	inCore       bool     // Core names the tool, plainly or with prefixes
	unrestricted bool     // Core names the tool without prefixes
	allow        []string // prefixes from parameterised Core entries
	excluded     bool     // Exclude names the tool without prefixes
	deny         []string // prefixes from parameterised Exclude entries
}

// restricted reports whether command lines of the tool must be checked.
func (r *commandRule) restricted() bool {
	return r != nil && ((r.inCore && !r.unrestricted && len(r.allow) > 0) || len(r.deny) > 0)
}

// parseFilterEntry splits "name(arg)" into name and arg; a plain "name" has no arg.
func parseFilterEntry(entry string) (name, arg string, hasArg bool) {
	entry = strings.TrimSpace(entry)
	open := strings.IndexByte(entry, '(')
	if open < 0 || !strings.HasSuffix(entry, ")") {
		return entry, "", false
	}
	return strings.TrimSpace(entry[:open]), strings.TrimSpace(entry[open+1 : len(entry)-1]), true
}

func compileFilter(f Filter) (map[string]*commandRule, bool) {
	rules := map[string]*commandRule{}
	rule := func(name string) *commandRule {
		r := rules[name]
		if r == nil {
			r = &commandRule{}
			rules[name] = r
		}
		return r
	}
	for _, e := range f.Core {
		name, arg, hasArg := parseFilterEntry(e)
		if name == "" {
			continue
		}
		r := rule(name)
		r.inCore = true
		if !hasArg || arg == "" {
			r.unrestricted = true
		} else {
			r.allow = append(r.allow, normalizeCommand(arg))
		}
	}
	for _, e := range f.Exclude {
		name, arg, hasArg := parseFilterEntry(e)
		if name == "" {
			continue
		}
		r := rule(name)
		if !hasArg || arg == "" {
			r.excluded = true
		} else {
			r.deny = append(r.deny, normalizeCommand(arg))
		}
	}
	coreAll := true
	for _, e := range f.Core {
		if name, _, _ := parseFilterEntry(e); name != "" {
			coreAll = false
			break
		}
	}
	return rules, coreAll
}

// normalizeCommand collapses runs of white space so that prefixes match however the
// command line was spaced.
func normalizeCommand(s string) string { return strings.Join(strings.Fields(s), " ") }

type registered struct {
	tool Tool
	info Info
}

// names are the names the tool answers to: its own, then its aliases.
func (t registered) names() []string {
	return append([]string{t.info.Name}, t.info.Aliases...)
}

// Registry holds the tools a session can call: built-in ones, those found by the
// discovery command and those of MCP servers. Settings' coreTools and excludeTools
// decide which of them are enabled; only enabled tools are visible. It is safe for
// concurrent use.
type Registry struct {
	logger  *slog.Logger
	rules   map[string]*commandRule
	coreAll bool

	mu    sync.RWMutex
	tools map[string]registered
	// aliases maps the names a tool is called by that are not its own back to its own:
	// the declared (sanitised) names that differ from the real ones, and the tools'
	// Info.Aliases; nil when it must be recomputed.
	aliases map[string]string
	// decls are the declarations, made once per change of the tools (they are sent
	// with every model request); nil when they must be made again. situational holds,
	// for each of them, the tool when it is Situational. version counts the changes, so
	// that declarations made while the tools changed are not kept.
	decls       []Declaration
	situational []Situational
	version     uint64
}

// NewRegistry returns an empty registry that enables tools according to filter. A nil
// logger discards.
func NewRegistry(logger *slog.Logger, filter Filter) *Registry {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rules, coreAll := compileFilter(filter)
	return &Registry{logger: logger, rules: rules, coreAll: coreAll, tools: map[string]registered{}}
}

// Subset returns a registry of r's enabled tools called by names, under r's filter, and
// the names r enables no tool for. A registry made for part of a session's work (a
// sub-agent's) refuses what r refuses: the tools r does not enable, and the command
// lines coreTools and excludeTools forbid (CheckCommand), which an empty filter would
// let through.
func (r *Registry) Subset(names []string) (sub *Registry, missing []string) {
	// The rules are never changed after NewRegistry, so the two registries share them.
	sub = &Registry{logger: r.logger, rules: r.rules, coreAll: r.coreAll, tools: map[string]registered{}}
	for _, n := range names {
		t, ok := r.Get(n)
		if !ok {
			missing = append(missing, n)
			continue
		}
		sub.Register(t)
	}
	return sub, missing
}

// Clone returns a registry with the tools and the filter of r, which changes apart
// from r: a change is made to a clone, which then replaces r where r was published,
// so that whoever holds r keeps one consistent set.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return &Registry{logger: r.logger, rules: r.rules, coreAll: r.coreAll, tools: maps.Clone(r.tools)}
}

// Register adds t under Info().Name. A tool of the same name is replaced, with a
// warning in the log, as when an MCP server offers a tool a built-in already has.
func (r *Registry) Register(t Tool) {
	info := t.Info()
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.tools[info.Name]; ok {
		r.logger.Warn("tool registered twice; the later registration replaces the earlier",
			"tool", info.Name, "oldSource", old.info.Source, "oldServer", old.info.Server,
			"newSource", info.Source, "newServer", info.Server)
	}
	r.tools[info.Name] = registered{tool: t, info: info}
	r.aliases, r.decls, r.situational = nil, nil, nil
	r.version++
}

// Unregister removes the tool called name, if any.
func (r *Registry) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tools, name)
	r.aliases, r.decls, r.situational = nil, nil, nil
	r.version++
}

// RemoveSource removes every tool of src, or, when server is not empty, only the tools
// of that MCP server; it is how a rediscovery or a server restart starts afresh.
func (r *Registry) RemoveSource(src Source, server string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, t := range r.tools {
		if t.info.Source == src && (server == "" || t.info.Server == server) {
			delete(r.tools, name)
		}
	}
	r.aliases, r.decls, r.situational = nil, nil, nil
	r.version++
}

// enabled reports whether the filter lets the tool t be used: Core names it (or is
// empty) and Exclude does not, under its name or one of its aliases, so that settings
// written for the name of an earlier release keep meaning the tool.
func (r *Registry) enabled(t registered) bool {
	inCore := r.coreAll
	for _, name := range t.names() {
		rule := r.rules[name]
		if rule == nil {
			continue
		}
		if rule.excluded {
			return false
		}
		inCore = inCore || rule.inCore
	}
	return inCore
}

// Get returns the enabled tool called name. It also accepts the name under which
// Declarations declared the tool to the model, when sanitising changed it, and the
// tool's aliases (Info.Aliases). A tool's own name wins over another's alias.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	t, ok := r.tools[name]
	aliases := r.aliases
	r.mu.RUnlock()
	if ok && r.enabled(t) {
		return t.tool, true
	}
	if aliases == nil {
		r.mu.Lock()
		if r.aliases == nil {
			r.aliases = r.computeAliases()
		}
		aliases = r.aliases
		r.mu.Unlock()
	}
	realName, ok := aliases[name]
	if !ok {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if t, ok := r.tools[realName]; ok && r.enabled(t) {
		return t.tool, true
	}
	return nil, false
}

// computeAliases needs r.mu held.
func (r *Registry) computeAliases() map[string]string {
	infos := r.listLocked()
	names := declaredNames(infos)
	aliases := map[string]string{}
	for _, info := range infos {
		for _, a := range info.Aliases {
			if _, own := r.tools[a]; !own {
				aliases[a] = info.Name
			}
		}
	}
	// A declared name is what the model was told: it wins over an alias.
	for i, info := range infos {
		if names[i] != info.Name {
			aliases[names[i]] = info.Name
		}
	}
	return aliases
}

func sourceRank(s Source) int {
	switch s {
	case SourceBuiltin:
		return 0
	case SourceDiscovered:
		return 1
	case SourceMCP:
		return 2
	}
	return 3
}

// List returns the enabled tools: built-in first, then discovered, then MCP, each group
// by name.
func (r *Registry) List() []Info {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.listLocked()
}

func (r *Registry) listLocked() []Info {
	infos := make([]Info, 0, len(r.tools))
	for _, t := range r.tools {
		if r.enabled(t) {
			infos = append(infos, t.info)
		}
	}
	slices.SortFunc(infos, func(a, b Info) int {
		return cmp.Or(cmp.Compare(sourceRank(a.Source), sourceRank(b.Source)),
			cmp.Compare(a.Source, b.Source), cmp.Compare(a.Name, b.Name))
	})
	return infos
}

// Declaration is a tool as the model is told of it: a name Gemini accepts and a
// parameter schema stripped of what Gemini rejects.
type Declaration struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the sanitised JSON Schema of the parameters (SanitizeSchema).
	Parameters json.RawMessage `json:"parametersJsonSchema"`
}

// Declarations returns the enabled tools, in List order, as the model is told of them.
// Names go through SanitizeName; when two tools end up with the same name, the one whose
// real name needed no change keeps it, and otherwise the later in list order gets a
// numeric suffix. Get accepts these names. A tool's aliases are not declared. A tool
// whose schema cannot be read is left out, with an error in the log.
//
// The declarations are made once per change of the registry's tools; callers must not
// change the Parameters they share.
func (r *Registry) Declarations() []Declaration {
	decls, _ := r.declarations()
	return slices.Clone(decls)
}

// DeclarationsIn returns the declarations of Declarations without the Situational
// tools that are of no use in s.
func (r *Registry) DeclarationsIn(s Situation) []Declaration {
	decls, situational := r.declarations()
	out := make([]Declaration, 0, len(decls))
	for i, d := range decls {
		if t := situational[i]; (t == nil || t.Offered(s)) && (s.Refused == nil || !s.Refused(d.Name)) {
			out = append(out, d)
		}
	}
	return out
}

// declarations returns the kept declarations, made anew when the tools changed.
func (r *Registry) declarations() ([]Declaration, []Situational) {
	r.mu.RLock()
	decls, situational := r.decls, r.situational
	r.mu.RUnlock()
	if decls == nil {
		decls, situational = r.declare()
	}
	return decls, situational
}

// declare makes the declarations and keeps them, unless the tools changed meanwhile.
func (r *Registry) declare() ([]Declaration, []Situational) {
	r.mu.RLock()
	version := r.version
	infos := r.listLocked()
	situationalOf := map[string]Situational{}
	for _, info := range infos {
		if s, ok := r.tools[info.Name].tool.(Situational); ok {
			situationalOf[info.Name] = s
		}
	}
	r.mu.RUnlock()
	names := declaredNames(infos)
	decls := make([]Declaration, 0, len(infos))
	situational := make([]Situational, 0, len(infos))
	for i, info := range infos {
		params, err := SanitizeSchema(info.Parameters)
		if err == nil {
			declareWaitForPrevious(params)
			var enc []byte
			if enc, err = json.Marshal(params); err == nil {
				decls = append(decls, Declaration{Name: names[i], Description: info.Description, Parameters: enc})
				situational = append(situational, situationalOf[info.Name])
				continue
			}
		}
		r.logger.Error("tool left out of the declarations: its parameter schema is invalid",
			"tool", info.Name, "source", info.Source, "server", info.Server, "err", err)
	}
	r.mu.Lock()
	if r.version == version {
		r.decls, r.situational = decls, situational
	}
	r.mu.Unlock()
	return decls, situational
}

// declaredNames returns the name each tool is declared under: its sanitised name, made
// unique. Names that are already valid are reserved first, so that a tool never loses
// its own valid name to another tool's sanitised one.
func declaredNames(infos []Info) []string {
	names := make([]string, len(infos))
	taken := map[string]bool{}
	for i, info := range infos {
		if SanitizeName(info.Name) == info.Name && !taken[info.Name] {
			names[i] = info.Name
			taken[info.Name] = true
		}
	}
	for i, info := range infos {
		if names[i] != "" {
			continue
		}
		base := SanitizeName(info.Name)
		name := base
		for n := 2; taken[name]; n++ {
			suffix := fmt.Sprintf("_%d", n)
			name = base[:min(len(base), maxNameLen-len(suffix))] + suffix
		}
		names[i] = name
		taken[name] = true
	}
	return names
}

// CheckCommand enforces the command restriction the filter sets on the tool called name
// (see Filter and confirm.CommandFilter). It returns nil when the command line may run,
// else an *Error of type policy_violation naming the offending command.
func (r *Registry) CheckCommand(name, command string) error {
	rule := r.rules[name]
	if !rule.restricted() {
		return nil
	}
	f := confirm.CommandFilter{Deny: rule.deny}
	if rule.inCore && !rule.unrestricted && len(rule.allow) > 0 {
		f.Allow = rule.allow
	}
	if err := f.Check(command, "", nil); err != nil {
		return &Error{Type: ErrPolicyViolation, Err: err,
			Message: fmt.Sprintf("%s is restricted by the coreTools/excludeTools settings: %v", name, err)}
	}
	return nil
}

// Suggest returns up to three enabled tool names closest to name, for a "did you mean"
// hint after a call of an unknown tool: names that contain it or that it contains come
// first, then by edit distance. Names too far from name to be a plausible typo are left
// out.
func (r *Registry) Suggest(name string) []string {
	lname := strings.ToLower(name)
	type candidate struct {
		name   string
		prefix bool
		dist   int
	}
	var cands []candidate
	for _, info := range r.List() {
		ln := strings.ToLower(info.Name)
		c := candidate{name: info.Name, dist: editDistance(lname, ln)}
		c.prefix = lname != "" && (strings.HasPrefix(ln, lname) || strings.HasPrefix(lname, ln) ||
			strings.Contains(ln, lname))
		if c.prefix || c.dist <= max(len([]rune(lname)), len([]rune(ln)))/2 {
			cands = append(cands, c)
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if a.prefix != b.prefix {
			if a.prefix {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(a.name, b.name))
	})
	out := make([]string, 0, 3)
	for _, c := range cands[:min(3, len(cands))] {
		out = append(out, c.name)
	}
	return out
}

// Closest returns up to n enabled tool names nearest to name by edit distance (ties by
// name), however far: for an unknown name that no name resembles, so that the model
// still learns some that exist.
func (r *Registry) Closest(name string, n int) []string {
	lname := strings.ToLower(name)
	type candidate struct {
		name string
		dist int
	}
	var cands []candidate
	for _, info := range r.List() {
		cands = append(cands, candidate{info.Name, editDistance(lname, strings.ToLower(info.Name))})
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(a.name, b.name))
	})
	out := make([]string, 0, n)
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
