// Package memory holds save_memory, the built-in tool with which the model keeps facts
// across sessions: each fact becomes a bullet under a "## Agent memories" section of a
// memory file that later sessions load as context. A fact goes, by default, to the
// project's memory file at the workspace root, and, when the model asks for scope
// "user", to the user's own file in the configuration directory, which every project
// reads. Either way the person is shown the fact and the file and asked first. Its name
// and its fact parameter follow Gemini CLI 0.61.
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

// memoryArgsSchema is the parameter schema of memoryArgs, generated once, when first asked for.
var memoryArgsSchema = tools.ParametersOnce[memoryArgs](false)

const (
	// Name is the tool's name, as Gemini CLI calls it.
	Name = "save_memory"
	// FileName is the memory file a fact goes to when its directory has none yet, and
	// the first looked for: sessions read AGENTS.md, then GEMINI.md, in each directory.
	FileName = "AGENTS.md"
	// GeminiFileName is Gemini CLI's memory file, written when a directory has it and
	// no FileName.
	GeminiFileName = "GEMINI.md"
	// SectionHeader is the heading under which facts are kept.
	SectionHeader = "## Agent memories"
	// GeminiSectionHeader is the heading under which Gemini CLI keeps facts; a file that
	// has it and not SectionHeader gets new facts there, rather than a second section.
	GeminiSectionHeader = "## Gemini Added Memories"
)

// The scopes of a fact.
const (
	// ScopeProject keeps a fact in the project's memory file, at the workspace root.
	ScopeProject = "project"
	// ScopeUser keeps a fact in the user's own memory file, read in every project.
	ScopeUser = "user"
)

const description = "Saves one short fact for later sessions, shown to the user first: scope project writes the project's " +
	"memory file (AGENTS.md, or its GEMINI.md), shared with the project; user, the user's own file, for facts about the user " +
	"they want kept everywhere. For what the user asks you to remember or a lasting fact; never for secrets or for this task only."

// userFileMode is the mode of a new memory file of the user's: what a person tells an
// agent to remember is theirs alone. A new project file gets the workspace's usual
// mode, since it belongs with the project's other files.
const userFileMode = 0o600

// maxFileBytes bounds the memory file read before a fact is added: a larger one is not
// a file of notes, and is refused rather than read whole.
const maxFileBytes = 4 << 20

// New returns the save_memory tool. Project facts go to the memory file at the first
// root of ws (through ws, so that the write stays inside the workspace and reaches the
// editor like any edit); user facts to the memory file in configDir, created when
// missing. Either may be absent (nil, ""): facts of that scope then fail to save.
func New(ws *workspace.Workspace, configDir string) tools.Tool {
	t := &tool{ws: ws}
	if configDir != "" {
		if abs, err := filepath.Abs(configDir); err == nil {
			configDir = abs
		}
		t.configDir = configDir
	}
	return t
}

type tool struct {
	ws        *workspace.Workspace
	configDir string
	// mu serialises the read-modify-write of the files, so that concurrent calls lose no
	// fact. Other writers are caught by the workspace's stale check for the project's
	// file; other processes writing the user's file at the same moment are not covered.
	mu sync.Mutex
}

func (t *tool) Info() tools.Info {
	return tools.Info{
		Name:        Name,
		DisplayName: "SaveMemory",
		Description: description,
		Kind:        tools.KindOther,
		Source:      tools.SourceBuiltin,
		Parameters:  memoryArgsSchema(),
	}
}

// memoryArgs are save_memory's parameters.
type memoryArgs struct {
	Fact  string `json:"fact" jsonschema:"e.g. \"The user prefers table-driven tests.\""`
	Scope string `json:"scope,omitempty" schema:"enum=project|user,default=\"project\""`
}

