package settings

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"gopkg.in/yaml.v3"

	"github.com/agentls/agentls/confirm"
)

// What a Gemini CLI user has set up besides settings.json, read in Gemini CLI's own
// formats so that the same files serve both programs: custom commands (docs/cli/
// custom-commands.md), Agent Skills (docs/cli/skills.md) and extensions (docs/
// extensions/reference.md). The user's own are always read; a workspace's only when
// the user trusts it, like the workspace settings that add tools.

// Command is a custom slash command: a .toml file with a prompt (and a description)
// under a commands folder, named by its path there, folders separated by colons
// (git/commit.toml is the command git:commit).
type Command struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Prompt is the template: {{args}}, @{path} and !{command} are expanded when the
	// command runs (package session).
	Prompt string `json:"-"`
	// File is the command's .toml file.
	File string `json:"file"`
	// Extension names the extension that brought the command, if one did.
	Extension string `json:"extension,omitempty"`
}

// Skill is an Agent Skill: a folder with a SKILL.md whose YAML front matter gives its
// name and description; the rest of the file is the instructions the model loads when
// it activates the skill (activate_skill).
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Body        string `json:"-"`
	// File is the skill's SKILL.md; its folder holds the skill's other files.
	File      string `json:"file"`
	Extension string `json:"extension,omitempty"`
}

// Dir is the folder of the skill's files.
func (s Skill) Dir() string { return filepath.Dir(s.File) }

// Extension is a Gemini CLI extension: a folder with a gemini-extension.json, and
// what it brings.
type Extension struct {
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	Dir         string `json:"dir"`
	// Disabled reports that Gemini CLI's enablement file disables the extension for
	// the workspace: it brings nothing.
	Disabled bool `json:"disabled,omitempty"`
	// MCPServers names the extension's MCP servers; one a settings file also names is
	// the settings file's.
	MCPServers   []string `json:"mcpServers,omitempty"`
	ContextFiles []string `json:"contextFiles,omitempty"`
	ExcludeTools []string `json:"excludeTools,omitempty"`
	Commands     []string `json:"commands,omitempty"`
	Skills       []string `json:"skills,omitempty"`
	// Agents are the sub-agents its agents folder brings, by name.
	Agents []string `json:"agents,omitempty"`
	// Hooks is the extension's hooks/hooks.json and HookEvents the events it sets
	// hooks for; they run after the settings' hooks of each event.
	Hooks      string   `json:"hooks,omitempty"`
	HookEvents []string `json:"hookEvents,omitempty"`
	// Policies are the extension's policies/*.toml and PolicyRules how many agentls
	// rules they make (confirm.SourceExtension: deny or ask, below the user's rules).
	Policies    []string `json:"policies,omitempty"`
	PolicyRules int      `json:"policyRules,omitempty"`
	// Settings are the names of the environment variables of the extension's settings
	// (its manifest's "settings") that have a value in its .env file, as `gemini
	// extensions config` writes them; values stay out of listings.
	Settings []string `json:"settings,omitempty"`
	// Warnings say what of the extension's hooks and policies was refused and why.
	Warnings []string `json:"warnings,omitempty"`
	// Error says why the extension could not be read; it then brings nothing.
	Error string `json:"error,omitempty"`
}

// extensionManifest is gemini-extension.json.
type extensionManifest struct {
	Name            string               `json:"name"`
	Version         string               `json:"version"`
	Description     string               `json:"description"`
	MCPServers      map[string]MCPServer `json:"mcpServers"`
	ContextFileName json.RawMessage      `json:"contextFileName"`
	ExcludeTools    []string             `json:"excludeTools"`
	Settings        []extensionSetting   `json:"settings"`
}

// extensionSetting is a setting an extension asks its user for at installation; its
// value is kept in the extension's .env file as envVar, or in the system keychain when
// sensitive.
type extensionSetting struct {
	Name      string `json:"name"`
	EnvVar    string `json:"envVar"`
	Sensitive bool   `json:"sensitive"`
}

// Names of files and folders of Gemini CLI's formats.
const (
	extensionManifestName = "gemini-extension.json"
	enablementFileName    = "extension-enablement.json"
	skillFileName         = "SKILL.md"
)

