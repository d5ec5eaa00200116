package builtin_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/tools/builtin"
	"github.com/agentls/agentls/tools/web"
	"github.com/agentls/agentls/workspace"
)

// The parity suite: Gemini CLI's documented behaviour of each tool agentls shares with
// it, as cases. Each case cites the page of Gemini CLI's documentation
// (google-gemini/gemini-cli, docs/tools/*.md) and what it says; where agentls
// deliberately does otherwise, the case says so in differs and checks agentls's
// behaviour instead. A model prompted for Gemini CLI relies on these: a change that
// breaks one is a change of behaviour a model sees.

// parityCase is one documented behaviour of a shared tool.
type parityCase struct {
	tool string
	// doc is the page of Gemini CLI's docs, says what it documents.
	doc, says string
	// differs, when set, is how and why agentls deliberately differs; the case checks
	// agentls's behaviour.
	differs string
	files   map[string]string
	// args are the call's arguments; ROOT stands for the workspace root, URL for the
	// test web server.
	args string
	// consent is whether the call needs a person's approval (Confirmation not nil).
	consent bool
	// wantErr, when set, is the error type the call must fail with (at Build or
	// Execute).
	wantErr tools.ErrorType
	// check inspects the result; root is the workspace root.
	check func(t *testing.T, root string, res *tools.Result)
}

// contains checks that the output holds each of want.
func contains(want ...string) func(*testing.T, string, *tools.Result) {
	return func(t *testing.T, root string, res *tools.Result) {
		t.Helper()
		for _, w := range want {
			w = strings.ReplaceAll(w, "ROOT", root)
			if !strings.Contains(res.Output, w) {
				t.Errorf("output lacks %q:\n%s", w, res.Output)
			}
		}
	}
}

// fileIs checks the content of a file of the workspace after the call.
func fileIs(rel, want string) func(*testing.T, string, *tools.Result) {
	return func(t *testing.T, root string, _ *tools.Result) {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", rel, got, err, want)
		}
	}
}

func both(fs ...func(*testing.T, string, *tools.Result)) func(*testing.T, string, *tools.Result) {
	return func(t *testing.T, root string, res *tools.Result) {
		t.Helper()
		for _, f := range fs {
			f(t, root, res)
		}
	}
}

const (
	fileSystemDoc = "docs/tools/file-system.md"
	multiFileDoc  = "docs/tools/multi-file.md"
	shellDoc      = "docs/tools/shell.md"
	webFetchDoc   = "docs/tools/web-fetch.md"
	webSearchDoc  = "docs/tools/web-search.md"
	memoryDoc     = "docs/tools/memory.md"
	todosDoc      = "docs/tools/todos.md"
)