func (t *tool) Build(args json.RawMessage) (tools.Invocation, error) {
	var p memoryArgs
	if err := tools.DecodeArgs(args, &p); err != nil {
		return nil, err
	}
	fact := sanitize(p.Fact)
	if fact == "" {
		return nil, tools.Errorf(tools.ErrInvalidParams, `parameter "fact" must be a non-empty statement`)
	}
	switch p.Scope {
	case "":
		p.Scope = ScopeProject
	case ScopeProject, ScopeUser:
	default:
		return nil, tools.Errorf(tools.ErrInvalidParams, `parameter "scope" must be "project" or "user", not %q`, p.Scope)
	}
	return &call{tool: t, fact: fact, user: p.Scope == ScopeUser}, nil
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

// target is the memory file a call writes.
type target struct {
	path    string // absolute; for the project, resolved inside the workspace
	display string // as people are shown it: relative to the root, or with "~"
}

type call struct {
	tool *tool
	fact string
	user bool // scope "user"

	// mu guards target, which is decided once: the file the person is shown is the
	// file written, even if another memory file appears meanwhile.
	mu     sync.Mutex
	target *target
}

// file returns the call's memory file, deciding it on first use.
func (c *call) file() (target, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.target != nil {
		return *c.target, nil
	}
	var (
		tg  target
		err error
	)
	if c.user {
		tg, err = c.tool.userFile()
	} else {
		tg, err = c.tool.projectFile()
	}
	if err != nil {
		return target{}, err
	}
	c.target = &tg
	return tg, nil
}

// projectFile returns the memory file of the workspace's first root: the first of
// FileName and GeminiFileName that exists there (on disk or as a document open in the
// editor), else FileName. It must lie inside the workspace once symbolic links are
// followed: a project's AGENTS.md linking to ~/.bashrc must not make the model append
// to that.
func (t *tool) projectFile() (target, error) {
	if t.ws == nil {
		return target{}, tools.Errorf(tools.ErrExecutionFailed, "cannot save project memories: there is no workspace; use scope \"user\" if the user wants the fact kept for every project")
	}
	root := t.ws.Roots()[0]
	path := filepath.Join(root, chooseName(root, func(p string) bool { _, open := t.ws.Document(p); return open }))
	abs, err := t.ws.Resolve(path)
	if err != nil {
		return target{}, failed(path, fmt.Errorf("the project's memory file: %w", err))
	}
	return target{path: abs, display: t.ws.Rel(abs)}, nil
}

// userFile returns the memory file in the configuration directory, chosen as
// projectFile chooses.
func (t *tool) userFile() (target, error) {
	if t.configDir == "" {
		return target{}, tools.Errorf(tools.ErrExecutionFailed, "cannot save memories for the user: no configuration directory is set")
	}
	path := filepath.Join(t.configDir, chooseName(t.configDir, nil))
	return target{path: path, display: tildePath(path)}, nil
}

// chooseName returns the name of the memory file to write in dir: the first of FileName
// and GeminiFileName that exists (as a file, a link, or, when open is set, a document
// open in the editor), else FileName.
func chooseName(dir string, open func(path string) bool) string {
	for _, name := range [...]string{FileName, GeminiFileName} {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err == nil || open != nil && open(p) {
			return name
		}
	}
	return FileName
}

func (c *call) Describe() string {
	tg, err := c.file()
	if err != nil {
		return "Save memory"
	}
	return "Save memory in " + tg.display
}

func (c *call) Locations() []tools.Location {
	tg, err := c.file()
	if err != nil {
		return nil
	}
	return []tools.Location{{Path: tg.path}}
}

// Confirmation shows the fact and the file it goes to. A fact for the user's own file
// offers no "always": it reaches every later session in every project, so each one is
// the person's decision, asked in every mode (NoAlways). Front ends that cannot show
// Choices offer their usual answers, and the policy remembers no "always" among them.
func (c *call) Confirmation(context.Context) (*confirm.Details, error) {
	tg, err := c.file()
	if err != nil {
		return nil, err
	}
	if !c.user {
		return &confirm.Details{
			Type:  confirm.TypeInfo,
			Title: "Confirm Memory Save",
			Prompt: fmt.Sprintf("Remember this in the project's memory file, %s, which every session in this project reads:\n\n%s",
				tg.display, c.fact),
		}, nil
	}
	d := &confirm.Details{
		Type:  confirm.TypeInfo,
		Title: "Confirm Memory Save (all projects)",
		Prompt: fmt.Sprintf("Remember this in your own memory file, %s, which every session in every project reads:\n\n%s",
			tg.display, c.fact),
		Choices: []confirm.Choice{
			{Outcome: confirm.ProceedOnce, Label: "Save to my memory"},
			{Outcome: confirm.Cancel, Label: "Don't save"},
		},
		// Asked every time, in every mode, and never remembered.
		NoAlways: true,
	}
	return d, nil
}

func (c *call) Execute(ctx context.Context, _ io.Writer) (*tools.Result, error) {
	tg, err := c.file()
	if err != nil {
		return nil, err
	}
	c.tool.mu.Lock()
	defer c.tool.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var diff *tools.FileDiff
	if c.user {
		diff, err = c.saveUser(tg)
	} else {
		diff, err = c.saveProject(ctx, tg)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, failed(tg.display, err)
	}
	where := "the project's memory file, " + tg.display
	if c.user {
		where = "the user's memory file, " + tg.display
	}
	summary := `Saved memory: "` + c.fact + `"`
	return &tools.Result{
		Summary: summary,
		Output:  fmt.Sprintf(`Okay, I've remembered that in %s: "%s"`, where, c.fact),
		Display: summary + " in " + tg.display,
		Diff:    diff,
	}, nil
}

// saveProject adds the fact to the project's file through the workspace: the file as
// the editor holds it is what is added to, and the change is committed by the
// workspace's writer (atomically on disk, or as an edit in the editor), which refuses
// it if the file changed since it was read. The path is resolved again, so that a link
// made since the question was put cannot lead the write out of the workspace.
func (c *call) saveProject(ctx context.Context, tg target) (*tools.FileDiff, error) {
	ws := c.tool.ws
	abs, err := ws.Resolve(tg.path)
	if err != nil {
		return nil, err
	}
	cur, err := ws.ReadText(abs, maxFileBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cur = nil
	case err != nil:
		return nil, err
	}
	var old string
	if cur != nil {
		old = cur.Text
	}
	updated := addFact(old, c.fact)
	if err := ws.Commit(ctx, workspace.Change{Path: abs, Old: cur, New: updated, Label: "Save memory in " + tg.display}); err != nil {
		return nil, err
	}
	return fileDiff(abs, tg.display, old, updated, cur != nil), nil
}

// saveUser adds the fact to the user's file, atomically, keeping its encoding and line
// endings.
func (c *call) saveUser(tg target) (*tools.FileDiff, error) {
	data, err := os.ReadFile(tg.path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the limit of %d: %w", tg.path, len(data), maxFileBytes, workspace.ErrTooLarge)
	}
	old, format, err := workspace.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tg.path, err)
	}
	if !exists {
		format = workspace.DefaultFormat()
	}
	updated := addFact(old, c.fact)
	if err := workspace.WriteFileAtomic(tg.path, format.Encode(updated, false), userFileMode); err != nil {
		return nil, err
	}
	return fileDiff(tg.path, tg.path, old, updated, exists), nil
}

