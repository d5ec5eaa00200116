package tools

import (
	"errors"
	"strings"
	"testing"
)

func TestValidatorReportsEveryProblem(t *testing.T) {
	schema := `{"type":"object","properties":{
		"file_path":{"type":"string"},
		"start_line":{"type":"integer","minimum":1},
		"mode":{"type":"string","enum":["a","b"]},"content":{}},
		"required":["file_path","content"],"additionalProperties":false}`
	v, err := NewValidator([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args string
		want []string // substrings of the error; none means valid
	}{
		{"valid", `{"file_path":"a","content":1}`, nil},
		{"null args", `null`, []string{`missing required parameter "file_path"`, `missing required parameter "content"`}},
		{"not an object", `[1]`, []string{"must be a JSON object"}},
		{"every problem", `{"start_line":"x","mode":"c","bogus":true,"content":""}`, []string{
			`missing required parameter "file_path"`, `parameter "start_line"`, `parameter "mode"`, `unknown parameter "bogus"`}},
		{"minimum", `{"file_path":"a","content":"","start_line":0}`, []string{`parameter "start_line": minimum`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Validate([]byte(tt.args))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var te *Error
			if !errors.As(err, &te) || te.Type != ErrInvalidParams {
				t.Fatalf("Validate = %v, want an invalid_tool_params error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(te.Message, w) {
					t.Errorf("error %q does not mention %q", te.Message, w)
				}
			}
		})
	}
}
