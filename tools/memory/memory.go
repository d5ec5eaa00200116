// Package memory holds save_memory, the built-in tool with which the model keeps facts
// across sessions: each fact becomes a bullet under a "## Agent memories" section of
// AGENTS.md in the user's configuration directory, a file that later sessions load as
// context. Its name and parameters follow Gemini CLI 0.61.
package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentls/agentls/confirm"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

const (
	// Name is the tool's name, as Gemini CLI calls it.
	Name = "save_memory"
	// FileName is the file, in the configuration directory, that holds the memories.
	FileName = "AGENTS.md"
	// SectionHeader is the heading under which facts are kept.
	SectionHeader = "## Agent memories"
)

const description = `Saves one fact to your long-term memory, so that you know it in every later session with this user.

Use it:
- when the user asks you to remember something ("remember that I use tabs", "keep in mind that staging is at db2");
- when the user states a clear, lasting fact about themselves, their preferences or their environment that will make you more helpful next time.

Do not use it:
- for context that only matters in the current conversation or task (that is what the conversation is for);
- for long or rambling text: a fact is one short, self-contained statement;
- when you are unsure whether the user wants it kept: ask them first ("Should I remember that?").`

const parameters = `{
  "type": "object",
  "properties": {
    "fact": {
      "type": "string",
      "description": "The fact to remember: one clear, self-contained statement in natural language, such as \"The user prefers table-driven tests.\""
    }
  },
  "required": ["fact"],
  "additionalProperties": false
}`

// memoryFileMode is the mode of a new AGENTS.md: what a person tells an agent to remember
// is theirs alone.
const memoryFileMode = 0o600

// New returns the save_memory tool, which keeps facts in AGENTS.md in configDir (created
// when missing).
func New(configDir string) tools.Tool {
	t := &tool{}
	if configDir != "" {
		if abs, err := filepath.Abs(configDir); err == nil {
			configDir = abs
		}
		t.path = filepath.Join(configDir, FileName)
	}
	return t
}

type tool struct {
	path string // empty without a configuration directory
	// mu serialises the read-modify-write of the file, so that concurrent calls lose no
	// fact. Other processes writing the file at the same moment are not covered.
	mu sync.Mutex
}

func (t *tool) Info() tools.Info {
	return tools.Info{
		Name:        Name,
		DisplayName: "SaveMemory",
		Description: description,
		Kind:        tools.KindOther,
		Source:      tools.SourceBuiltin,
		Parameters:  json.RawMessage(parameters),
	}
}

func (t *tool) Build(args json.RawMessage) (tools.Invocation, error) {
	var p struct {
		Fact string `json:"fact"`
	}
	if err := tools.DecodeArgs(args, &p); err != nil {
		return nil, err
	}
	fact := sanitize(p.Fact)
	if fact == "" {
		return nil, tools.Errorf(tools.ErrInvalidParams, `parameter "fact" must be a non-empty statement`)
	}
	return &call{tool: t, fact: fact}, nil
}

// sanitize makes fact one line of a Markdown list: line breaks become spaces (a fact
// must not start a heading or a list item of its own), and a bullet the model put in
// front is dropped, since the file adds its own.
func sanitize(fact string) string {
	fact = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\u2028", " ", "\u2029", " ", "\u0085", " ").Replace(fact)
	fact = strings.TrimSpace(fact)
	for strings.HasPrefix(fact, "-") {
		rest := strings.TrimLeft(fact, "-")
		if r, _ := utf8.DecodeRuneInString(rest); rest != "" && !unicode.IsSpace(r) {
			break // "-5 °C is cold" is no bullet
		}
		fact = strings.TrimSpace(rest)
	}
	return fact
}

type call struct {
	tool *tool
	fact string
}

func (c *call) Describe() string {
	if c.tool.path == "" {
		return "Save memory"
	}
	return "Save memory in " + tildePath(c.tool.path)
}

func (c *call) Locations() []tools.Location {
	if c.tool.path == "" {
		return nil
	}
	return []tools.Location{{Path: c.tool.path}}
}

// Confirmation returns nil: saving a memory needs no consent, as in Gemini CLI.
func (c *call) Confirmation(context.Context) (*confirm.Details, error) { return nil, nil }

func (c *call) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	if c.tool.path == "" {
		return nil, tools.Errorf(tools.ErrExecutionFailed, "cannot save memories: no configuration directory is set")
	}
	c.tool.mu.Lock()
	defer c.tool.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := c.tool.path
	data, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, failed(path, err)
	}
	old, format, err := workspace.Decode(data)
	if err != nil {
		return nil, failed(path, fmt.Errorf("%s: %w", path, err))
	}
	if !exists {
		format = workspace.DefaultFormat
	}
	updated := addFact(old, c.fact)
	if err := workspace.WriteFileAtomic(path, format.Encode(updated, false), memoryFileMode); err != nil {
		return nil, failed(path, err)
	}
	var original *string
	if exists {
		original = &old
	}
	summary := `Saved memory: "` + c.fact + `"`
	return &tools.Result{
		Summary: summary,
		Output:  `Okay, I've remembered that: "` + c.fact + `"`,
		Display: summary,
		Diff: &tools.FileDiff{
			Path:            path,
			Diff:            workspace.UnifiedDiff(path, old, updated, !exists),
			OriginalContent: original,
			NewContent:      updated,
		},
	}, nil
}

func failed(path string, err error) *tools.Error {
	te := tools.FileError(err)
	te.Message = fmt.Sprintf("Failed to save memory in %s: %s", path, te.Message)
	return te
}

// addFact returns content (Markdown with LF line endings) with "- fact" appended to the
// SectionHeader section: at the end of the section's list, before any section that
// follows; in a new section at the end when content has none.
func addFact(content, fact string) string {
	item := "- " + fact + "\n"
	lines := strings.SplitAfter(content, "\n")
	header := -1
	for i, l := range lines {
		if strings.TrimRight(l, " \t\r\n") == SectionHeader {
			header = i
			break
		}
	}
	if header < 0 {
		var sep string
		switch {
		case content == "", strings.HasSuffix(content, "\n\n"):
		case strings.HasSuffix(content, "\n"):
			sep = "\n"
		default:
			sep = "\n\n"
		}
		return content + sep + SectionHeader + "\n" + item
	}
	// The section runs to the next heading of its level or above.
	end := len(lines)
	for i := header + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "# ") || strings.HasPrefix(lines[i], "## ") {
			end = i
			break
		}
	}
	// The fact goes after the section's last non-blank line, keeping the blank lines
	// that separate it from what follows.
	at := header + 1
	for i := end - 1; i > header; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			at = i + 1
			break
		}
	}
	var b strings.Builder
	b.Grow(len(content) + len(item) + 1)
	for _, l := range lines[:at] {
		b.WriteString(l)
	}
	if !strings.HasSuffix(lines[at-1], "\n") {
		b.WriteString("\n") // the section's last line ended the file without a newline
	}
	b.WriteString(item)
	for _, l := range lines[at:] {
		b.WriteString(l)
	}
	return b.String()
}

// tildePath shows path with the home directory as "~", as Gemini CLI does.
func tildePath(path string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return path
	}
	if rel, err := filepath.Rel(home, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.Join("~", rel)
	}
	return path
}
