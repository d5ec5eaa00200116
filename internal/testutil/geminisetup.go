package testutil

import (
	"fmt"
	"strings"
	"testing"
)

// GeminiSetup writes a Gemini CLI user's setup under home/.gemini: 50 custom commands
// (half of them in folders), 20 skills and 5 extensions, each extension with a command,
// a skill, a context file and excluded tools. It is what the start-up benchmarks read.
func GeminiSetup(tb testing.TB, home string) {
	tb.Helper()
	files := map[string]string{}
	for i := range 50 {
		name := fmt.Sprintf(".gemini/commands/cmd%02d.toml", i)
		if i%2 == 1 {
			name = fmt.Sprintf(".gemini/commands/group%d/cmd%02d.toml", i%5, i)
		}
		files[name] = fmt.Sprintf("description = \"Command %d\"\nprompt = \"\"\"\nDo task %d with {{args}}.\n@{README.md}\n\"\"\"\n", i, i)
	}
	for i := range 20 {
		files[fmt.Sprintf(".gemini/skills/skill%02d/SKILL.md", i)] = fmt.Sprintf("---\nname: skill%02d\ndescription: Skill %d: use it when the task is task %d.\n---\n\n# Steps\n\n%s", i, i, i, strings.Repeat("A step of the skill.\n", 40))
	}
	for i := range 5 {
		dir := fmt.Sprintf(".gemini/extensions/ext%d/", i)
		files[dir+"gemini-extension.json"] = fmt.Sprintf(`{"name": "ext%d", "version": "1.0.0", "excludeTools": ["web_fetch"], "contextFileName": "GEMINI.md"}`, i)
		files[dir+"GEMINI.md"] = "Context of the extension.\n"
		files[dir+fmt.Sprintf("commands/ext%d.toml", i)] = `prompt = "Extension command."`
		files[dir+"skills/s/SKILL.md"] = fmt.Sprintf("---\nname: ext-skill%d\ndescription: An extension's skill.\n---\nBody.\n", i)
	}
	WriteFiles(tb, home, files)
}
