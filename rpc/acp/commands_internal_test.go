package acp

import (
	"fmt"
	"testing"

	"github.com/agentls/agentls/session/toolbox"
	"github.com/agentls/agentls/tools/mcp"
)

func TestCommandArgs(t *testing.T) {
	p := toolbox.MCPPrompt{Name: "p", Arguments: []mcp.PromptArgument{{Name: "a", Required: true}, {Name: "b"}, {Name: "c"}}}
	tests := []struct {
		text string
		want map[string]string
	}{
		{"", map[string]string{}},
		{"one", map[string]string{"a": "one"}},
		{"one two three four", map[string]string{"a": "one", "b": "two", "c": "three four"}},
		{`--b="x y" one two`, map[string]string{"a": "one", "b": "x y", "c": "two"}},
		{`--c=z "quoted words" rest`, map[string]string{"a": "quoted words", "b": "rest", "c": "z"}},
	}
	for _, tt := range tests {
		if got := commandArgs(p, tt.text); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("commandArgs(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
