package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
	"github.com/agentls/agentls/tools"
)

func TestAddFact(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"empty file", "", "## Agent memories\n- F\n"},
		{"file without the section", "# Notes\n\nBe brief.\n",
			"# Notes\n\nBe brief.\n\n## Agent memories\n- F\n"},
		{"file without the section nor final newline", "# Notes",
			"# Notes\n\n## Agent memories\n- F\n"},
		{"file ending in a blank line", "# Notes\n\n", "# Notes\n\n## Agent memories\n- F\n"},
		{"section at the end", "# Notes\n\n## Agent memories\n- A\n",
			"# Notes\n\n## Agent memories\n- A\n- F\n"},
		{"section at the end without final newline", "## Agent memories\n- A",
			"## Agent memories\n- A\n- F\n"},
		{"empty section", "## Agent memories\n", "## Agent memories\n- F\n"},
		{"header without newline", "## Agent memories", "## Agent memories\n- F\n"},
		{"sections follow", "## Agent memories\n- A\n\n## Other\n- x\n",
			"## Agent memories\n- A\n- F\n\n## Other\n- x\n"},
		{"top-level heading follows", "## Agent memories\n- A\n# Next\n",
			"## Agent memories\n- A\n- F\n# Next\n"},
		{"subsection belongs to the section", "## Agent memories\n- A\n### Sub\n- B\n\n## Other\n",
			"## Agent memories\n- A\n### Sub\n- B\n- F\n\n## Other\n"},
		{"empty section before another", "## Agent memories\n\n## Other\n",
			"## Agent memories\n- F\n\n## Other\n"},
		{"header mentioned in text is not the section", "See ## Agent memories below.\n",
			"See ## Agent memories below.\n\n## Agent memories\n- F\n"},
	}
	for _, tt := range tests {
		if got := addFact(tt.content, "F"); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestSaveMemory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config", "agentls") // not there yet
	tool := New(dir)
	ctx := context.Background()
	path := filepath.Join(dir, FileName)

	res, err := testutil.Call(ctx, t, tool, `{"fact": "The user prefers tabs."}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary != `Saved memory: "The user prefers tabs."` {
		t.Errorf("Summary = %q", res.Summary)
	}
	if !strings.Contains(res.Output, "The user prefers tabs.") {
		t.Errorf("Output = %q", res.Output)
	}
	if res.Diff == nil || res.Diff.Path != path || res.Diff.OriginalContent != nil || !strings.Contains(res.Diff.Diff, "+- The user prefers tabs.") {
		t.Errorf("Diff = %+v", res.Diff)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new memory file mode %v, want 0600", fi.Mode().Perm())
	}

	// Facts are sanitised to one bullet line each.
	for _, args := range []string{
		`{"fact": "Line one\nline two\r\nline three"}`,
		`{"fact": "  - already a bullet  "}`,
		`{"fact": "-5 °C counts as cold"}`,
	} {
		if _, err := testutil.Call(ctx, t, tool, args, nil); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
	}
	want := "## Agent memories\n" +
		"- The user prefers tabs.\n" +
		"- Line one line two line three\n" +
		"- already a bullet\n" +
		"- -5 °C counts as cold\n"
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("AGENTS.md:\n%s\nwant:\n%s", got, want)
	}

	// A section the user added after ours stays after it.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n## My own notes\nKeep this.\n")
	f.Close()
	res, err = testutil.Call(ctx, t, tool, `{"fact": "Last one."}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !strings.HasSuffix(string(got), "- -5 °C counts as cold\n- Last one.\n\n## My own notes\nKeep this.\n") {
		t.Errorf("AGENTS.md:\n%s", got)
	}
	if res.Diff.OriginalContent == nil {
		t.Error("Diff of an existing file has no original content")
	}
}

func TestSaveMemoryKeepsFormat(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte("\xEF\xBB\xBF# Mine\r\n\r\n## Agent memories\r\n- A\r\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := testutil.Call(context.Background(), t, New(dir), `{"fact": "B"}`, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "\xEF\xBB\xBF# Mine\r\n\r\n## Agent memories\r\n- A\r\n- B\r\n" {
		t.Errorf("AGENTS.md = %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
}

func TestSaveMemoryBadInput(t *testing.T) {
	dir := t.TempDir()
	tool := New(dir)
	for _, args := range []string{
		`{}`,
		`{"fact": ""}`,
		`{"fact": "   \n\t "}`,
		`{"fact": "-"}`,
		`{"fact": 42}`,
		`{"fact": "x", "scope": "global"}`,
		`[]`,
	} {
		_, err := testutil.Call(context.Background(), t, tool, args, nil)
		if got := testutil.ErrorType(err); got != tools.ErrInvalidParams {
			t.Errorf("%s: error %v (type %q), want %s", args, err, got, tools.ErrInvalidParams)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused calls wrote %d files", len(entries))
	}
}

func TestSaveMemoryErrors(t *testing.T) {
	// The memory file is a directory.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, FileName), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := testutil.Call(context.Background(), t, New(dir), `{"fact": "x"}`, nil)
	if got := testutil.ErrorType(err); got != tools.ErrTargetIsDirectory {
		t.Errorf("memory file is a directory: %v (type %q)", err, got)
	}

	// A binary memory file is not overwritten.
	dir = t.TempDir()
	path := filepath.Join(dir, FileName)
	os.WriteFile(path, []byte("\x00\x01binary"), 0o644)
	_, err = testutil.Call(context.Background(), t, New(dir), `{"fact": "x"}`, nil)
	if got := testutil.ErrorType(err); got != tools.ErrReadContentFailure {
		t.Errorf("binary memory file: %v (type %q)", err, got)
	}
	if got, _ := os.ReadFile(path); string(got) != "\x00\x01binary" {
		t.Errorf("binary memory file overwritten: %q", got)
	}

	// No configuration directory.
	_, err = testutil.Call(context.Background(), t, New(""), `{"fact": "x"}`, nil)
	if got := testutil.ErrorType(err); got != tools.ErrExecutionFailed {
		t.Errorf("no configuration directory: %v (type %q)", err, got)
	}
}

func TestSaveMemoryConcurrent(t *testing.T) {
	dir := t.TempDir()
	tool := New(dir)
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			args, _ := json.Marshal(map[string]string{"fact": fmt.Sprintf("fact %02d", i)})
			if _, err := testutil.Call(context.Background(), t, tool, string(args), nil); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if !strings.Contains(string(got), fmt.Sprintf("- fact %02d\n", i)) {
			t.Errorf("fact %02d lost", i)
		}
	}
	if c := strings.Count(string(got), SectionHeader); c != 1 {
		t.Errorf("%d section headers", c)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*agentls-*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %q", leftovers)
	}
}

func TestInvocation(t *testing.T) {
	dir := t.TempDir()
	tool := New(dir)
	info := tool.Info()
	if info.Name != "save_memory" || info.Kind != tools.KindOther || !strings.Contains(info.Description, "Do not use it") {
		t.Errorf("Info = %+v", info)
	}
	inv, err := testutil.Build(t, tool, `{"fact": "x"}`)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := inv.Confirmation(context.Background()); d != nil || err != nil {
		t.Errorf("Confirmation = %v, %v; want none", d, err)
	}
	if locs := inv.Locations(); len(locs) != 1 || locs[0].Path != filepath.Join(dir, FileName) {
		t.Errorf("Locations = %+v", locs)
	}
	if d := inv.Describe(); !strings.HasSuffix(d, FileName) {
		t.Errorf("Describe = %q", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := inv.Execute(ctx, nil); err == nil {
		t.Error("Execute with a cancelled context succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err == nil {
		t.Error("a cancelled call wrote")
	}
}
