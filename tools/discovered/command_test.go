package discovered

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	t.Setenv("AGENTLS_TEST_DIR", "/opt/my tools")
	t.Setenv("HOME", "/home/someone")
	t.Setenv("IFS", ":")
	tests := []struct {
		line string
		want []string
	}{
		{`discover`, []string{"discover"}},
		{`  python3   tools.py  discover  `, []string{"python3", "tools.py", "discover"}},
		{`"my tool" --flag 'a b'`, []string{"my tool", "--flag", "a b"}},
		{`a\ b "c \"d\"" 'e\f' $'g\th'`, []string{"a b", `c "d"`, `e\f`, "g\th"}},
		{`x "" ''`, []string{"x", "", ""}},
		{`"$AGENTLS_TEST_DIR/bin/x" ${AGENTLS_TEST_DIR}`, []string{"/opt/my tools/bin/x", "/opt/my", "tools"}},
		{`~/bin/x`, []string{"/home/someone/bin/x"}},
		{`x *.go [a] ?`, []string{"x", "*.go", "[a]", "?"}},
		{"x # a comment", []string{"x"}},
		{"x \\\n y", []string{"x", "y"}},
		{`x a=b`, []string{"x", "a=b"}},
		{`env A=b x`, []string{"env", "A=b", "x"}},
	}
	for _, tt := range tests {
		got, err := splitCommand(tt.line)
		if err != nil {
			t.Errorf("splitCommand(%q): %v", tt.line, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitCommand(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestSplitCommandRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want string
	}{
		{``, "empty"},
		{`   `, "empty"},
		{`# only a comment`, "empty"},
		{`""`, "empty"},
		{`a | b`, "pipes, redirections and command lists"},
		{`a; b`, "command lists"},
		{`a && b`, "command lists"},
		{`a > out`, "redirections"},
		{`a &`, "not supported"},
		{`a "unterminated`, "cannot split"},
		{`x $(rm -rf ~)`, "command substitution"},
		{"x `id`", "command substitution"},
		{`x "$(id)"`, "command substitution"},
		{`x ${y:-$(id)}`, "command substitution"},
		{`x <(id)`, "process substitution"},
		{`FOO=1 discover`, "variable assignment FOO"},
		{`FOO="a b" discover`, "variable assignment FOO"},
		{"x\x00y", "NUL"},
	}
	for _, tt := range tests {
		got, err := splitCommand(tt.line)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want an error mentioning %q", tt.line, got, err, tt.want)
		}
	}
}
