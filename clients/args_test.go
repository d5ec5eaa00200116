package clients

import (
	"testing"

	"google.golang.org/genai"
)

// TestFunctionCallArgsAsWritten checks that a Gemini function call's arguments keep
// &, < and > as they are: policy rules' argsPattern match these bytes (as Gemini CLI's
// match JSON.stringify's), and json.Marshal's HTML escaping made a deny rule for
// "a && b" miss every call.
func TestFunctionCallArgsAsWritten(t *testing.T) {
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"command": "a && b <c> d"}, `{"command":"a && b <c> d"}`},
		{map[string]any{"z": 1, "a": "\u2028"}, `{"a":"\u2028","z":1}`},
		{nil, `{}`},
	}
	for _, tc := range cases {
		p := fromGenai(&genai.Part{FunctionCall: &genai.FunctionCall{Name: "run_shell_command", Args: tc.args}})
		if got := string(p.FunctionCall.Args); got != tc.want {
			t.Errorf("args %v: %s, want %s", tc.args, got, tc.want)
		}
	}
}