// Addons are the extensions, custom commands and skills of the user and of a trusted
// workspace, which LoadWith merges into the settings.
type Addons struct {
	Commands     []Command
	Skills       []Skill
	Extensions   []Extension
	ContextFiles []string
	// servers are the MCP servers of the enabled extensions (the first extension to
	// name one has it), excludeTools their excluded tools.
	servers      map[string]MCPServer
	excludeTools []string
	// hooks and rules are the enabled extensions' hooks and policy rules.
	hooks map[string][]HookGroup
	rules []confirm.Rule
	// agents are the sub-agents of Gemini CLI's agents folders, by name.
	agents map[string]AgentSettings
	// ignored says what was not read and why; untrusted, the part of it that trusting
	// the workspace would read.
	ignored, untrusted []string
}

// addonDirs are where the user's and the workspace's commands and skills are looked for.
type addonDirs struct {
	geminiDir, configDir, agentsDir, root string
	trusted                               bool
}

// dirsOf returns where LoadWith(configDir, root, o) reads the addons.
func dirsOf(configDir, root string, o Options) addonDirs {
	d := addonDirs{geminiDir: o.geminiDir(), configDir: configDir, root: root, trusted: o.Trusted}
	if d.geminiDir != "" {
		d.agentsDir = filepath.Join(filepath.Dir(d.geminiDir), ".agents")
	}
	return d
}

// ReadAddons reads the extensions, custom commands and skills that LoadWith(configDir,
// root, o) reads unless o.DeferAddons, for a caller that reads them later.
func ReadAddons(configDir, root string, o Options) *Addons {
	return readAddons(dirsOf(configDir, root, o))
}

// Merge returns s with a merged in, as LoadWith merges them.
func (a *Addons) Merge(s Settings) Settings {
	l := Loaded{Settings: s}
	l.Settings.MCPServers = maps.Clone(s.MCPServers)
	l.Settings.ExcludeTools = slices.Clone(s.ExcludeTools)
	l.Settings.Policy.Rules = slices.Clone(s.Policy.Rules)
	l.Settings.Hooks.Events = maps.Clone(s.Hooks.Events)
	l.apply(a)
	return l.Settings
}

// Ignored says what of the addons was not read and why; Untrusted is the part of it
// that trusting the workspace would read.
func (a *Addons) Ignored() []string   { return a.ignored }
func (a *Addons) Untrusted() []string { return a.untrusted }

// apply merges a into l: an extension's MCP server joins the settings unless they name
// one of that name, its excluded tools are added.
func (l *Loaded) apply(a *Addons) {
	s := &l.Settings
	for _, name := range slices.Sorted(maps.Keys(a.servers)) {
		if _, ok := s.MCPServers[name]; ok {
			continue
		}
		if s.MCPServers == nil {
			s.MCPServers = map[string]MCPServer{}
		}
		s.MCPServers[name] = a.servers[name]
	}
	s.ExcludeTools = append(s.ExcludeTools, a.excludeTools...)
	// An extension's policy rules rank below the user's (confirm.SourceExtension); its
	// hooks run after the settings' of the same event, as Gemini CLI ranks them.
	s.Policy.Rules = append(s.Policy.Rules, a.rules...)
	for _, event := range HookEvents {
		if groups := a.hooks[event]; len(groups) > 0 {
			if s.Hooks.Events == nil {
				s.Hooks.Events = map[string][]HookGroup{}
			}
			s.Hooks.Events[event] = append(slices.Clone(s.Hooks.Events[event]), groups...)
		}
	}
	// An agent of the settings' name is the settings' own.
	for name, def := range a.agents {
		if _, ok := s.Agents[name]; ok {
			continue
		}
		if s.Agents == nil {
			s.Agents = map[string]AgentSettings{}
		}
		s.Agents[name] = def
	}
	s.Commands, s.Skills, s.Extensions, s.ContextFiles = a.Commands, a.Skills, a.Extensions, a.ContextFiles
	l.Ignored = append(l.Ignored, a.ignored...)
	l.Untrusted = append(l.Untrusted, a.untrusted...)
}

// ignoreUntrusted notes what trusting the workspace would read.
func (a *Addons) ignoreUntrusted(msg string) {
	a.ignored = append(a.ignored, msg)
	a.untrusted = append(a.untrusted, msg)
}

