package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Validator checks call arguments against a tool's parameter schema. Unlike a plain
// schema validation, which stops at the first problem, it reports every missing,
// unknown or ill-typed parameter, so the model can fix them all in one retry.
type Validator struct {
	whole    *jsonschema.Resolved
	required []string
	props    map[string]*jsonschema.Resolved // nil entry: checked only by whole
	closed   bool                            // additionalProperties: false
}

// NewValidator compiles schema, a JSON Schema for an object.
func NewValidator(schema json.RawMessage) (*Validator, error) {
	var root jsonschema.Schema
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("parameter schema: %w", err)
	}
	whole, err := root.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("parameter schema: %w", err)
	}
	v := &Validator{whole: whole, required: root.Required, props: map[string]*jsonschema.Resolved{}}
	for name, ps := range root.Properties {
		r, err := ps.Resolve(nil)
		if err != nil {
			r = nil // e.g. a $ref to the root's $defs: leave it to the whole-schema check
		}
		v.props[name] = r
	}
	if ap := root.AdditionalProperties; ap != nil && ap.Not != nil && isEmptySchema(ap.Not) {
		v.closed = true
	}
	return v, nil
}

func isEmptySchema(s *jsonschema.Schema) bool {
	return reflect.DeepEqual(*s, jsonschema.Schema{})
}

// Validate returns nil if args satisfy the schema, else an *Error of type
// invalid_tool_params naming each problem.
func (v *Validator) Validate(args json.RawMessage) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return Errorf(ErrInvalidParams, "arguments must be a JSON object: %v", err)
	}
	var problems []string
	for _, name := range v.required {
		if _, ok := obj[name]; !ok {
			problems = append(problems, fmt.Sprintf("missing required parameter %q", name))
		}
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		r, known := v.props[name]
		switch {
		case !known && v.closed:
			problems = append(problems, fmt.Sprintf("unknown parameter %q", name))
		case r != nil:
			if err := r.Validate(obj[name]); err != nil {
				problems = append(problems, fmt.Sprintf("parameter %q: %s", name, strings.TrimPrefix(err.Error(), "validating root: ")))
			}
		}
	}
	if len(problems) == 0 {
		if err := v.whole.Validate(obj); err != nil {
			problems = append(problems, strings.TrimPrefix(err.Error(), "validating root: "))
		}
	}
	if len(problems) > 0 {
		return &Error{Type: ErrInvalidParams, Message: "invalid arguments: " + strings.Join(problems, "; ")}
	}
	return nil
}

// DecodeArgs decodes a call's JSON arguments into v, taking none or null for {}. Build
// may be called with arguments that were never validated against the schema, so a
// decoding failure is the model's mistake, reported as invalid_tool_params.
func DecodeArgs(args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return Errorf(ErrInvalidParams, "invalid arguments: %v", err)
	}
	return nil
}
