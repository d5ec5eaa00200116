package rpc

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func diag(line, severity int, source, message string) editorDiagnostic {
	var d editorDiagnostic
	d.Range.Start.Line = line
	d.Severity, d.Source, d.Message = severity, source, message
	return d
}

// TestDiagnosticsNote: what a result says of the editor's diagnostics before and after
// a change. Diagnostics are told apart by severity, source, code and message, not by
// line, which an edit moves; information and hints are not reported.
func TestDiagnosticsNote(t *testing.T) {
	const a = "/w/a.go"
	many := []editorDiagnostic{}
	for i := range 12 {
		many = append(many, diag(i, 1, "compiler", "error "+string(rune('A'+i))))
	}
	tests := []struct {
		name       string
		was, now   []editorDiagnostic
		hadBefore  bool
		want       []string
		wantAbsent []string
	}{
		{"none either way", nil, nil, true, []string{"show no new errors or warnings"}, nil},
		{"none, and no report of before", nil, nil, false, []string{"show no errors or warnings"}, nil},
		{"a new error", nil, []editorDiagnostic{diag(3, 1, "compiler", "undefined: x")}, true,
			[]string{"report 1 new error(s)", "- a.go:4: error: undefined: x (compiler)"}, []string{"resolved"}},
		{"moved, not new", []editorDiagnostic{diag(3, 2, "vet", "unused")}, []editorDiagnostic{diag(9, 2, "vet", "unused")}, true,
			[]string{"show no new errors"}, nil},
		{"resolved", []editorDiagnostic{diag(3, 1, "compiler", "undefined: x"), diag(4, 1, "compiler", "undefined: x")}, nil, true,
			[]string{"2 error(s) or warning(s) reported before this change are resolved"}, []string{"new"}},
		{"hints are not reported", nil, []editorDiagnostic{diag(1, 4, "gopls", "could be simpler"), diag(1, 3, "gopls", "info")}, true,
			[]string{"show no new errors"}, []string{"simpler"}},
		{"the first ten, then a count", nil, many, true, []string{"report 12 new", "error J", "… and 2 more."}, []string{"error K"}},
		{"a warning", nil, []editorDiagnostic{diag(0, 2, "", "shadows")}, true, []string{"- a.go:1: warning: shadows"}, nil},
	}
	rel := func(p string) string { return filepath.Base(p) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diagnosticsNote(rel, []string{a}, map[string][]editorDiagnostic{a: tt.was}, tt.hadBefore, map[string][]editorDiagnostic{a: tt.now})
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("note %q lacks %q", got, w)
				}
			}
			for _, w := range tt.wantAbsent {
				if strings.Contains(got, w) {
					t.Errorf("note %q has %q", got, w)
				}
			}
		})
	}
}

// TestDiagnosticsWait: the capability and the wait it declares.
func TestDiagnosticsWait(t *testing.T) {
	tests := []struct {
		caps   string
		want   string
		wantOK bool
	}{
		{`{}`, "0s", false},
		{`{"experimental":{"agentls":{"confirm":true}}}`, "0s", false},
		{`{"experimental":{"agentls":{"diagnostics":false}}}`, "2s", false},
		{`{"experimental":{"agentls":{"diagnostics":true}}}`, "2s", true},
		{`{"experimental":{"agentls":{"diagnostics":{}}}}`, "2s", true},
		{`{"experimental":{"agentls":{"diagnostics":{"waitMs":500}}}}`, "500ms", true},
		{`{"experimental":{"agentls":{"diagnostics":{"waitMs":600000}}}}`, "10s", true},
		{`{"experimental":{"agentls":{"diagnostics":{"waitMs":"soon"}}}}`, "2s", true},
	}
	for _, tt := range tests {
		var raw json.RawMessage = []byte(tt.caps)
		d, ok := ParseClientCapabilities(raw).DiagnosticsWait()
		if d.String() != tt.want || ok != tt.wantOK {
			t.Errorf("%s: %s %v, want %s %v", tt.caps, d, ok, tt.want, tt.wantOK)
		}
	}
}