// readAddons reads the extensions, custom commands and skills: the user's from Gemini
// CLI's and agentls's user folders, the workspace's (under root) only when it is
// trusted.
func readAddons(d addonDirs) *Addons {
	a := &Addons{servers: map[string]MCPServer{}, hooks: map[string][]HookGroup{}, agents: map[string]AgentSettings{}}
	hint := fmt.Sprintf("the folder is not trusted; to trust it, run: agentls trust %s", d.root)
	commands := map[string]Command{}
	skills := map[string]Skill{}
	extDirs := []string{d.geminiDir, d.configDir}
	if d.root != "" {
		// Gemini CLI reads extensions from the user's folder alone; a workspace's own
		// (as older releases read them) count only in a trusted workspace.
		for _, name := range []string{".gemini", ".agentls"} {
			dir := filepath.Join(d.root, name)
			switch {
			case d.trusted:
				extDirs = append(extDirs, dir)
			case exists(filepath.Join(dir, "extensions")):
				a.ignoreUntrusted(fmt.Sprintf("%s: extensions ignored (%s)", filepath.Join(dir, "extensions"), hint))
			}
		}
	}
	for _, dir := range extDirs {
		if dir == "" {
			continue
		}
		for _, ext := range a.readExtensions(filepath.Join(dir, "extensions"), d.root) {
			a.Extensions = append(a.Extensions, ext.Extension)
			if ext.Disabled || ext.Error != "" {
				continue
			}
			for name, srv := range ext.servers {
				if _, ok := a.servers[name]; !ok {
					a.servers[name] = srv
				}
			}
			a.excludeTools = append(a.excludeTools, ext.ExcludeTools...)
			for event, groups := range ext.hooks.Events {
				a.hooks[event] = append(a.hooks[event], groups...)
			}
			a.rules = append(a.rules, ext.rules...)
			for _, w := range ext.Warnings {
				a.ignored = append(a.ignored, fmt.Sprintf("extension %s: %s", ext.Name, w))
			}
			a.ContextFiles = append(a.ContextFiles, ext.ContextFiles...)
			for _, c := range ext.commands {
				commands[c.Name] = c
			}
			for _, sk := range ext.skills {
				skills[sk.Name] = sk
			}
			maps.Copy(a.agents, ext.agents)
		}
	}
	type source struct {
		dir       string
		workspace bool
	}
	cmdDirs := []source{{dir: d.geminiDir}, {dir: d.configDir}}
	skillDirs := []source{{dir: d.geminiDir}, {dir: d.agentsDir}, {dir: d.configDir}}
	if d.root != "" {
		for _, name := range []string{".gemini", ".agents", ".agentls"} {
			ws := source{dir: filepath.Join(d.root, name), workspace: true}
			if name != ".agents" {
				cmdDirs = append(cmdDirs, ws)
			}
			skillDirs = append(skillDirs, ws)
		}
	}
	// each reads the folder sub of each of srcs with read; an untrusted workspace's is
	// noted as ignored, what saying what it holds.
	each := func(srcs []source, sub, what string, read func(dir string)) {
		for _, src := range srcs {
			if src.dir == "" {
				continue
			}
			dir := filepath.Join(src.dir, sub)
			if src.workspace && !d.trusted {
				if exists(dir) {
					a.ignoreUntrusted(fmt.Sprintf("%s: %s ignored (%s)", dir, what, hint))
				}
				continue
			}
			read(dir)
		}
	}
	each(cmdDirs, "commands", "custom commands", func(dir string) {
		for _, c := range a.readCommands(dir, "") {
			commands[c.Name] = c
		}
	})
	each(skillDirs, "skills", "skills", func(dir string) {
		for _, sk := range a.readSkills(dir, "") {
			skills[sk.Name] = sk
		}
	})
	// Gemini CLI's sub-agents: the user's, then a trusted workspace's.
	agentDirs := []source{{dir: d.geminiDir}}
	if d.root != "" {
		agentDirs = append(agentDirs, source{dir: filepath.Join(d.root, ".gemini"), workspace: true})
	}
	each(agentDirs, "agents", "sub-agents", func(dir string) { maps.Copy(a.agents, a.readAgents(dir)) })
	a.Commands = slices.SortedFunc(maps.Values(commands), func(x, y Command) int { return strings.Compare(x.Name, y.Name) })
	a.Skills = slices.SortedFunc(maps.Values(skills), func(x, y Skill) int { return strings.Compare(x.Name, y.Name) })
	return a
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readCommands reads the custom commands under dir, each named by its path below dir.
// A file that is not a command is noted in the addons' ignored and skipped.
func (a *Addons) readCommands(dir, extension string) []Command {
	var out []Command
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == dir {
				return fs.SkipAll
			}
			return err
		}
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".toml") {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		c, err := readCommand(path)
		if err != nil {
			a.ignored = append(a.ignored, fmt.Sprintf("%s: not a custom command: %v", path, err))
			return nil
		}
		c.Name = strings.ReplaceAll(filepath.ToSlash(strings.TrimSuffix(rel, ".toml")), "/", ":")
		c.File, c.Extension = path, extension
		out = append(out, c)
		return nil
	})
	if err != nil {
		a.ignored = append(a.ignored, fmt.Sprintf("%s: reading the custom commands: %v", dir, err))
	}
	return out
}

