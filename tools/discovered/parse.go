package discovered

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/agentls/agentls/tools"
)

// declaration is one function declaration of the discovery output.
type declaration struct {
	name        string
	description string
	// schema is an object schema the validator accepts.
	schema json.RawMessage
}

// emptySchema is the schema of a declaration whose own is missing or unusable.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// parseDeclarations reads the discovery output: a JSON array whose items are
// {"function_declarations": […]}, {"functionDeclarations": […]} or a declaration. An
// output that is not a JSON array is an error; items and declarations that cannot be
// used are skipped with a warning. Of several declarations with one name the last is
// kept.
func parseDeclarations(out []byte, logger *slog.Logger) ([]declaration, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, errors.New("wrote nothing to its standard output; it must write a JSON array of function declarations")
	}
	var whole json.RawMessage
	if err := decodeOne(out, &whole); err != nil {
		return nil, fmt.Errorf("its output is not valid JSON (%v): %s", err, excerpt(out))
	}
	var items []json.RawMessage
	if out[0] != '[' || json.Unmarshal(whole, &items) != nil {
		return nil, fmt.Errorf("its output must be a JSON array of function declarations, not %s: %s", jsonKind(out), excerpt(out))
	}

	var decls []declaration
	index := map[string]int{} // name → position in decls
	add := func(where string, raw json.RawMessage) {
		d, ok := parseDeclaration(where, raw, logger)
		if !ok {
			return
		}
		if i, dup := index[d.name]; dup {
			logger.Warn("discovered tool declared more than once; the later declaration is used",
				"tool", d.name, "declaration", where)
			decls[i] = d
			return
		}
		index[d.name] = len(decls)
		decls = append(decls, d)
	}
	for i, item := range items {
		where := fmt.Sprintf("item %d", i)
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(item, &fields); err != nil || fields == nil {
			logger.Warn("discovery output item skipped: it is not a JSON object", "item", i, "value", excerpt(item))
			continue
		}
		list, key := fields["function_declarations"], "function_declarations"
		if list == nil {
			list, key = fields["functionDeclarations"], "functionDeclarations"
		}
		if list == nil {
			add(where, item)
			continue
		}
		var raws []json.RawMessage
		if err := json.Unmarshal(list, &raws); err != nil {
			logger.Warn("discovery output item skipped: its "+key+" is not a JSON array", "item", i, "value", excerpt(list))
			continue
		}
		for j, raw := range raws {
			add(fmt.Sprintf("item %d, %s[%d]", i, key, j), raw)
		}
	}
	return decls, nil
}

// parseDeclaration reads one declaration; where names it in warnings. It reports false
// for a declaration that cannot become a tool.
func parseDeclaration(where string, raw json.RawMessage, logger *slog.Logger) (declaration, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		logger.Warn("discovered function declaration skipped: it is not a JSON object", "declaration", where, "value", excerpt(raw))
		return declaration{}, false
	}
	var d declaration
	if err := json.Unmarshal(fields["name"], &d.name); err != nil || strings.TrimSpace(d.name) == "" {
		logger.Warn("discovered function declaration skipped: it has no name", "declaration", where, "value", excerpt(raw))
		return declaration{}, false
	}
	if strings.ContainsRune(d.name, 0) {
		logger.Warn("discovered function declaration skipped: its name contains a NUL byte and cannot be passed to the call command", "declaration", where, "tool", d.name)
		return declaration{}, false
	}
	if desc, ok := fields["description"]; ok && string(desc) != "null" {
		if err := json.Unmarshal(desc, &d.description); err != nil {
			logger.Warn("discovered tool's description ignored: it is not a string", "tool", d.name, "declaration", where)
		}
	}

	d.schema = emptySchema
	key, schema := "parametersJsonSchema", fields["parametersJsonSchema"]
	if isNull(schema) {
		key, schema = "parameters", fields["parameters"]
	}
	if isNull(schema) {
		return d, true
	}
	s, err := objectSchema(schema, key == "parameters")
	if err != nil {
		logger.Warn("discovered tool's parameter schema replaced by an empty object schema", "tool", d.name,
			"declaration", where, "field", key, "err", err)
		return d, true
	}
	d.schema = s
	return d, true
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// objectSchema returns raw as the JSON Schema of an object, converted from Gemini's
// OpenAPI-style Schema first when gemini is set. A schema without a type gets
// "type": "object"; a schema of another type, or one the validator cannot compile, is
// an error.
func objectSchema(raw json.RawMessage, gemini bool) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exactly as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the schema is %s, not a JSON object", jsonKind(raw))
	}
	if gemini {
		fromGemini(m)
	}
	switch t := m["type"].(type) {
	case nil:
		m["type"] = "object"
	case string:
		if t != "object" {
			return nil, fmt.Errorf("the arguments of a call are an object, but the schema has type %q", t)
		}
	default:
		return nil, fmt.Errorf("the arguments of a call are an object, but the schema has type %v", t)
	}
	s, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if _, err := tools.NewValidator(s); err != nil {
		return nil, err
	}
	return s, nil
}

// countKeywords are the Gemini Schema fields that are integers, which the Gemini API
// writes as strings in JSON.
var countKeywords = []string{"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"}

// fromGemini turns a Gemini Schema (the "parameters" of a function declaration) into
// JSON Schema in place: types are upper case there ("STRING") and "nullable" marks a
// schema that also admits null.
func fromGemini(m map[string]any) {
	if t, ok := m["type"].(string); ok {
		switch t = strings.ToLower(t); t {
		case "", "type_unspecified":
			delete(m, "type")
		default:
			m["type"] = t
		}
	}
	if nullable, _ := m["nullable"].(bool); nullable {
		if t, ok := m["type"].(string); ok {
			m["type"] = []any{t, "null"}
		}
		delete(m, "nullable")
	}
	for _, k := range countKeywords {
		if s, ok := m[k].(string); ok {
			m[k] = json.Number(s)
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, p := range props {
			if p, ok := p.(map[string]any); ok {
				fromGemini(p)
			}
		}
	}
	if items, ok := m["items"].(map[string]any); ok {
		fromGemini(items)
	}
	if anyOf, ok := m["anyOf"].([]any); ok {
		for _, b := range anyOf {
			if b, ok := b.(map[string]any); ok {
				fromGemini(b)
			}
		}
	}
}

// decodeOne decodes data, which must hold exactly one JSON value, into v.
func decodeOne(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// jsonKind names the kind of the JSON value raw starts with.
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// excerpt returns the beginning of data for a message.
func excerpt(data []byte) string {
	const max = 200
	data = bytes.TrimSpace(data)
	data = data[:min(len(data), 4*max+4)] // enough bytes for max characters, and a few more
	s := strings.ToValidUTF8(string(data), "\uFFFD")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
