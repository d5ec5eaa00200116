package tools

import (
	"bytes"
	"encoding/json"
)

// WaitForPrevious is the parameter Gemini CLI adds to every tool's declaration: a call
// whose arguments set it to true starts only after every earlier call of its batch has
// finished; false or absent lets it run alongside them. The scheduler honours it and
// takes it out of the arguments before the tool's own schema sees them, so that tools
// (MCP servers with closed schemas among them) never receive it. A tool whose schema
// declares a property of that name itself (an MCP server's, a discovered tool's) keeps
// it: its declaration and arguments are left as they are, and the tool receives it.
const WaitForPrevious = "wait_for_previous"

// waitForPreviousSchema is the declaration of WaitForPrevious. It has no description:
// the system instruction says once what it does, rather than every tool again.
var waitForPreviousSchema = map[string]any{"type": "boolean"}

// declareWaitForPrevious adds WaitForPrevious to the properties of an object schema, as
// Gemini CLI does for every tool. A schema that is not of type object, whose
// properties are not an object, or that declares WaitForPrevious itself, is left as it
// is.
func declareWaitForPrevious(schema map[string]any) {
	if schema["type"] != "object" {
		return
	}
	props, ok := schema["properties"].(map[string]any)
	if !ok {
		if _, set := schema["properties"]; set {
			return
		}
		props = map[string]any{}
		schema["properties"] = props
	}
	if _, own := props[WaitForPrevious]; own {
		return
	}
	props[WaitForPrevious] = waitForPreviousSchema
}

// splitWaitForPrevious returns args without WaitForPrevious and whether it was true.
// Arguments that are not a JSON object, or do not have the key, are returned as they
// are, for the tool's schema to judge. The other members keep their bytes, order and
// escapes as the model wrote them: the policy's argsPattern rules match those bytes,
// and re-encoding them (which escapes <, > and & and sorts the keys) would let a
// model slip past a deny rule by adding wait_for_previous to its call.
func splitWaitForPrevious(args json.RawMessage) (json.RawMessage, bool, error) {
	if t := bytes.TrimSpace(args); len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return args, false, nil
	}
	var (
		kept  [][]byte // the other members, each as written ("key": value)
		found bool
		last  json.RawMessage // the value of the last member named WaitForPrevious
	)
	dec := json.NewDecoder(bytes.NewReader(args))
	if _, err := dec.Token(); err != nil { // {
		return args, false, nil
	}
	for dec.More() {
		from := dec.InputOffset() // the end of the member before, or of the brace
		key, err := dec.Token()
		if err != nil {
			return args, false, nil
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return args, false, nil
		}
		if key == WaitForPrevious {
			found, last = true, value
			continue
		}
		member := bytes.TrimLeft(args[from:dec.InputOffset()], " \t\r\n")
		member = bytes.TrimLeft(bytes.TrimPrefix(member, []byte(",")), " \t\r\n")
		kept = append(kept, member)
	}
	if !found {
		return args, false, nil
	}
	var wait bool
	if err := json.Unmarshal(last, &wait); err != nil {
		return args, false, Errorf(ErrInvalidParams, "%s must be a boolean, not %s", WaitForPrevious, last)
	}
	out := append([]byte{'{'}, bytes.Join(kept, []byte{','})...)
	return append(out, '}'), wait, nil
}

// declaresOwnWaitForPrevious reports whether the parameter schema of a tool declares
// WaitForPrevious among its properties: the parameter is then the tool's, not the
// scheduler's.
func declaresOwnWaitForPrevious(params json.RawMessage) bool {
	if !bytes.Contains(params, []byte(`"`+WaitForPrevious+`"`)) {
		return false // the common case, without decoding the schema
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(params, &s) != nil {
		return false
	}
	_, own := s.Properties[WaitForPrevious]
	return own
}