// readCommand reads one command file: prompt is required, description optional.
func readCommand(path string) (Command, error) {
	var f struct {
		Prompt      *string `toml:"prompt"`
		Description string  `toml:"description"`
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Command{}, err
	}
	if err := toml.Unmarshal(data, &f); err != nil {
		return Command{}, err
	}
	if f.Prompt == nil {
		return Command{}, errors.New(`it has no "prompt"`)
	}
	desc := strings.TrimSpace(f.Description)
	if desc == "" {
		desc = "Custom command from " + filepath.Base(path)
	}
	return Command{Description: desc, Prompt: *f.Prompt}, nil
}

// readSkills reads the skills of dir: dir/SKILL.md and dir/*/SKILL.md, as Gemini CLI
// looks for them.
func (a *Addons) readSkills(dir, extension string) []Skill {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			a.ignored = append(a.ignored, fmt.Sprintf("%s: reading the skills: %v", dir, err))
		}
		return nil
	}
	files := []string{filepath.Join(dir, skillFileName)}
	for _, e := range entries {
		if e.Name() == "node_modules" || e.Name() == ".git" {
			continue
		}
		if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			files = append(files, filepath.Join(dir, e.Name(), skillFileName))
		}
	}
	var out []Skill
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sk, err := parseSkill(data)
		if err != nil {
			a.ignored = append(a.ignored, fmt.Sprintf("%s: not a skill: %v", f, err))
			continue
		}
		sk.File, sk.Extension = f, extension
		out = append(out, sk)
	}
	return out
}

// readAgents reads Gemini CLI's sub-agents in dir: *.md files whose YAML front matter
// names the agent and says what it is for, and whose body is its instructions. A
// remote (A2A) agent, or a file that is not an agent, is noted in the addons' ignored
// and skipped.
func (a *Addons) readAgents(dir string) map[string]AgentSettings {
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	out := map[string]AgentSettings{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			a.ignored = append(a.ignored, fmt.Sprintf("%s: %v", f, err))
			continue
		}
		name, def, err := parseAgent(data)
		if err != nil {
			a.ignored = append(a.ignored, fmt.Sprintf("%s: not a sub-agent agentls runs: %v", f, err))
			continue
		}
		out[name] = def
	}
	return out
}

// parseAgent reads a sub-agent file of Gemini CLI's: its name, and its definition.
func parseAgent(data []byte) (string, AgentSettings, error) {
	fmText, body, found := splitFrontMatter(data)
	if !found {
		return "", AgentSettings{}, errors.New("no front matter (--- name: … description: … ---)")
	}
	var fm struct {
		Kind        string   `yaml:"kind"`
		Name        string   `yaml:"name"`
		Description string   `yaml:"description"`
		Tools       []string `yaml:"tools"`
		MaxTurns    int      `yaml:"max_turns"`
	}
	if err := yaml.Unmarshal(fmText, &fm); err != nil {
		return "", AgentSettings{}, fmt.Errorf("its front matter: %w", err)
	}
	name := strings.TrimSpace(fm.Name)
	switch {
	case fm.Kind != "" && fm.Kind != "local":
		return "", AgentSettings{}, fmt.Errorf("kind %q: agentls runs local agents only", fm.Kind)
	case name == "" || strings.TrimSpace(fm.Description) == "":
		return "", AgentSettings{}, errors.New("its front matter lacks a name or a description")
	}
	return name, AgentSettings{Description: strings.TrimSpace(fm.Description), SystemPrompt: strings.TrimSpace(string(body)),
		Tools: fm.Tools, MaxTurns: fm.MaxTurns}, nil
}

