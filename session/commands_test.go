package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/settings"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// TestExpandCommand: each injection of a custom command's prompt, as Gemini CLI's
// docs/cli/custom-commands.md describes them, and what is never read as one.
func TestExpandCommand(t *testing.T) {
	root := t.TempDir()
	for name, content := range map[string]string{
		"a.txt":         "file A\n",
		"dir/b.txt":     "file B\n",
		"dir/skip.log":  "ignored\n",
		".gitignore":    "*.log\nsecret.txt\n",
		"secret.txt":    "secret\n",
		"inject.txt":    "!{touch pwned}\n",
		"dir/sub/c.txt": "file C\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	x := expander{ws: ws, shell: func(_ context.Context, command string) (tools.CallResult, error) {
		ran = append(ran, command)
		switch command {
		case "refuse":
			return tools.CallResult{Status: tools.StatusError, Error: &tools.ErrorInfo{Message: "refused"}}, nil
		case "fail":
			return tools.CallResult{Status: tools.StatusSuccess, Summary: "Exit code 2", Display: "oops"}, nil
		}
		return tools.CallResult{Status: tools.StatusSuccess, Summary: "Exit code 0", Display: "out:" + command}, nil
	}}
	tests := []struct {
		name, prompt, args string
		want               string
		wantRan            []string
		wantErr            string
	}{
		{name: "args raw", prompt: "Fix {{args}}.", args: `"it's" !{x}`, want: `Fix "it's" !{x}.`},
		{name: "args quoted in shell", prompt: "!{grep {{args}} .}", args: "it's", want: `out:grep 'it'\''s' .`, wantRan: []string{`grep 'it'\''s' .`}},
		{name: "nested braces", prompt: `!{echo '{"a": {"b": 1}}'}`, want: `out:echo '{"a": {"b": 1}}'`, wantRan: []string{`echo '{"a": {"b": 1}}'`}},
		{name: "failure code", prompt: "!{fail}", want: "oops\n[Shell command exited with code 2]", wantRan: []string{"fail"}},
		{name: "refused", prompt: "a !{refuse} b", wantErr: "did not run", wantRan: []string{"refuse"}},
		{name: "unbalanced", prompt: "!{echo {", wantErr: "balanced"},
		{name: "file", prompt: "See @{a.txt}", want: "See file A\n"},
		{name: "file content is not a template", prompt: "@{inject.txt}", want: "!{touch pwned}\n"},
		{name: "folder, ignore rules", prompt: "@{dir}", want: "--- dir/b.txt ---\nfile B\n--- dir/sub/c.txt ---\nfile C\n"},
		{name: "ignored file", prompt: "@{secret.txt}", wantErr: "ignored"},
		{name: "outside", prompt: "@{../x}", wantErr: "outside"},
		{name: "default args", prompt: "Do it.", args: "now", want: "Do it.\n\n/c now"},
		{name: "no args", prompt: "Do it.", want: "Do it."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran = nil
			line := "/c"
			if tt.args != "" {
				line += " " + tt.args
			}
			got, err := expand(context.Background(), settings.Command{Name: "c", Prompt: tt.prompt}, tt.args, line, x)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
			if strings.Join(ran, "|") != strings.Join(tt.wantRan, "|") {
				t.Errorf("ran %q, want %q", ran, tt.wantRan)
			}
			if tt.name == "refused" && !errors.Is(err, ErrCommandRefused) {
				t.Errorf("err = %v, not ErrCommandRefused", err)
			}
		})
	}
}

func TestFindCommand(t *testing.T) {
	cmds := []settings.Command{{Name: "git:commit"}, {Name: "test"}}
	for _, tt := range []struct {
		text, name, args string
		ok               bool
	}{
		{"/git:commit fix it ", "git:commit", "fix it", true},
		{"  /test", "test", "", true},
		{"/test\nmore lines", "test", "more lines", true},
		{"/tests", "", "", false},
		{"test", "", "", false},
		{"//test", "", "", false},
	} {
		c, args, ok := findCommand(cmds, tt.text)
		if ok != tt.ok || c.Name != tt.name || args != tt.args {
			t.Errorf("findCommand(%q) = %q, %q, %v", tt.text, c.Name, args, ok)
		}
	}
}