var parityCases = []parityCase{
	// list_directory
	{tool: "list_directory", doc: fileSystemDoc,
		says:  "lists the names of files and subdirectories directly within a directory; output `Directory listing for /path:` then `[DIR] subfolder1`, directories first, then alphabetically; no confirmation",
		files: map[string]string{"b.txt": "b", "a.txt": "a", "sub/c.txt": "c"}, args: `{"dir_path": "ROOT"}`,
		check: func(t *testing.T, root string, res *tools.Result) {
			contains("Directory listing for ROOT:", "[DIR] sub")(t, root, res)
			d, a, b := strings.Index(res.Output, "[DIR] sub"), strings.Index(res.Output, "a.txt"), strings.Index(res.Output, "b.txt")
			if !(d < a && a < b) || strings.Contains(res.Output, "c.txt") {
				t.Errorf("want sub/ first, then a.txt, b.txt, and nothing below sub:\n%s", res.Output)
			}
		}},
	{tool: "list_directory", doc: fileSystemDoc,
		says:  "`ignore`: a list of glob patterns to exclude from the listing",
		files: map[string]string{"keep.txt": "k", "drop.log": "d"}, args: `{"dir_path": "ROOT", "ignore": ["*.log"]}`,
		check: func(t *testing.T, root string, res *tools.Result) {
			contains("keep.txt")(t, root, res)
			if strings.Contains(res.Output, "drop.log") {
				t.Errorf("ignored entry listed:\n%s", res.Output)
			}
		}},
	{tool: "list_directory", doc: fileSystemDoc,
		says:    "paths are expected to be absolute or are resolved relative to the root directory",
		differs: "the parameter is `dir_path` (Gemini CLI's current schema), and a path outside the workspace is refused rather than read",
		args:    `{"dir_path": "/"}`, wantErr: tools.ErrPathNotInWorkspace},

	// read_file
	{tool: "read_file", doc: fileSystemDoc,
		says:  "for text files, returns the content; no confirmation",
		files: map[string]string{"a.txt": "one\ntwo\n"}, args: `{"file_path": "ROOT/a.txt"}`,
		check: func(t *testing.T, root string, res *tools.Result) {
			if res.Output != "one\ntwo\n" {
				t.Errorf("output %q, want the file", res.Output)
			}
		}},
	{tool: "read_file", doc: fileSystemDoc,
		says:    "can read specific line ranges, and says when the content is truncated (`[File content truncated: showing lines 1-100 of 500 total lines...]`)",
		differs: "the range is `start_line`/`end_line` (1-based, Gemini CLI's current schema) instead of `offset`/`limit`",
		files:   map[string]string{"a.txt": "1\n2\n3\n4\n5\n"}, args: `{"file_path": "ROOT/a.txt", "start_line": 2, "end_line": 3}`,
		check: contains("2\n3\n", "2-3", "5"),
	},
	{tool: "read_file", doc: fileSystemDoc,
		says:  "for image files returns the content as inlineData with its mimeType",
		files: map[string]string{"p.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"}, args: `{"file_path": "ROOT/p.png"}`,
		check: func(t *testing.T, _ string, res *tools.Result) {
			if len(res.Parts) != 1 || res.Parts[0].MIMEType != "image/png" {
				t.Errorf("parts %+v, want one image/png part", res.Parts)
			}
		}},
	{tool: "read_file", doc: fileSystemDoc,
		says:    "other binary files are skipped with a message like `Cannot display content of binary file`",
		differs: "the call fails as read_content_failure (\"it is a binary file, not text\"), so the model is not led to take the message for the file's content",
		files:   map[string]string{"d.bin": "\x00\x01\x02\x03binary\x00"}, args: `{"file_path": "ROOT/d.bin"}`,
		wantErr: tools.ErrReadContentFailure,
	},
	{tool: "read_file", doc: fileSystemDoc,
		says:    "paths are resolved relative to the root directory",
		differs: "a missing file is a typed error (file_not_found) the model can act on",
		args:    `{"file_path": "missing.txt"}`, wantErr: tools.ErrFileNotFound},

	// write_file
	{tool: "write_file", doc: fileSystemDoc,
		says:    "creates the file and any necessary parent directories; `Successfully created and wrote to new file: /path`; confirmation: yes, with a diff",
		args:    `{"file_path": "ROOT/new/dir/f.txt", "content": "hello\n"}`,
		consent: true,
		check:   both(contains("Successfully created and wrote to new file: ROOT/new/dir/f.txt"), fileIs("new/dir/f.txt", "hello\n")),
	},
	{tool: "write_file", doc: fileSystemDoc,
		says:  "if the file exists, it is overwritten: `Successfully overwrote file: /path`",
		files: map[string]string{"f.txt": "old\n"}, args: `{"file_path": "ROOT/f.txt", "content": "new\n"}`,
		consent: true,
		check:   both(contains("Successfully overwrote file: ROOT/f.txt"), fileIs("f.txt", "new\n")),
	},
	{tool: "write_file", doc: fileSystemDoc,
		says:    "writes the provided content to the file",
		differs: "content holding an omission placeholder (`// rest of code ...`) that the file lacks is refused, so that a model's shorthand does not delete real code (issue 16)",
		files:   map[string]string{"f.go": "package f\n\nfunc A() {}\n"},
		args:    `{"file_path": "ROOT/f.go", "content": "package f\n\n// rest of code ...\n"}`,
		wantErr: tools.ErrInvalidParams,
	},

	// glob
	{tool: "glob", doc: fileSystemDoc,
		says:  "returns absolute paths sorted by modification time, newest first: `Found N file(s) matching \"*.ts\" within src, sorted by modification time (newest first):`",
		files: map[string]string{"src/a.ts": "a", "src/b.ts": "b", "src/c.js": "c"}, args: `{"pattern": "*.ts", "dir_path": "ROOT/src"}`,
		check: func(t *testing.T, root string, res *tools.Result) {
			contains(`Found 2 file(s) matching "*.ts" within ROOT/src, sorted by modification time (newest first):`,
				filepath.Join(root, "src", "a.ts"), filepath.Join(root, "src", "b.ts"))(t, root, res)
			if strings.Contains(res.Output, "c.js") {
				t.Errorf("non-matching file listed:\n%s", res.Output)
			}
		}},
	{tool: "glob", doc: fileSystemDoc,
		says:  "`case_sensitive` defaults to false",
		files: map[string]string{"README.MD": "r"}, args: `{"pattern": "*.md", "dir_path": "ROOT"}`,
		check: contains("README.MD"),
	},
	{tool: "glob", doc: fileSystemDoc,
		says:    "ignores common nuisance directories like node_modules and .git by default; respects .gitignore",
		differs: "the result says how many files the ignore rules left out, so the model knows they exist (issue 16)",
		files:   map[string]string{"a.ts": "a", "node_modules/x/b.ts": "b", ".gitignore": "gen/\n", "gen/c.ts": "c"},
		args:    `{"pattern": "**/*.ts", "dir_path": "ROOT"}`,
		check: func(t *testing.T, root string, res *tools.Result) {
			contains(filepath.Join(root, "a.ts"), "2 directories that could hold more were left out")(t, root, res)
			if strings.Contains(res.Output, filepath.Join(root, "node_modules")) || strings.Contains(res.Output, filepath.Join(root, "gen", "c.ts")) {
				t.Errorf("ignored files listed:\n%s", res.Output)
			}
		}},

	// search_file_content / grep_search
	{tool: "grep_search", doc: fileSystemDoc,
		says:  "returns the matching lines with their file paths and line numbers: `Found 3 matches for pattern ...`, `File: src/utils.ts`, `L15: ...`",
		files: map[string]string{"src/u.ts": "export function myFunction() {\n}\nmyFunction.call();\n", "src/i.ts": "import { myFunction } from './u';\n"},
		args:  `{"pattern": "myFunction", "dir_path": "ROOT", "context": 0}`,
		check: contains("Found 3 matches", "File: src/u.ts", "L1: export function myFunction() {", "L3: myFunction.call();", "File: src/i.ts"),
	},
	{tool: "search_file_content", doc: fileSystemDoc,
		says:    "the tool name is search_file_content; `include` filters the files searched by a glob",
		differs: "the tool is grep_search (Gemini CLI's current name) and search_file_content is kept as an alias; the filter is `include_pattern`",
		files:   map[string]string{"a.js": "needle\n", "b.py": "needle\n"},
		args:    `{"pattern": "needle", "dir_path": "ROOT", "include_pattern": "*.js", "context": 0}`,
		check: func(t *testing.T, root string, res *tools.Result) {
			contains("Found 1 match", "a.js")(t, root, res)
			if strings.Contains(res.Output, "b.py") {
				t.Errorf("the include filter let b.py through:\n%s", res.Output)
			}
		}},
	{tool: "grep_search", doc: fileSystemDoc,
		says:    "searches for a regular expression",
		differs: "an invalid regular expression is refused with the parser's reason instead of matching nothing",
		args:    `{"pattern": "a(b", "dir_path": "ROOT"}`, wantErr: tools.ErrInvalidParams},

	// replace
	{tool: "replace", doc: fileSystemDoc,
		says:  "replaces exactly one occurrence by default: `Successfully modified file: /path (1 replacements).`; confirmation: yes, with a diff",
		files: map[string]string{"f.txt": "alpha\nbeta\n"}, args: `{"file_path": "ROOT/f.txt", "old_string": "beta", "new_string": "gamma"}`,
		consent: true,
		check:   both(contains("Successfully modified file: ROOT/f.txt"), fileIs("f.txt", "alpha\ngamma\n")),
	},
	{tool: "replace", doc: fileSystemDoc,
		says:  "fails if old_string is found multiple times and cannot be resolved to one (`expected 1 occurrences but found 2`)",
		files: map[string]string{"f.txt": "x\nx\n"}, args: `{"file_path": "ROOT/f.txt", "old_string": "x", "new_string": "y"}`,
		wantErr: tools.ErrEditOccurrenceCount,
	},
	{tool: "replace", doc: fileSystemDoc,
		says:  "`expected_replacements` replaces that many occurrences",
		files: map[string]string{"f.txt": "x\nx\n"}, args: `{"file_path": "ROOT/f.txt", "old_string": "x", "new_string": "y", "expected_replacements": 2}`,
		consent: true,
		check:   both(contains("(2 replacements)"), fileIs("f.txt", "y\ny\n")),
	},
	{tool: "replace", doc: fileSystemDoc,
		says:  "fails if old_string is not found (`Failed to edit, 0 occurrences found`)",
		files: map[string]string{"f.txt": "alpha\n"}, args: `{"file_path": "ROOT/f.txt", "old_string": "omega", "new_string": "x"}`,
		wantErr: tools.ErrEditNoOccurrence,
	},
	{tool: "replace", doc: fileSystemDoc,
		says:    "if old_string is empty and the file does not exist, creates it with new_string",
		args:    `{"file_path": "ROOT/n.txt", "old_string": "", "new_string": "fresh\n"}`,
		consent: true,
		check:   fileIs("n.txt", "fresh\n"),
	},
	{tool: "replace", doc: fileSystemDoc,
		says:  "fails if old_string is empty but the file already exists",
		files: map[string]string{"f.txt": "alpha\n"}, args: `{"file_path": "ROOT/f.txt", "old_string": "", "new_string": "x"}`,
		wantErr: tools.ErrAttemptToCreateExists,
	},
	{tool: "replace", doc: fileSystemDoc,
		says:    "fails if old_string is not empty but the file does not exist",
		differs: "the failure is the typed file_not_found",
		args:    `{"file_path": "ROOT/none.txt", "old_string": "a", "new_string": "b"}`, wantErr: tools.ErrFileNotFound},

	// read_many_files
	{tool: "read_many_files", doc: multiFileDoc,
		says:    "reads the text files matching the glob patterns and concatenates them, with a separator `--- {filePath} ---` between files",
		differs: "the patterns are given in `include` (the page's `paths` is not a parameter of agentls's schema)",
		files:   map[string]string{"a.md": "AAA\n", "b.md": "BBB\n", "c.txt": "CCC\n"}, args: `{"include": ["*.md"]}`,
		check: func(t *testing.T, root string, res *tools.Result) {
			contains("AAA", "BBB", "--- ")(t, root, res)
			if strings.Contains(res.Output, "CCC") {
				t.Errorf("a file not included was read:\n%s", res.Output)
			}
		}},
	{tool: "read_many_files", doc: multiFileDoc,
		says:  "`exclude` globs leave files out",
		files: map[string]string{"a.md": "AAA\n", "b.md": "BBB\n"}, args: `{"include": ["*.md"], "exclude": ["b.md"]}`,
		check: func(t *testing.T, root string, res *tools.Result) {
			contains("AAA")(t, root, res)
			if strings.Contains(res.Output, "BBB") {
				t.Errorf("an excluded file was read:\n%s", res.Output)
			}
		}},

	// run_shell_command
	{tool: "run_shell_command", doc: shellDoc,
		says:    "executes the command with `bash -c` and returns its output and exit code; it needs confirmation",
		differs: "the output reaches the model marked as untrusted context (issue 16)",
		args:    `{"command": "echo hello; exit 3"}`, consent: true,
		check: contains("hello", "3", "<untrusted_context>"),
	},
	{tool: "run_shell_command", doc: shellDoc,
		says:    "`directory` (relative to the project root) is where the command runs",
		differs: "the parameter is `dir_path`, Gemini CLI's current name",
		files:   map[string]string{"sub/x.txt": "x"}, args: `{"command": "ls", "dir_path": "sub"}`, consent: true,
		check: contains("x.txt"),
	},
	{tool: "run_shell_command", doc: shellDoc,
		says:    "sets GEMINI_CLI=1 in the subprocess's environment, so that scripts can tell they run under the agent; returns `Command`, `Directory`, `Exit Code`, `Signal` and `Background PIDs`",
		differs: "the variable is AGENTLS=1 (agentls is not Gemini CLI; a script checking GEMINI_CLI would be misled), and PAGER=cat keeps pagers from waiting",
		args:    `{"command": "echo \"agentls=$AGENTLS pager=$PAGER\""}`, consent: true,
		check: contains("agentls=1 pager=cat", "Command: ", "Directory: ", "Exit Code: 0", "Signal: ", "Background PIDs: "),
	},

	// web_fetch
	{tool: "web_fetch", doc: webFetchDoc,
		says:    "processes the URLs (up to 20) embedded in `prompt`; asks for confirmation before fetching any URL",
		differs: "agentls fetches the pages itself and gives the model their text, marked as untrusted context, rather than a response the Gemini API generated from them; private addresses need web.allowPrivateAddresses (set for this loopback test)",
		args:    `{"prompt": "Summarise URL/page"}`, consent: true,
		check: contains("parity page text", "<untrusted_context>"),
	},
	{tool: "web_fetch", doc: webFetchDoc,
		says:    "the prompt must contain at least one URL starting with http:// or https://",
		differs: "a prompt without a URL is refused as invalid parameters",
		args:    `{"prompt": "no address here"}`, wantErr: tools.ErrInvalidParams},

	{tool: "web_fetch", doc: webFetchDoc,
		says:    "processes up to 20 URLs in one call",
		differs: "a prompt naming more is refused with how to split it, rather than fetching the first 20 only",
		args:    manyURLs(21), wantErr: tools.ErrInvalidParams},

	// google_web_search
	{tool: "google_web_search", doc: webSearchDoc,
		says:    "returns a generated summary based on search results, with source URIs and titles as citations",
		differs: "agentls asks before searching, since the query leaves the machine (the page documents no confirmation)",
		args:    `{"query": "parity"}`, consent: true,
		check: contains("searched: parity", "https://example.com/source"),
	},

	// save_memory
	{tool: "save_memory", doc: memoryDoc,
		says:    "appends `fact` to the user's `~/.gemini/GEMINI.md`, under a `## Gemini Added Memories` section",
		differs: "a `scope` chooses the file: `project` writes the workspace root's AGENTS.md (or its GEMINI.md, where it exists), under `## Agent memories` unless the file already has Gemini CLI's section, which then gets the fact; agentls asks before writing a file every later session loads",
		args:    `{"fact": "the build uses make", "scope": "project"}`, consent: true,
		check: func(t *testing.T, root string, res *tools.Result) {
			got, err := os.ReadFile(filepath.Join(root, "AGENTS.md"))
			if err != nil || !strings.Contains(string(got), "## Agent memories\n- the build uses make\n") {
				t.Errorf("AGENTS.md = %q (%v)", got, err)
			}
		}},

	// write_todos
	{tool: "write_todos", doc: todosDoc,
		says:  "replaces the whole todo list; statuses pending, in_progress, completed, cancelled; no confirmation",
		args:  `{"todos": [{"description": "one", "status": "completed"}, {"description": "two", "status": "in_progress"}, {"description": "three", "status": "pending"}]}`,
		check: contains("one", "two", "three"),
	},
	{tool: "write_todos", doc: todosDoc,
		says:    "only one task may be in_progress at a time",
		differs: "two in_progress are refused with the rule, rather than accepted",
		args:    `{"todos": [{"description": "one", "status": "in_progress"}, {"description": "two", "status": "in_progress"}]}`,
		wantErr: tools.ErrInvalidParams,
	},
	{tool: "write_todos", doc: todosDoc,
		says:    "the statuses are pending, in_progress, completed and cancelled",
		differs: "blocked is accepted too (issue 16)",
		args:    `{"todos": [{"description": "wait for review", "status": "blocked"}]}`,
		check:   contains("wait for review"),
	},
}