// splitFrontMatter returns the YAML front matter of a SKILL.md (between a first line
// "---" and the next line "---") and the text after it.
func splitFrontMatter(data []byte) (fm, body []byte, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		if rest, ok = bytes.CutPrefix(data, []byte("---\r\n")); !ok {
			return nil, nil, false
		}
	}
	for i := 0; ; {
		j := bytes.Index(rest[i:], []byte("\n---"))
		if j < 0 {
			return nil, nil, false
		}
		j += i
		after := rest[j+len("\n---"):]
		after, _ = bytes.CutPrefix(after, []byte("\r"))
		if len(after) == 0 || after[0] == '\n' {
			fm = bytes.TrimSuffix(rest[:j], []byte("\r"))
			if len(after) > 0 {
				after = after[1:]
			}
			return fm, after, true
		}
		i = j + 1
	}
}

// skillNameReplacer makes a skill's name fit for a file name, as Gemini CLI does.
var skillNameReplacer = strings.NewReplacer(":", "-", `\`, "-", "/", "-", "<", "-", ">", "-", "*", "-", "?", "-", `"`, "-", "|", "-")

// parseSkill reads a SKILL.md: its front matter's name and description (as YAML, or
// line by line where YAML fails, as Gemini CLI does for descriptions with colons) and
// its body.
func parseSkill(data []byte) (Skill, error) {
	fmText, body, found := splitFrontMatter(data)
	if !found {
		return Skill{}, errors.New("no front matter (--- name: … description: … ---)")
	}
	var fm struct {
		Name        any `yaml:"name"`
		Description any `yaml:"description"`
	}
	name, desc, ok := "", "", false
	if err := yaml.Unmarshal(fmText, &fm); err == nil {
		name, ok = fm.Name.(string)
		var ok2 bool
		desc, ok2 = fm.Description.(string)
		ok = ok && ok2
	}
	if !ok {
		name, desc, ok = simpleFrontMatter(string(fmText))
	}
	if !ok {
		return Skill{}, errors.New("its front matter lacks a name or a description")
	}
	name = skillNameReplacer.Replace(strings.TrimSpace(name))
	if name == "" {
		return Skill{}, errors.New("its name is empty")
	}
	return Skill{Name: name, Description: strings.TrimSpace(desc), Body: strings.TrimSpace(string(body))}, nil
}

// simpleFrontMatter reads name: and description: lines, a description continuing on
// indented lines.
func simpleFrontMatter(text string) (name, desc string, ok bool) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var haveName, haveDesc bool
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t")
		if v, found := strings.CutPrefix(line, "name:"); found {
			name, haveName = strings.TrimSpace(v), true
			continue
		}
		if v, found := strings.CutPrefix(line, "description:"); found {
			parts := []string{strings.TrimSpace(v)}
			for i+1 < len(lines) && len(lines[i+1]) > 0 && (lines[i+1][0] == ' ' || lines[i+1][0] == '\t') && strings.TrimSpace(lines[i+1]) != "" {
				i++
				parts = append(parts, strings.TrimSpace(lines[i]))
			}
			desc, haveDesc = strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), " "), true
		}
	}
	return name, desc, haveName && haveDesc
}

// loadedExtension is an extension and what it brings.
type loadedExtension struct {
	Extension
	servers  map[string]MCPServer
	commands []Command
	skills   []Skill
	agents   map[string]AgentSettings
	hooks    Hooks
	rules    []confirm.Rule
}