// fileDiff describes the change of the file at path, named name in the diff.
func fileDiff(path, name, old, updated string, existed bool) *tools.FileDiff {
	var original *string
	if existed {
		original = &old
	}
	return &tools.FileDiff{
		Path:            path,
		Diff:            workspace.UnifiedDiff(name, old, updated, !existed),
		OriginalContent: original,
		NewContent:      updated,
	}
}

// failed returns err, from saving in the file shown as name, as a typed tool error
// saying what failed.
func failed(name string, err error) *tools.Error {
	te := tools.FileError(err)
	return &tools.Error{Type: te.Type, Message: fmt.Sprintf("Failed to save memory in %s: %s", name, te.Message), Err: err}
}

// addFact returns content (Markdown with LF line endings) with "- fact" appended to the
// first section headed SectionHeader or GeminiSectionHeader: at the end of the section's
// list, before any section that follows; in a new SectionHeader section at the end when
// content has neither.
func addFact(content, fact string) string {
	item := "- " + fact + "\n"
	lines := strings.SplitAfter(content, "\n")
	header := -1
	for i, l := range lines {
		if h := strings.TrimRight(l, " \t\r\n"); h == SectionHeader || h == GeminiSectionHeader {
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

// Capabilities implements tools.Invocation: the call runs no command and takes no
// modified version.
func (*call) Capabilities() tools.Capabilities { return tools.Capabilities{} }
