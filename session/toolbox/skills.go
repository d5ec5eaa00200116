package toolbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
)

// SkillToolName is the tool that loads an Agent Skill's instructions, Gemini CLI's.
const SkillToolName = "activate_skill"

// maxSkillFiles bounds the files of a skill's folder its activation lists.
const maxSkillFiles = 200

// skillTool is activate_skill: the model sees each skill's name and description in its
// declaration, and loads a skill's instructions (the body of its SKILL.md) and the list
// of the skill's files by calling it. The registry has it only when there are skills.
type skillTool struct {
	skills []settings.Skill
}

func (t *skillTool) Info() tools.Info {
	var b strings.Builder
	b.WriteString("Activates an Agent Skill by name and returns its instructions inside <activated_skill> tags, " +
		"with the files of its folder (read them with the file tools when the instructions point to them). " +
		"Call it when the task matches a skill's description, and then follow the skill's instructions. Skills:\n")
	names := make([]string, len(t.skills))
	for i, s := range t.skills {
		names[i] = s.Name
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, strings.Join(strings.Fields(s.Description), " "))
	}
	params, _ := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name": map[string]any{"type": "string", "enum": names, "description": "The name of the skill to activate."},
		},
		"required": []string{"name"},
	})
	return tools.Info{
		Name:        SkillToolName,
		DisplayName: "Activate Skill",
		Description: strings.TrimSuffix(b.String(), "\n"),
		// It reads the user's own instructions and changes nothing, as reading a memory
		// file does: it asks no one.
		Kind:       tools.KindRead,
		Source:     tools.SourceBuiltin,
		Parameters: params,
		Markdown:   true,
		Idempotent: true,
	}
}

func (t *skillTool) Build(args json.RawMessage) (tools.Invocation, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(t.skills, func(s settings.Skill) bool { return s.Name == a.Name })
	if i < 0 {
		names := make([]string, len(t.skills))
		for j, s := range t.skills {
			names[j] = s.Name
		}
		return nil, tools.Errorf(tools.ErrInvalidParams, "Skill %q not found. Available skills are: %s", a.Name, strings.Join(names, ", "))
	}
	return &skillCall{skill: t.skills[i]}, nil
}

// skillCall is one activate_skill call.
type skillCall struct {
	tools.NoCapabilities
	skill settings.Skill
}

func (c *skillCall) Describe() string {
	return fmt.Sprintf("%q: %s", c.skill.Name, c.skill.Description)
}

func (c *skillCall) Locations() []tools.Location {
	return []tools.Location{{Path: c.skill.File}}
}

func (c *skillCall) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

func (c *skillCall) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	dir := c.skill.Dir()
	files := skillFiles(ctx, dir)
	var b strings.Builder
	fmt.Fprintf(&b, "<activated_skill name=%q>\n<instructions>\n%s\n</instructions>\n\n<available_resources>\n", c.skill.Name, c.skill.Body)
	fmt.Fprintf(&b, "%s%c\n", dir, filepath.Separator)
	for _, f := range files {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	b.WriteString("</available_resources>\n</activated_skill>")
	return &tools.Result{
		Summary: fmt.Sprintf("Skill %s activated (%d files in %s)", c.skill.Name, len(files), dir),
		Output:  b.String(),
		Display: fmt.Sprintf("Skill **%s** activated. Resources in `%s`:\n\n%s", c.skill.Name, dir, strings.Join(files, "\n")),
	}, nil
}

// skillFiles lists the files of a skill's folder, relative to it, leaving out version
// control data and dependency trees.
func skillFiles(ctx context.Context, dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if len(out) == maxSkillFiles {
			out = append(out, "…")
			return fs.SkipAll
		}
		if rel, err := filepath.Rel(dir, p); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}