// readExtensions reads the extensions of dir (each a folder with a
// gemini-extension.json), with dir's enablement file deciding which are disabled for
// the workspace root.
func (a *Addons) readExtensions(dir, root string) []loadedExtension {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	enablement := readEnablement(filepath.Join(dir, enablementFileName), &a.ignored)
	var out []loadedExtension
	for _, e := range entries {
		extDir := filepath.Join(dir, e.Name())
		if !e.IsDir() && (e.Type()&fs.ModeSymlink == 0 || !exists(filepath.Join(extDir, extensionManifestName))) {
			continue
		}
		// An extension `gemini extensions link` installed lives where its install
		// metadata points.
		if source := linkedSource(extDir); source != "" {
			extDir = source
		}
		data, err := os.ReadFile(filepath.Join(extDir, extensionManifestName))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		ext := loadedExtension{Extension: Extension{Name: e.Name(), Dir: extDir}}
		if err == nil {
			err = a.readExtension(&ext, data, root)
		}
		if err != nil {
			ext.Error = err.Error()
			a.ignored = append(a.ignored, fmt.Sprintf("%s: extension ignored: %v", extDir, err))
			out = append(out, ext)
			continue
		}
		if !enabled(enablement[ext.Name], root) {
			ext = loadedExtension{Extension: ext.Extension}
			ext.Disabled = true
		}
		out = append(out, ext)
	}
	return out
}

// installMetadataName is the file in which Gemini CLI records how it installed an
// extension.
const installMetadataName = ".gemini-extension-install.json"

// linkedSource returns the folder a linked extension's install metadata in extDir
// points to, or "" when it is not a linked extension.
func linkedSource(extDir string) string {
	data, err := os.ReadFile(filepath.Join(extDir, installMetadataName))
	if err != nil {
		return ""
	}
	var m struct {
		Source string `json:"source"`
		Type   string `json:"type"`
	}
	if json.Unmarshal(data, &m) != nil || m.Type != "link" || !filepath.IsAbs(m.Source) {
		return ""
	}
	return filepath.Clean(m.Source)
}

// readExtension reads the manifest data of ext and what its folder brings.
func (a *Addons) readExtension(ext *loadedExtension, data []byte, root string) error {
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("%s: %w", extensionManifestName, err)
	}
	sep := string(filepath.Separator)
	// The values of the extension's settings replace $VAR and ${VAR} in its manifest,
	// as in Gemini CLI; other variables are left to the environment.
	env := readDotEnv(filepath.Join(ext.Dir, ".env"))
	pairs := []string{"${extensionPath}", ext.Dir, "${workspacePath}", root, "${/}", sep, "${pathSeparator}", sep}
	// Longer names first: $AB is not $A followed by B.
	for _, k := range slices.SortedFunc(maps.Keys(env), func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) }) {
		pairs = append(pairs, "${"+k+"}", env[k], "$"+k, env[k])
	}
	vars := strings.NewReplacer(pairs...)
	raw = substitute(raw, vars)
	data, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	var m extensionManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: %w", extensionManifestName, err)
	}
	if m.Name != "" {
		ext.Name = m.Name
	}
	ext.Version, ext.Description = m.Version, m.Description
	ext.servers = m.MCPServers
	for name, srv := range ext.servers {
		// Gemini CLI does not let an extension trust its own server.
		srv.Trust = false
		// A server the extension starts gets its settings in its environment, under
		// what the manifest gives it.
		if srv.Command != "" && len(env) > 0 {
			merged := maps.Clone(env)
			maps.Copy(merged, srv.Env)
			srv.Env = merged
		}
		ext.servers[name] = srv
	}
	for _, st := range m.Settings {
		switch _, ok := env[st.EnvVar]; {
		case ok:
			ext.Settings = append(ext.Settings, st.EnvVar)
		case st.Sensitive:
			ext.Warnings = append(ext.Warnings, fmt.Sprintf("setting %q (%s) is kept in the system keychain by Gemini CLI, which agentls does not read: set %s in agentls's environment", st.Name, st.EnvVar, st.EnvVar))
		}
	}
	ext.MCPServers = slices.Sorted(maps.Keys(m.MCPServers))
	ext.ExcludeTools = m.ExcludeTools
	names := []string{"GEMINI.md"}
	if len(bytes.TrimSpace(m.ContextFileName)) > 0 && string(m.ContextFileName) != "null" {
		var one string
		if json.Unmarshal(m.ContextFileName, &one) == nil {
			names = []string{one}
		} else if err := json.Unmarshal(m.ContextFileName, &names); err != nil {
			return fmt.Errorf("contextFileName: want a file name or a list of them")
		}
	}
	for _, n := range names {
		p := filepath.Join(ext.Dir, n)
		if rel, err := filepath.Rel(ext.Dir, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+sep) {
			return fmt.Errorf("contextFileName %q: context files must be within the extension's folder", n)
		}
		if exists(p) {
			ext.ContextFiles = append(ext.ContextFiles, p)
		}
	}
	ext.commands = a.readCommands(filepath.Join(ext.Dir, "commands"), ext.Name)
	for _, c := range ext.commands {
		ext.Commands = append(ext.Commands, c.Name)
	}
	ext.skills = a.readSkills(filepath.Join(ext.Dir, "skills"), ext.Name)
	for _, sk := range ext.skills {
		ext.Skills = append(ext.Skills, sk.Name)
	}
	ext.agents = a.readAgents(filepath.Join(ext.Dir, "agents"))
	ext.Agents = slices.Sorted(maps.Keys(ext.agents))
	if p := filepath.Join(ext.Dir, "hooks", "hooks.json"); exists(p) {
		ext.Hooks = p
		h, err := extensionHooks(p, ext.Dir, env, vars)
		if err != nil {
			ext.Warnings = append(ext.Warnings, fmt.Sprintf("%s: not read, none of its hooks runs: %v", p, err))
		}
		ext.hooks = h
		for _, event := range HookEvents {
			if len(h.Events[event]) > 0 {
				ext.HookEvents = append(ext.HookEvents, event)
			}
		}
	}
	ext.Policies, _ = filepath.Glob(filepath.Join(ext.Dir, "policies", "*.toml"))
	var warnings []string
	ext.rules, warnings = readPolicies(ext.Name, ext.Policies)
	ext.PolicyRules = len(ext.rules)
	ext.Warnings = append(ext.Warnings, warnings...)
	return nil
}

