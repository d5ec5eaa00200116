package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestResourceToolSchemas holds the parameter schemas of the resource tools, which
// are generated from their argument structs, to the ones they had when written by hand.
func TestResourceToolSchemas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  json.RawMessage
		want string
	}{{
		ListResourcesName,
		(&listResourcesTool{}).Info().Parameters,
		`{"type":"object","properties":{"server":{"type":"string",` +
			`"description":"Only list the resources of this MCP server."}},"additionalProperties":false}`,
	}, {
		ReadResourceName,
		(&readResourceTool{}).Info().Parameters,
		`{"type":"object","properties":{` +
			`"server":{"type":"string","description":"The MCP server that offers the resource."},` +
			`"uri":{"type":"string","description":"The resource's URI."}},` +
			`"required":["server","uri"],"additionalProperties":false}`,
	}}
	for _, tt := range tests {
		var got, want any
		if err := json.Unmarshal(tt.got, &got); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: parameters\n%s\nwant\n%s", tt.name, tt.got, tt.want)
		}
	}
}