// manyURLs returns web_fetch arguments whose prompt names n distinct URLs.
func manyURLs(n int) string {
	var b strings.Builder
	b.WriteString(`{"prompt": "Compare`)
	for i := range n {
		fmt.Fprintf(&b, " https://example.com/%d", i)
	}
	b.WriteString(`"}`)
	return b.String()
}

// paritySearch answers google_web_search as Gemini's grounding would, on loopback.
type paritySearch struct{}

func (paritySearch) Search(_ context.Context, q string) (string, []web.Source, error) {
	return "searched: " + q, []web.Source{{Title: "Source", URI: "https://example.com/source"}}, nil
}

func TestParity(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "parity page text")
	}))
	defer page.Close()
	for i, c := range parityCases {
		if c.doc == "" || c.says == "" {
			t.Fatalf("case %d (%s) cites no documented behaviour", i, c.tool)
		}
		t.Run(fmt.Sprintf("%s/%d", c.tool, i), func(t *testing.T) {
			_, root := testutil.Workspace(t, c.files)
			ws, err := workspace.New(root)
			if err != nil {
				t.Fatal(err)
			}
			set := builtin.New(builtin.Options{Workspace: ws, ConfigDir: t.TempDir(),
				Web: web.Options{Searcher: paritySearch{}, AllowPrivate: true}})
			t.Cleanup(func() { set.Close() })
			reg := tools.NewRegistry(nil, tools.Filter{})
			for _, tl := range set.Tools() {
				reg.Register(tl)
			}
			tool, ok := reg.Get(c.tool)
			if !ok {
				t.Fatalf("no tool %s", c.tool)
			}
			args := strings.NewReplacer("ROOT", root, "URL", page.URL).Replace(c.args)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			inv, err := testutil.Build(t, tool, args)
			if err == nil {
				d, cerr := inv.Confirmation(ctx)
				err = cerr
				if err == nil && (d != nil) != c.consent && c.wantErr == "" {
					t.Errorf("consent needed: %v, want %v (%s)", d != nil, c.consent, c.says)
				}
			}
			var res *tools.Result
			if err == nil {
				res, err = inv.Execute(ctx, io.Discard)
			}
			if c.wantErr != "" {
				if got := testutil.ErrorType(err); got != c.wantErr {
					t.Fatalf("%s %s: error %v (%s), want %s\nGemini CLI (%s): %s\nagentls: %s", c.tool, args, err, got, c.wantErr, c.doc, c.says, c.differs)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s %s: %v\nGemini CLI (%s): %s", c.tool, args, err, c.doc, c.says)
			}
			if c.check != nil {
				c.check(t, root, res)
			}
		})
	}
}

// TestParityMemoryGeminiSection: Gemini CLI's memory section (docs/tools/memory.md: facts
// go under `## Gemini Added Memories` in GEMINI.md) is where a fact goes when the file
// already has it, so that a workspace shared with Gemini CLI keeps one list.
func TestParityMemoryGeminiSection(t *testing.T) {
	_, root := testutil.Workspace(t, map[string]string{"GEMINI.md": "# Project\n\n## Gemini Added Memories\n- first\n"})
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	set := builtin.New(builtin.Options{Workspace: ws, ConfigDir: t.TempDir()})
	t.Cleanup(func() { set.Close() })
	for _, tool := range set.Tools() {
		if tool.Info().Name != "save_memory" {
			continue
		}
		if _, err := testutil.Call(t.Context(), t, tool, `{"fact": "second", "scope": "project"}`, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(filepath.Join(root, "GEMINI.md"))
	if err != nil || !strings.Contains(string(got), "## Gemini Added Memories\n- first\n- second\n") || strings.Contains(string(got), "## Agent memories") {
		t.Errorf("GEMINI.md = %q (%v)", got, err)
	}
}