// readDotEnv reads a .env file of KEY=VALUE lines, as `gemini extensions config`
// writes one: blank lines and # comments are skipped, an "export " prefix is allowed,
// and a value in matching single or double quotes is taken without them. A missing or
// unreadable file has no values.
func readDotEnv(path string) map[string]string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || strings.ContainsAny(k, " \t$") {
			continue
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	return out
}

// substitute replaces the variables of every string in v, a decoded JSON value.
func substitute(v any, r *strings.Replacer) any {
	switch v := v.(type) {
	case string:
		return r.Replace(v)
	case []any:
		for i := range v {
			v[i] = substitute(v[i], r)
		}
	case map[string]any:
		for k := range v {
			v[k] = substitute(v[k], r)
		}
	}
	return v
}

// readEnablement reads Gemini CLI's extension enablement file: for each extension
// name, its overrides, each a folder path ("!" first disables, "*" last takes the
// folders below too). A missing file enables everything; a damaged one is noted.
func readEnablement(path string, ignored *[]string) map[string][]string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var f map[string]struct {
		Overrides []string `json:"overrides"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		*ignored = append(*ignored, fmt.Sprintf("%s ignored: %v", path, err))
		return nil
	}
	out := make(map[string][]string, len(f))
	for name, c := range f {
		out[name] = c.Overrides
	}
	return out
}

// enabled reports whether an extension with these enablement overrides is enabled in
// the folder dir: enabled unless an override matches, the last matching one deciding.
func enabled(overrides []string, dir string) bool {
	path := slashed(dir)
	on := true
	for _, rule := range overrides {
		disable := strings.HasPrefix(rule, "!")
		base := strings.TrimPrefix(rule, "!")
		subdirs := strings.HasSuffix(base, "*")
		base = strings.TrimSuffix(base, "*")
		pattern := regexp.QuoteMeta(base)
		if subdirs {
			pattern += `\*`
		}
		// A "*" matches any folder below, or none, as in Gemini CLI.
		pattern = regexp.MustCompile(`(/?)\\\*`).ReplaceAllString(pattern, `($1.*)?`)
		re, err := regexp.Compile("^" + pattern + "$")
		if err == nil && re.MatchString(path) {
			on = !disable
		}
	}
	return on
}

// slashed returns dir with forward slashes and a slash first and last, as Gemini
// CLI's enablement rules are written.
func slashed(dir string) string {
	s := filepath.ToSlash(dir)
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s
}
