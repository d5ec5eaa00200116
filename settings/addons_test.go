package settings

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
)

func TestEnabled(t *testing.T) {
	tests := []struct {
		overrides []string
		dir       string
		want      bool
	}{
		{nil, "/home/u/p", true},
		{[]string{"!/home/u/p/"}, "/home/u/p", false},
		{[]string{"!/home/u/p/"}, "/home/u/p/sub", true},
		{[]string{"!/home/u/*"}, "/home/u/p/sub", false},
		{[]string{"!/home/u/*"}, "/home/u", false},
		{[]string{"!/home/u/*"}, "/home/uv", true},
		{[]string{"!/*", "/home/u/p/"}, "/home/u/p", true},
		{[]string{"!/*", "/home/u/p/"}, "/home/u/q", false},
		{[]string{"/home/u/p/", "!/*"}, "/home/u/p", false}, // the last match decides
		{[]string{"!/home/u.x/*"}, "/home/uax/p", true},     // "." is no wildcard
	}
	for _, tt := range tests {
		if got := enabled(tt.overrides, tt.dir); got != tt.want {
			t.Errorf("enabled(%q, %s) = %v, want %v", tt.overrides, tt.dir, got, tt.want)
		}
	}
}

func TestParseSkill(t *testing.T) {
	tests := []struct {
		name, in        string
		wantName, wantD string
		wantBody        string
		wantErr         bool
	}{
		{"yaml", "---\nname: a\ndescription: Does A.\n---\n\nBody\n", "a", "Does A.", "Body", false},
		{"folded", "---\nname: b\ndescription: >\n  Line one\n  line two\n---\nX", "b", "Line one line two", "X", false},
		{"colon falls back", "---\nname: c\ndescription: Use when: asked\n  and more\n---\nY", "c", "Use when: asked and more", "Y", false},
		{"crlf", "---\r\nname: d\r\ndescription: D\r\n---\r\nZ\r\n", "d", "D", "Z", false},
		{"name sanitised", "---\nname: x:y/z\ndescription: D\n---\n", "x-y-z", "D", "", false},
		{"no front matter", "# Skill\n", "", "", "", true},
		{"no description", "---\nname: e\n---\nBody", "", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSkill([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err == nil && (s.Name != tt.wantName || s.Description != tt.wantD || s.Body != tt.wantBody) {
				t.Errorf("got %+v", s)
			}
		})
	}
}

// TestLoadAddons: commands are named by their path, the workspace's override the
// user's and count only in a trusted workspace (else they are reported ignored), and an
// extension's MCP server yields to the settings' server of the same name.
func TestLoadAddons(t *testing.T) {
	home, cfg, root := t.TempDir(), t.TempDir(), t.TempDir()
	gemini := filepath.Join(home, ".gemini")
	testutil.WriteFiles(t, gemini, map[string]string{
		"settings.json":                         `{"mcpServers": {"shared": {"command": "from-settings"}}}`,
		"commands/git/commit.toml":              `prompt = "user commit"`,
		"commands/review.toml":                  "description = \"Reviews\"\nprompt = \"user review\"",
		"commands/broken.toml":                  `description = "no prompt"`,
		"skills/s1/SKILL.md":                    "---\nname: s1\ndescription: user s1\n---\n",
		"extensions/e/gemini-extension.json":    `{"name": "e", "mcpServers": {"shared": {"command": "from-ext"}, "own": {"command": "${extensionPath}${/}bin", "trust": true}}, "excludeTools": ["web_fetch"], "contextFileName": ["CTX.md", "missing.md"]}`,
		"extensions/e/CTX.md":                   "context",
		"extensions/e/commands/review.toml":     `prompt = "extension review"`,
		"extensions/bad/gemini-extension.json":  `{`,
		"extensions/not-an-extension/README.md": "",
	})
	testutil.WriteFiles(t, home, map[string]string{".agents/skills/s2/SKILL.md": "---\nname: s2\ndescription: agents s2\n---\n"})
	// A linked extension: its folder holds the install metadata, its source the rest.
	linked := t.TempDir()
	testutil.WriteFiles(t, linked, map[string]string{"gemini-extension.json": `{"name": "linked"}`, "commands/from-link.toml": `prompt = "linked"`})
	testutil.WriteFiles(t, gemini, map[string]string{"extensions/linked/.gemini-extension-install.json": `{"source": "` + filepath.ToSlash(linked) + `", "type": "link"}`})
	testutil.WriteFiles(t, root, map[string]string{
		".gemini/commands/review.toml":               `prompt = "workspace review"`,
		".agentls/skills/s1/SKILL.md":                "---\nname: s1\ndescription: workspace s1\n---\n",
		".gemini/extensions/w/gemini-extension.json": `{"name": "w"}`,
	})
	for _, trusted := range []bool{false, true} {
		l, err := LoadWith(cfg, root, Options{Trusted: trusted, GeminiDir: gemini})
		if err != nil {
			t.Fatal(err)
		}
		s := l.Settings
		cmds := map[string]string{}
		for _, c := range s.Commands {
			cmds[c.Name] = c.Prompt
		}
		wantReview := "user review"
		if trusted {
			wantReview = "workspace review"
		}
		if len(cmds) != 3 || cmds["git:commit"] != "user commit" || cmds["review"] != wantReview || cmds["from-link"] != "linked" {
			t.Errorf("trusted %v: commands %v", trusted, cmds)
		}
		skills := map[string]string{}
		for _, sk := range s.Skills {
			skills[sk.Name] = sk.Description
		}
		wantS1 := "user s1"
		if trusted {
			wantS1 = "workspace s1"
		}
		if len(skills) != 2 || skills["s1"] != wantS1 || skills["s2"] != "agents s2" {
			t.Errorf("trusted %v: skills %v", trusted, skills)
		}
		if s.MCPServers["shared"].Command != "from-settings" || s.MCPServers["own"].Command != filepath.Join(gemini, "extensions", "e", "bin") ||
			s.MCPServers["own"].Trust {
			t.Errorf("servers %+v", s.MCPServers)
		}
		if len(s.ContextFiles) != 1 || filepath.Base(s.ContextFiles[0]) != "CTX.md" || !strings.Contains(strings.Join(s.ExcludeTools, ","), "web_fetch") {
			t.Errorf("context %v, exclude %v", s.ContextFiles, s.ExcludeTools)
		}
		var names []string
		for _, e := range s.Extensions {
			names = append(names, e.Name)
		}
		want := "bad,e,linked"
		if trusted {
			want = "bad,e,linked,w"
		}
		if strings.Join(names, ",") != want || s.Extensions[0].Error == "" {
			t.Errorf("trusted %v: extensions %+v", trusted, s.Extensions)
		}
		ignored := strings.Join(l.Untrusted, "\n")
		for _, what := range []string{"custom commands ignored", "skills ignored", "extensions ignored"} {
			if strings.Contains(ignored, what) == trusted {
				t.Errorf("trusted %v: Untrusted %q", trusted, ignored)
			}
		}
		if !strings.Contains(strings.Join(l.Ignored, "\n"), "broken.toml: not a custom command") {
			t.Errorf("the broken command is not reported: %q", l.Ignored)
		}
	}
}

// BenchmarkLoadWithGeminiSetup measures LoadWith with a Gemini CLI user's setup (50
// commands, 20 skills, 5 extensions with a command, a skill and a context file each)
// against an empty one: what reading them adds to every start and reconfiguration.
func BenchmarkLoadWithGeminiSetup(b *testing.B) {
	for _, setup := range []string{"empty", "50 commands, 20 skills, 5 extensions"} {
		b.Run(setup, func(b *testing.B) {
			home, cfg, root := b.TempDir(), b.TempDir(), b.TempDir()
			if setup != "empty" {
				testutil.GeminiSetup(b, home)
			}
			gemini := filepath.Join(home, ".gemini")
			// The CPU time too: on a loaded machine the wall time is mostly waiting.
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				l, err := LoadWith(cfg, root, Options{Trusted: true, GeminiDir: gemini})
				if err != nil || (setup != "empty" && (len(l.Settings.Commands) != 55 || len(l.Settings.Skills) != 25)) {
					b.Fatalf("%v: %d commands, %d skills", err, len(l.Settings.Commands), len(l.Settings.Skills))
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestExtensionSettings: the values `gemini extensions config` keeps in an extension's
// .env replace $VAR and ${VAR} in its manifest and its hooks, and reach the environment
// of the servers it starts (under the manifest's own env) and of its hooks; the listing names them without values; a
// sensitive setting Gemini CLI keeps in the keychain is reported, not guessed.
func TestExtensionSettings(t *testing.T) {
	gemini, cfg := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, gemini, map[string]string{
		"extensions/tracker/gemini-extension.json": `{"name": "tracker",
			"settings": [
				{"name": "Tracker URL", "description": "where", "envVar": "TRACKER_URL"},
				{"name": "Project", "description": "which", "envVar": "TRACKER_PROJECT"},
				{"name": "API key", "description": "secret", "envVar": "TRACKER_KEY", "sensitive": true}],
			"mcpServers": {
				"tracker": {"command": "tracker-mcp", "args": ["--url", "${TRACKER_URL}", "--project=$TRACKER_PROJECT", "--home=$HOME"],
					"env": {"TRACKER_PROJECT": "from-manifest"}},
				"remote": {"httpUrl": "${TRACKER_URL}/mcp"}}}`,
		"extensions/tracker/.env":             "# written by gemini extensions config\nTRACKER=wrong\nTRACKER_URL=https://tracker.example\nexport TRACKER_PROJECT=\"alpha beta\"\n\nnot a line\n",
		"extensions/tracker/hooks/hooks.json": `{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "check --url $TRACKER_URL"}]}]}}`,
	})
	l, err := LoadWith(cfg, "", Options{GeminiDir: gemini})
	if err != nil {
		t.Fatal(err)
	}
	srv := l.Settings.MCPServers["tracker"]
	if want := []string{"--url", "https://tracker.example", "--project=alpha beta", "--home=$HOME"}; !slices.Equal(srv.Args, want) {
		t.Errorf("args %q, want %q", srv.Args, want)
	}
	if srv.Env["TRACKER_URL"] != "https://tracker.example" || srv.Env["TRACKER_PROJECT"] != "from-manifest" {
		t.Errorf("env %v", srv.Env)
	}
	if u := l.Settings.MCPServers["remote"].HTTPURL; u != "https://tracker.example/mcp" {
		t.Errorf("remote URL %q", u)
	}
	ext := l.Settings.Extensions[0]
	if !slices.Equal(ext.Settings, []string{"TRACKER_URL", "TRACKER_PROJECT"}) {
		t.Errorf("settings listed %v", ext.Settings)
	}
	if w := strings.Join(ext.Warnings, "\n"); !strings.Contains(w, `"API key" (TRACKER_KEY) is kept in the system keychain`) {
		t.Errorf("warnings %q", w)
	}
	// Its hooks get them too: in their commands and in their environment.
	groups := l.Settings.Hooks.Events["BeforeTool"]
	if len(groups) != 1 || groups[0].Hooks[0].Command != "check --url https://tracker.example" ||
		groups[0].Env["TRACKER_URL"] != "https://tracker.example" || groups[0].Env["TRACKER_PROJECT"] != "alpha beta" {
		t.Errorf("the extension's hooks %+v", groups)
	}
}

// TestGeminiAgents: Gemini CLI's sub-agents (agents/*.md: front matter with name,
// description, tools and max_turns, the body their instructions) come from the user's
// folder, a trusted workspace's and an extension's; a remote agent or a file without a
// description is reported and skipped; an agent the settings name is the settings' own.
func TestGeminiAgents(t *testing.T) {
	gemini, root, cfg := t.TempDir(), t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, gemini, map[string]string{
		"agents/reviewer.md":                 "---\nname: reviewer\ndescription: Reviews a change.\ntools: [read_file, glob]\nmax_turns: 7\nmodel: gemini-2.5-pro\n---\n\nYou review changes.\n",
		"agents/remote.md":                   "---\nkind: remote\nname: far\ndescription: Far away.\nagent_card_url: https://example.com/card\n---\n",
		"agents/broken.md":                   "---\nname: broken\n---\nNo description.\n",
		"agents/mine.md":                     "---\nname: mine\ndescription: From the file.\n---\nFile.\n",
		"extensions/x/gemini-extension.json": `{"name": "x"}`,
		"extensions/x/agents/helper.md":      "---\nname: helper\ndescription: Helps.\n---\nHelp.\n",
	})
	testutil.WriteFiles(t, root, map[string]string{".gemini/agents/team.md": "---\nname: team\ndescription: The team's.\n---\nTeam.\n"})
	testutil.WriteFiles(t, cfg, map[string]string{"settings.json": `{"agents": {"mine": {"description": "From the settings."}}}`})
	for _, trusted := range []bool{false, true} {
		l, err := LoadWith(cfg, root, Options{GeminiDir: gemini, Trusted: trusted})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"helper", "mine", "reviewer"}
		if trusted {
			want = []string{"helper", "mine", "reviewer", "team"}
		}
		if got := slices.Sorted(maps.Keys(l.Settings.Agents)); !slices.Equal(got, want) {
			t.Errorf("trusted %t: agents %q, want %q", trusted, got, want)
		}
		r := l.Settings.Agents["reviewer"]
		if r.Description != "Reviews a change." || r.SystemPrompt != "You review changes." || !slices.Equal(r.Tools, []string{"read_file", "glob"}) || r.MaxTurns != 7 {
			t.Errorf("reviewer %+v", r)
		}
		if d := l.Settings.Agents["mine"].Description; d != "From the settings." {
			t.Errorf("mine: %q, want the settings' own", d)
		}
		ignored := strings.Join(l.Ignored, "\n")
		if !strings.Contains(ignored, `remote.md: not a sub-agent agentls runs: kind "remote"`) || !strings.Contains(ignored, "broken.md: not a sub-agent agentls runs: its front matter lacks") {
			t.Errorf("trusted %t: ignored %q", trusted, ignored)
		}
		if untrusted := strings.Contains(ignored, "sub-agents ignored"); untrusted == trusted {
			t.Errorf("trusted %t: the workspace's agents reported ignored: %t", trusted, untrusted)
		}
	}
	l, _ := LoadWith(cfg, root, Options{GeminiDir: gemini})
	if ext := l.Settings.Extensions[0]; !slices.Equal(ext.Agents, []string{"helper"}) {
		t.Errorf("extension x lists agents %q", ext.Agents)
	}
}
