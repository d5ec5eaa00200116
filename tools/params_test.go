package tools

import (
	"reflect"
	"strings"
	"testing"
)

func TestParameters(t *testing.T) {
	type filter struct {
		Git *bool `json:"git,omitempty" jsonschema:"Respect .gitignore."`
	}
	type item struct {
		Name   string `json:"name" jsonschema:"The name."`
		Status string `json:"status" schema:"enum=a|b"`
	}
	tests := []struct {
		name string
		typ  any // a value of the argument struct
		open bool
		want string
	}{{
		name: "no fields",
		typ:  struct{}{},
		want: `{"type":"object","properties":{},"additionalProperties":false}`,
	}, {
		name: "open",
		typ: struct {
			Q string `json:"q"`
		}{},
		open: true,
		want: `{"type":"object","required":["q"],"properties":{"q":{"type":"string"}}}`,
	}, {
		name: "descriptions and required",
		typ: struct {
			Path string `json:"path" jsonschema:"The path."`
			Opt  bool   `json:"opt,omitempty" jsonschema:"Optional."`
		}{},
		want: `{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"The path."},"opt":{"type":"boolean","description":"Optional."}},"additionalProperties":false}`,
	}, {
		name: "pointers and slices are not nullable",
		typ: struct {
			S   *string   `json:"s"`
			L   []string  `json:"l,omitempty"`
			PL  *[]int    `json:"pl,omitempty"`
			LP  []*string `json:"lp,omitempty"`
			Obj *filter   `json:"obj,omitempty" jsonschema:"Filtering."`
		}{},
		want: `{"type":"object","required":["s"],"properties":{` +
			`"s":{"type":"string"},` +
			`"l":{"type":"array","items":{"type":"string"}},` +
			`"pl":{"type":"array","items":{"type":"integer"}},` +
			`"lp":{"type":"array","items":{"type":"string"}},` +
			`"obj":{"type":"object","description":"Filtering.","properties":{"git":{"type":"boolean","description":"Respect .gitignore."}},"additionalProperties":false}` +
			`},"additionalProperties":false}`,
	}, {
		name: "keywords",
		typ: struct {
			N    *float64 `json:"n,omitempty" schema:"type=integer,minimum=1"`
			B    *bool    `json:"b,omitempty" schema:"default=true"`
			E    string   `json:"e,omitempty" schema:"enum=x|y"`
			Inc  []string `json:"inc" schema:"minItems=1,itemMinLength=1"`
			Zero int      `json:"zero,omitempty" schema:"minimum=0,maximum=9"`
		}{},
		want: `{"type":"object","required":["inc"],"properties":{` +
			`"n":{"type":"integer","minimum":1},` +
			`"b":{"type":"boolean","default":true},` +
			`"e":{"type":"string","enum":["x","y"]},` +
			`"inc":{"type":"array","items":{"type":"string","minLength":1},"minItems":1},` +
			`"zero":{"type":"integer","minimum":0,"maximum":9}` +
			`},"additionalProperties":false}`,
	}, {
		name: "items of a slice of structs",
		typ: struct {
			Items *[]item `json:"items" jsonschema:"The list."`
		}{},
		want: `{"type":"object","required":["items"],"properties":{"items":{"type":"array","description":"The list.","items":` +
			`{"type":"object","required":["name","status"],"properties":{"name":{"type":"string","description":"The name."},"status":{"type":"string","enum":["a","b"]}},"additionalProperties":false}` +
			`}},"additionalProperties":false}`,
	}, {
		name: "open applies to the top level only",
		typ: struct {
			F filter `json:"f"`
		}{},
		open: true,
		want: `{"type":"object","required":["f"],"properties":{"f":{"type":"object","properties":{"git":{"type":"boolean","description":"Respect .gitignore."}},"additionalProperties":false}}}`,
	}, {
		name: "names as encoding/json gives them",
		typ: struct {
			Plain  string `jsonschema:"Untagged."`
			Hidden string `json:"-"`
			hidden string
		}{},
		want: `{"type":"object","required":["Plain"],"properties":{"Plain":{"type":"string","description":"Untagged."}},"additionalProperties":false}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parameters(reflect.TypeOf(tt.typ), tt.open)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, string(got), tt.want) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestParametersErrors(t *testing.T) {
	tests := []struct {
		name string
		typ  any
		want string // in the error
	}{
		{"not an object", "", "not an object"},
		{"unknown keyword", struct {
			A string `json:"a" schema:"exclusiveMaximum=3"`
		}{}, `unknown schema keyword "exclusiveMaximum"`},
		{"keyword without value", struct {
			A string `json:"a" schema:"minimum"`
		}{}, "has no value"},
		{"bad number", struct {
			A int `json:"a" schema:"minimum=one"`
		}{}, "minimum"},
		{"bad default", struct {
			A bool `json:"a" schema:"default=yes"`
		}{}, "not JSON"},
		{"itemMinLength without items", struct {
			A string `json:"a" schema:"itemMinLength=1"`
		}{}, "without items"},
		{"nested", struct {
			A []struct {
				B string `json:"b" schema:"minItems=x"`
			} `json:"a"`
		}{}, "field A: field B: minItems"},
		{"unsupported type", struct {
			C chan int `json:"c"`
		}{}, "unsupported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parameters(reflect.TypeOf(tt.typ), false)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestParametersPanics checks that Parameters reports a struct it cannot describe at
// once, as its documentation promises.
func TestParametersPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Parameters of a struct with an unknown schema keyword did not panic")
		}
	}()
	Parameters[struct {
		A string `json:"a" schema:"bogus=1"`
	}](false)
}
