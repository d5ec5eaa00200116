package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Parameters returns the parameter schema of a tool whose Build decodes its arguments
// into T, generated from T so that the schema and the decoding cannot drift apart:
//
//   - a field's `jsonschema` tag is its description (jsonschema-go's convention);
//   - a field is required unless its json tag says omitempty or omitzero;
//   - a pointer or slice, which Build uses to tell an absent argument from a zero one,
//     is not nullable as jsonschema-go makes it: a *string is a "string" and a []string
//     an "array", since a model has no reason to send null;
//   - a field's `schema` tag adds what the Go type cannot say, as comma-separated
//     keyword=value pairs: type=NAME (such as integer for a float64 that accepts 10.0),
//     minimum=N, default=JSON, enum=a|b|c (of strings), minItems=N and
//     itemMinLength=N, none of whose values can hold a comma;
//   - open, when true, leaves out "additionalProperties": false at the top level, for
//     the tools whose Gemini CLI schema accepts unknown arguments.
//
// The rules apply at every depth: to structs within structs and to the items of slices.
//
// It panics if T cannot be described: the argument structs are literals of their
// packages, so any test that builds the tool catches the mistake.
func Parameters[T any](open bool) json.RawMessage {
	data, err := parameters(reflect.TypeFor[T](), open)
	if err != nil {
		panic(fmt.Sprintf("tools: parameter schema of %v: %v", reflect.TypeFor[T](), err))
	}
	return data
}

// ParametersOnce returns a function that returns Parameters[T](open), generating it the
// first time it is called: a tool's Info is asked for on every registration and
// declaration, and generating a schema costs a reflection walk and a marshal (about
// 0.2 ms), which a process's start should not pay for each tool each time.
func ParametersOnce[T any](open bool) func() json.RawMessage {
	return sync.OnceValue(func() json.RawMessage { return Parameters[T](open) })
}

// parameters is Parameters, with an error instead of a panic.
func parameters(t reflect.Type, open bool) (json.RawMessage, error) {
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := adjust(s, t); err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("type %q, not an object", s.Type)
	}
	if s.Properties == nil {
		// A tool without parameters still declares its (empty) properties, as Gemini
		// CLI's do.
		s.Properties = map[string]*jsonschema.Schema{}
	}
	if open {
		s.AdditionalProperties = nil
	}
	return json.Marshal(s)
}

// adjust applies Parameters' rules to s, the schema jsonschema-go made of t.
func adjust(s *jsonschema.Schema, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// A pointer or a slice T is ["null", T]; JSONSCHEMAGODEBUG=typeschemasnull=1 makes
	// it T already.
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return adjust(s.Items, t.Elem())
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			p := s.Properties[name]
			if p == nil {
				continue // a field jsonschema-go leaves out, such as one of an embedded type it knows
			}
			if err := adjust(p, f.Type); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
			if tag, ok := f.Tag.Lookup("schema"); ok {
				if err := keywords(p, tag); err != nil {
					return fmt.Errorf("field %s: %w", f.Name, err)
				}
			}
		}
	}
	return nil
}

// jsonName returns the property name encoding/json gives f, and false for a field it
// does not decode by name (unexported, embedded or tagged "-").
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() || f.Anonymous {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, true
	}
	return f.Name, true
}

// keywords applies a `schema` tag to p.
func keywords(p *jsonschema.Schema, tag string) error {
	for kv := range strings.SplitSeq(tag, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("schema keyword %q has no value", kv)
		}
		var err error
		switch k {
		case "type":
			p.Type = v
		case "minimum":
			var n float64
			n, err = strconv.ParseFloat(v, 64)
			p.Minimum = &n
		case "maximum":
			var n float64
			n, err = strconv.ParseFloat(v, 64)
			p.Maximum = &n
		case "default":
			if !json.Valid([]byte(v)) {
				return fmt.Errorf("default %q is not JSON", v)
			}
			p.Default = json.RawMessage(v)
		case "enum":
			p.Enum = nil
			for e := range strings.SplitSeq(v, "|") {
				p.Enum = append(p.Enum, e)
			}
		case "minItems":
			var n int
			n, err = strconv.Atoi(v)
			p.MinItems = &n
		case "itemMinLength":
			if p.Items == nil {
				return fmt.Errorf("itemMinLength on a schema without items")
			}
			var n int
			n, err = strconv.Atoi(v)
			p.Items.MinLength = &n
		default:
			return fmt.Errorf("unknown schema keyword %q", k)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}
