package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestSanitizeSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, `{"type":"object","properties":{}}`},
		{"null", `null`, `{"type":"object","properties":{}}`},
		{"schema and id dropped",
			`{"$schema":"http://json-schema.org/draft-07/schema#","$id":"x","type":"object","properties":{"$schema":{"type":"string"}}}`,
			`{"type":"object","properties":{"$schema":{"type":"string"}}}`},
		{"nullable type",
			`{"type":"object","properties":{"a":{"type":["string","null"],"default":"x"},"b":{"type":["null","integer"]}}}`,
			`{"type":"object","properties":{"a":{"type":"string","nullable":true,"default":"x"},"b":{"type":"integer","nullable":true}}}`},
		{"several types become anyOf",
			`{"type":"object","properties":{"a":{"type":["string","number","null"],"default":1}}}`,
			`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"number"}],"nullable":true}}}`},
		{"type list next to an anyOf",
			`{"type":["string","integer"],"anyOf":[{"minLength":1},{"minimum":0}]}`,
			`{"anyOf":[{"minLength":1},{"minimum":0}],"allOf":[{"anyOf":[{"type":"string"},{"type":"integer"}]}]}`},
		{"only null",
			`{"type":["null"]}`,
			`{"nullable":true}`},
		{"default dropped in anyOf branches only",
			`{"type":"object","properties":{"a":{"anyOf":[{"type":"string","default":"x"},{"type":"object","properties":{"d":{"type":"string","default":"keep"}}}]},"b":{"type":"string","default":"keep"}}}`,
			`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"object","properties":{"d":{"type":"string","default":"keep"}}}]},"b":{"type":"string","default":"keep"}}}`},
		{"default dropped beside anyOf",
			`{"anyOf":[{"type":"string"},{"type":"integer"}],"default":"x"}`,
			`{"anyOf":[{"type":"string"},{"type":"integer"}]}`},
		{"enum kept for strings only",
			`{"type":"object","properties":{"s":{"type":"string","enum":["a","b"]},"i":{"type":"integer","enum":[1,2]},"n":{"type":["string","null"],"enum":["a",null]},"u":{"enum":["x","y"]},"m":{"enum":["x",1]}}}`,
			`{"type":"object","properties":{"s":{"type":"string","enum":["a","b"]},"i":{"type":"integer"},"n":{"type":"string","nullable":true,"enum":["a"]},"u":{"type":"string","enum":["x","y"]},"m":{}}}`},
		{"format",
			`{"type":"object","properties":{"d":{"type":"string","format":"date-time"},"e":{"type":"string","format":"enum","enum":["a"]},"u":{"type":"string","format":"uri"},"i":{"type":"integer","format":"int64"},"x":{"type":"integer","format":"date-time"}}}`,
			`{"type":"object","properties":{"d":{"type":"string","format":"date-time"},"e":{"type":"string","format":"enum","enum":["a"]},"u":{"type":"string"},"i":{"type":"integer"},"x":{"type":"integer"}}}`},
		{"items, tuples and additionalProperties",
			`{"type":"array","items":{"type":"string","format":"email"},"prefixItems":[{"type":["integer","null"]}],"additionalProperties":{"$schema":"x","type":"string","format":"uuid"}}`,
			`{"type":"array","items":{"type":"string"},"prefixItems":[{"type":"integer","nullable":true}],"additionalProperties":{"type":"string"}}`},
		{"items as a list",
			`{"type":"array","items":[{"type":"string","format":"hostname"},{"type":"number","enum":[1]}]}`,
			`{"type":"array","items":[{"type":"string"},{"type":"number"}]}`},
		{"additionalProperties false untouched",
			`{"type":"object","additionalProperties":false}`,
			`{"type":"object","additionalProperties":false}`},
		{"defs, oneOf, allOf, not",
			`{"$defs":{"p":{"$id":"p","type":["string","null"],"format":"uri"}},"definitions":{"q":{"type":"integer","enum":[3]}},"oneOf":[{"type":"integer","format":"int32"}],"allOf":[{"anyOf":[{"type":"string","default":"d"}]}],"not":{"type":"string","format":"ipv4"}}`,
			`{"$defs":{"p":{"type":"string","nullable":true}},"definitions":{"q":{"type":"integer"}},"oneOf":[{"type":"integer"}],"allOf":[{"anyOf":[{"type":"string"}]}],"not":{"type":"string"}}`},
		{"deep nesting",
			`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"anyOf":[{"type":["string","null"],"format":"date-time","default":null}]}}}}}}`,
			`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"anyOf":[{"type":"string","nullable":true,"format":"date-time"}]}}}}}}`},
		{"property names that look like keywords",
			`{"type":"object","properties":{"default":{"type":"string"},"format":{"type":"string"},"enum":{"type":"integer"}},"required":["default","format"]}`,
			`{"type":"object","properties":{"default":{"type":"string"},"format":{"type":"string"},"enum":{"type":"integer"}},"required":["default","format"]}`},
		{"big numbers kept exactly",
			`{"type":"integer","minimum":-9007199254740993,"maximum":12345678901234567890}`,
			`{"type":"integer","minimum":-9007199254740993,"maximum":12345678901234567890}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SanitizeSchema(json.RawMessage(tt.in))
			if err != nil {
				t.Fatalf("SanitizeSchema: %v", err)
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, string(b), tt.want) {
				t.Errorf("SanitizeSchema(%s)\n got %s\nwant %s", tt.in, b, tt.want)
			}
		})
	}
}

func TestSanitizeSchemaErrors(t *testing.T) {
	for _, in := range []string{`[1]`, `"object"`, `true`, `{"type":`, `{} {}`} {
		if got, err := SanitizeSchema(json.RawMessage(in)); err == nil {
			t.Errorf("SanitizeSchema(%s) = %v, want an error", in, got)
		} else if !strings.Contains(err.Error(), "schema") {
			t.Errorf("SanitizeSchema(%s) error %q does not say it is about the schema", in, err)
		}
	}
}

// jsonEqual compares two JSON texts structurally; numbers are compared as written.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	for _, p := range []struct {
		s string
		v *any
	}{{a, &va}, {b, &vb}} {
		dec := json.NewDecoder(strings.NewReader(p.s))
		dec.UseNumber()
		if err := dec.Decode(p.v); err != nil {
			t.Fatalf("bad JSON %s: %v", p.s, err)
		}
	}
	return reflect.DeepEqual(va, vb)
}

func TestSanitizeName(t *testing.T) {
	long := "server_" + strings.Repeat("x", 30) + "_middle_" + strings.Repeat("y", 30) + "_end"
	tests := []struct{ in, want string }{
		{"read_file", "read_file"},
		{"ns.tool:v1-beta", "ns.tool:v1-beta"},
		{"my server/do it", "my_server_do_it"},
		{"héllo wörld", "h_llo_w_rld"},
		{"日本", "__"},
		{"1tool", "_1tool"},
		{"-tool", "_-tool"},
		{".tool", "_.tool"},
		{"_tool", "_tool"},
		{"", "_"},
		{strings.Repeat("a", 63), strings.Repeat("a", 63)},
		{strings.Repeat("a", 64), strings.Repeat("a", 30) + "___" + strings.Repeat("a", 30)},
		{long, long[:30] + "___" + long[len(long)-30:]},
		{"9" + strings.Repeat("b", 62), "_9" + strings.Repeat("b", 28) + "___" + strings.Repeat("b", 30)},
		{strings.Repeat("é", 70), strings.Repeat("_", 30) + "___" + strings.Repeat("_", 30)},
	}
	for _, tt := range tests {
		got := SanitizeName(tt.in)
		if got != tt.want {
			t.Errorf("SanitizeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if len(got) > 63 {
			t.Errorf("SanitizeName(%q) is %d long", tt.in, len(got))
		}
		if SanitizeName(got) != got {
			t.Errorf("SanitizeName is not idempotent on %q", got)
		}
	}
}
