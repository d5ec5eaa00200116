package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// maxNameLen is the longest function name Gemini accepts.
const maxNameLen = 63

// SanitizeName turns a tool name into one Gemini accepts as a function name, the way
// Gemini CLI names MCP tools:
//
//   - every character outside [A-Za-z0-9_.:-] becomes "_" (one per character, so
//     "héllo wörld" becomes "h_llo_w_rld");
//   - a name that does not start with a letter or an underscore gets a "_" in front (and
//     the empty name becomes "_");
//   - a name longer than 63 characters keeps its first 30 and its last 30 characters,
//     joined by "___", which gives exactly 63. Gemini CLI joins them with "..."; "___"
//     keeps the cut visible without putting dots, which read as namespace separators, in
//     the middle.
func SanitizeName(name string) string {
	var b strings.Builder
	b.Grow(len(name) + 1)
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == '_', r == '.', r == ':', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || !(s[0] == '_' || s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		s = "_" + s
	}
	if len(s) > maxNameLen { // s is ASCII here, so bytes are characters
		s = s[:30] + "___" + s[len(s)-30:]
	}
	return s
}

// SanitizeSchema returns a tool's parameter schema in the form Gemini accepts as
// parametersJsonSchema. Throughout the schema (properties, items, prefixItems, anyOf,
// oneOf, allOf, not, additionalProperties, patternProperties, $defs, definitions and
// the conditional keywords):
//
//   - "$schema" and "$id" are dropped;
//   - "default" is dropped from a schema with anyOf and from each anyOf branch, which
//     Vertex AI cannot combine;
//   - a type list becomes one type: ["T", "null"] becomes "T" with "nullable": true, and
//     several non-null types become an anyOf of one branch per type;
//   - "enum" is kept only for strings: dropped for other types, stripped of non-string
//     values, and a schema with an all-string enum and no type gets "type": "string";
//   - "format" is kept only on strings, and only "enum" and "date-time", the two Gemini
//     supports.
//
// An empty or null schema becomes an object schema without properties. Numbers are kept
// exactly as written.
func SanitizeSchema(schema json.RawMessage) (map[string]any, error) {
	schema = bytes.TrimSpace(schema)
	if len(schema) == 0 || string(schema) == "null" {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("parameter schema: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("parameter schema: unexpected data after the JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("parameter schema must be a JSON object, not %s", jsonKind(v))
	}
	sanitizeNode(m, false)
	return m, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// Keywords whose value is one schema, a map of schemas or a list of schemas.
var (
	schemaKeywords = []string{"additionalProperties", "not", "contains", "if", "then", "else",
		"propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaListKeywords = []string{"oneOf", "allOf", "prefixItems"}
)

// sanitizeNode sanitises one schema object in place; anyOfBranch tells that it is a
// branch of an anyOf.
func sanitizeNode(m map[string]any, anyOfBranch bool) {
	delete(m, "$schema")
	delete(m, "$id")
	_, hadType := m["type"]
	normalizeType(m)
	if _, ok := m["anyOf"]; ok || anyOfBranch {
		delete(m, "default")
	}

	typ, _ := m["type"].(string)
	if enum, ok := m["enum"]; ok {
		values, _ := enum.([]any)
		strs := slices.DeleteFunc(slices.Clone(values), func(v any) bool { _, ok := v.(string); return !ok })
		switch {
		case !hadType && len(strs) > 0 && len(strs) == len(values):
			m["type"] = "string"
			typ = "string"
		case typ != "string" || len(strs) == 0:
			delete(m, "enum")
		default:
			m["enum"] = strs
		}
	}
	if f, ok := m["format"]; ok {
		if s, _ := f.(string); typ != "string" || (s != "enum" && s != "date-time") {
			delete(m, "format")
		}
	}

	for _, k := range schemaKeywords {
		if sub, ok := m[k].(map[string]any); ok {
			sanitizeNode(sub, false)
		}
	}
	for _, k := range schemaMapKeywords {
		if subs, ok := m[k].(map[string]any); ok {
			for _, sub := range subs {
				if sub, ok := sub.(map[string]any); ok {
					sanitizeNode(sub, false)
				}
			}
		}
	}
	for _, k := range schemaListKeywords {
		sanitizeList(m[k], false)
	}
	sanitizeList(m["anyOf"], true)
	switch items := m["items"].(type) {
	case map[string]any:
		sanitizeNode(items, false)
	case []any:
		sanitizeList(items, false)
	}
}

func sanitizeList(v any, anyOfBranch bool) {
	list, _ := v.([]any)
	for _, sub := range list {
		if sub, ok := sub.(map[string]any); ok {
			sanitizeNode(sub, anyOfBranch)
		}
	}
}

// normalizeType turns a list of types into one type, nullable, or an anyOf.
func normalizeType(m map[string]any) {
	list, ok := m["type"].([]any)
	if !ok {
		return
	}
	var types []any
	nullable := false
	for _, t := range list {
		switch s, _ := t.(string); {
		case s == "null":
			nullable = true
		case s != "" && !slices.Contains(types, any(s)):
			types = append(types, s)
		}
	}
	if nullable {
		m["nullable"] = true
	}
	switch len(types) {
	case 0:
		delete(m, "type")
	case 1:
		m["type"] = types[0]
	default:
		delete(m, "type")
		branches := make([]any, len(types))
		for i, t := range types {
			branches[i] = map[string]any{"type": t}
		}
		if _, ok := m["anyOf"]; ok {
			// Both must hold: keep the schema's own anyOf and add the type choice beside it.
			allOf, _ := m["allOf"].([]any)
			m["allOf"] = append(allOf, map[string]any{"anyOf": branches})
		} else {
			m["anyOf"] = branches
		}
	}
}
