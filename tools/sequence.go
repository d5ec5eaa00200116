package tools

import (
	"bytes"
	"encoding/json"
)

// WaitForPrevious is the parameter Gemini CLI adds to every tool's declaration: a call
// whose arguments set it to true starts only after every earlier call of its batch has
// finished; false or absent lets it run alongside them. The scheduler honours it and
// takes it out of the arguments before the tool's own schema sees them, so that tools
// (MCP servers with closed schemas among them) never receive it.
const WaitForPrevious = "wait_for_previous"

// waitForPreviousSchema is the declaration of WaitForPrevious, in Gemini CLI's words.
var waitForPreviousSchema = map[string]any{
	"type": "boolean",
	"description": "Set to true to wait for all previously requested tools in this turn to complete before starting. " +
		"Set to false (or omit) to run in parallel. Use true when this tool depends on the output of previous tools.",
}

// declareWaitForPrevious adds WaitForPrevious to the properties of an object schema, as
// Gemini CLI does for every tool. A schema that is not of type object, or whose
// properties are not an object, is left as it is.
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
	props[WaitForPrevious] = waitForPreviousSchema
}

// splitWaitForPrevious returns args without WaitForPrevious and whether it was true.
// Arguments that are not a JSON object, or do not have the key, are returned as they
// are, for the tool's schema to judge.
func splitWaitForPrevious(args json.RawMessage) (json.RawMessage, bool, error) {
	if t := bytes.TrimSpace(args); len(t) == 0 || t[0] != '{' {
		return args, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return args, false, nil
	}
	raw, ok := m[WaitForPrevious]
	if !ok {
		return args, false, nil
	}
	var wait bool
	if err := json.Unmarshal(raw, &wait); err != nil {
		return args, false, Errorf(ErrInvalidParams, "%s must be a boolean, not %s", WaitForPrevious, raw)
	}
	delete(m, WaitForPrevious)
	out, err := json.Marshal(m)
	if err != nil {
		return args, false, Errorf(ErrInvalidParams, "arguments: %v", err)
	}
	return out, wait, nil
}
