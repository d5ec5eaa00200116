package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentls/agentls/tools"
)

// emptyObjectSchema accepts any arguments object.
var emptyObjectSchema = json.RawMessage(`{"type":"object"}`)

// inputSchema turns a tool's input schema, as the SDK decoded it, into the tool's
// Parameters: the server's schema without "$schema", which the scheduler's validator
// can compile and apply. Servers write schemas for many drafts; what the validator
// cannot use is repaired, each change noted in the returned notes for the log:
//
//  1. always, draft-04 forms and plain mistakes: boolean exclusiveMinimum and
//     exclusiveMaximum become numbers, unknown type names (which would fail every
//     call) are dropped;
//  2. if the schema does not compile, $refs to other documents (which cannot be
//     loaded) are dropped;
//  3. parameters whose schema still cannot be compiled keep only their description;
//  4. as a last resort, any object is accepted.
//
// A tool is thus always callable: the server validates its arguments anyway.
func inputSchema(schema any) (json.RawMessage, []string) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return emptyObjectSchema, []string{fmt.Sprintf("input schema cannot be encoded (%v); any arguments are accepted", err)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exactly as the server wrote them
	var v any
	if err := dec.Decode(&v); err != nil {
		return emptyObjectSchema, []string{fmt.Sprintf("input schema cannot be read (%v); any arguments are accepted", err)}
	}
	root, ok := v.(map[string]any)
	if !ok {
		return emptyObjectSchema, []string{"input schema is not a JSON object; any arguments are accepted"}
	}
	var notes []string
	walkSchema(root, func(m map[string]any) { delete(m, "$schema") })
	if t, ok := root["type"]; ok && t != "object" {
		notes = append(notes, fmt.Sprintf("input schema has type %v, not object; type object is used", t))
		root["type"] = "object"
	}
	walkSchema(root, func(m map[string]any) { notes = append(notes, repairDraft04(m)...) })
	if out, ok := compiles(root); ok {
		return out, notes
	}
	walkSchema(root, func(m map[string]any) { notes = append(notes, dropExternalRef(m)...) })
	if out, ok := compiles(root); ok {
		return out, notes
	}

	props, _ := root["properties"].(map[string]any)
	skeleton := map[string]any{"type": "object"}
	for _, k := range []string{"description", "required", "$defs", "definitions"} {
		if v, ok := root[k]; ok {
			skeleton[k] = v
		}
	}
	kept := map[string]any{}
	for _, name := range sortedKeys(props) {
		sub := props[name]
		try := maps1(skeleton, "properties", map[string]any{name: sub})
		if _, ok := compiles(try); ok {
			kept[name] = sub
			continue
		}
		loose := map[string]any{}
		if m, ok := sub.(map[string]any); ok {
			if d, ok := m["description"]; ok {
				loose["description"] = d
			}
		}
		kept[name] = loose
		notes = append(notes, fmt.Sprintf("the schema of parameter %q cannot be used for validation and was reduced to its description", name))
	}
	skeleton["properties"] = kept
	if out, ok := compiles(skeleton); ok {
		return out, append(notes, "keywords outside the parameters' schemas were dropped")
	}
	return emptyObjectSchema, append(notes, "input schema cannot be used for validation; any arguments are accepted")
}

// maps1 returns a shallow copy of m with k set to v.
func maps1(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = v
	return out
}

// compiles encodes schema and reports whether the scheduler's validator accepts it.
func compiles(schema map[string]any) (json.RawMessage, bool) {
	out, err := json.Marshal(schema)
	if err != nil {
		return nil, false
	}
	if _, err := tools.NewValidator(out); err != nil {
		return nil, false
	}
	return out, true
}

var jsonTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// repairDraft04 rewrites the draft-04 (and plain wrong) forms of one schema object
// that the validator rejects or would apply wrongly, and says what it changed.
func repairDraft04(m map[string]any) []string {
	var notes []string
	for _, kw := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
		b, ok := m[kw].(bool)
		if !ok {
			continue
		}
		bound := strings.Replace(kw, "exclusiveM", "m", 1) // minimum or maximum
		delete(m, kw)
		if n, ok := m[bound]; b && ok {
			m[kw] = n
			delete(m, bound)
		}
		notes = append(notes, "draft-04 boolean "+kw+" rewritten")
	}
	switch t := m["type"].(type) {
	case string:
		if !slices.Contains(jsonTypes, t) {
			delete(m, "type")
			notes = append(notes, fmt.Sprintf("unknown type %q dropped", t))
		}
	case []any:
		for _, e := range t {
			if s, _ := e.(string); !slices.Contains(jsonTypes, s) {
				delete(m, "type")
				notes = append(notes, fmt.Sprintf("type list %v with an unknown type dropped", t))
				break
			}
		}
	case nil:
	default:
		delete(m, "type")
		notes = append(notes, "malformed type dropped")
	}
	return notes
}

// dropExternalRef drops the $ref of one schema object if it names another document,
// and says so. It is only applied to a schema that does not compile: a $ref by the
// schema's own $id, which the validator resolves, looks no different.
func dropExternalRef(m map[string]any) []string {
	if ref, ok := m["$ref"].(string); ok && !strings.HasPrefix(ref, "#") {
		delete(m, "$ref")
		return []string{fmt.Sprintf("$ref %q to another document dropped", ref)}
	}
	return nil
}

// Keywords whose value is a schema, a map of schemas or a list of schemas.
var (
	subschemaKeywords = []string{"additionalProperties", "not", "contains", "if", "then", "else",
		"propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems", "items"}
	subschemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	subschemaListKeywords = []string{"anyOf", "oneOf", "allOf", "prefixItems", "items"}
)

// walkSchema calls f on m and on every schema object inside it.
func walkSchema(m map[string]any, f func(map[string]any)) {
	f(m)
	for _, k := range subschemaKeywords {
		if sub, ok := m[k].(map[string]any); ok {
			walkSchema(sub, f)
		}
	}
	for _, k := range subschemaMapKeywords {
		subs, _ := m[k].(map[string]any)
		for _, sub := range subs {
			if sub, ok := sub.(map[string]any); ok {
				walkSchema(sub, f)
			}
		}
	}
	for _, k := range subschemaListKeywords {
		list, _ := m[k].([]any)
		for _, sub := range list {
			if sub, ok := sub.(map[string]any); ok {
				walkSchema(sub, f)
			}
		}
	}
}
