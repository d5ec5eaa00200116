package acp

import (
	"encoding/json"
	"reflect"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/tools/mcp"
)

func TestLiftScope(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"scope moved into the params",
			`{"id":3,"jsonrpc":"2.0","method":"elicitation/create","params":{"_meta":{"agentls/elicitationScope":{"sessionId":"s","toolCallId":"s/c"}},"message":"m","mode":"form"}}` + "\n",
			`{"id":3,"jsonrpc":"2.0","method":"elicitation/create","params":{"message":"m","mode":"form","sessionId":"s","toolCallId":"s/c"}}` + "\n"},
		{"other _meta kept",
			`{"id":3,"jsonrpc":"2.0","method":"elicitation/create","params":{"_meta":{"x":1,"agentls/elicitationScope":{"sessionId":"s"}},"message":"m"}}`,
			`{"id":3,"jsonrpc":"2.0","method":"elicitation/create","params":{"_meta":{"x":1},"message":"m","sessionId":"s"}}`},
		{"another method's line as it is",
			`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"elicitation/create agentls/elicitationScope"}}}}` + "\n",
			`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"elicitation/create agentls/elicitationScope"}}}}` + "\n"},
		{"no scope: as it is",
			`{"id":1,"jsonrpc":"2.0","method":"elicitation/create","params":{"message":"agentls/elicitationScope"}}`,
			`{"id":1,"jsonrpc":"2.0","method":"elicitation/create","params":{"message":"agentls/elicitationScope"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(liftScope([]byte(tc.in))); got != tc.want {
				t.Errorf("liftScope =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestFormSchema(t *testing.T) {
	q := &mcp.Question{Fields: []mcp.Field{
		{Name: "name", Title: "Name", Type: "string", Required: true, Default: "Ada"},
		{Name: "pet", Type: "string", Choices: []string{"p1", "p2"}, Labels: []string{"Cats", ""}},
		{Name: "tags", Type: "array", Choices: []string{"a"}, Default: []any{"a"}},
		{Name: "n", Type: "integer", Default: 3.0},
		{Name: "odd", Type: "object"},
	}}
	got, err := json.Marshal(formSchema(q))
	if err != nil {
		t.Fatal(err)
	}
	want := sdk.UnstableElicitationSchema{Type: "object", Required: []string{"name"}, Properties: map[string]any{
		"name": map[string]any{"type": "string", "title": "Name", "default": "Ada"},
		"pet":  map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "p1", "title": "Cats"}, map[string]any{"const": "p2", "title": "p2"}}},
		"tags": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"const": "a", "title": "a"}}}, "default": []any{"a"}},
		"n":    map[string]any{"type": "integer", "default": 3.0},
		"odd":  map[string]any{"type": "string"},
	}}
	var back sdk.UnstableElicitationSchema
	if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("formSchema = %s (%v)", got, err)
	}
}
