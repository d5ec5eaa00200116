package session

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
)

func TestLoopDetectorCalls(t *testing.T) {
	t.Parallel()
	fc := func(name, args string) clients.FunctionCall {
		return clients.FunctionCall{Name: name, Args: json.RawMessage(args)}
	}
	tests := []struct {
		name  string
		calls []clients.FunctionCall
		want  int // index of the call that is reported, -1 for none
	}{
		{"five identical", []clients.FunctionCall{fc("a", `{"x":1}`), fc("a", `{"x":1}`), fc("a", `{"x":1}`), fc("a", `{"x":1}`), fc("a", `{"x":1}`)}, 4},
		{"key order and spacing do not matter", []clients.FunctionCall{fc("a", `{"x":1,"y":2}`), fc("a", `{"y":2,"x":1}`), fc("a", `{ "x": 1, "y": 2 }`), fc("a", `{"y":2, "x":1}`), fc("a", `{"x":1,"y":2}`)}, 4},
		{"four is fine", []clients.FunctionCall{fc("a", `{}`), fc("a", `{}`), fc("a", `{}`), fc("a", `{}`)}, -1},
		{"interrupted run starts again", []clients.FunctionCall{fc("a", `{}`), fc("a", `{}`), fc("a", `{}`), fc("a", `{}`), fc("b", `{}`), fc("a", `{}`), fc("a", `{}`)}, -1},
		{"other arguments are another call", []clients.FunctionCall{fc("a", `{"x":1}`), fc("a", `{"x":2}`), fc("a", `{"x":1}`), fc("a", `{"x":2}`), fc("a", `{"x":1}`)}, -1},
		{"same arguments, other tool", []clients.FunctionCall{fc("a", `{}`), fc("b", `{}`), fc("a", `{}`), fc("b", `{}`), fc("a", `{}`)}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d loopDetector
			got := -1
			for i, c := range tt.calls {
				if d.call(c) {
					got = i
					break
				}
			}
			if got != tt.want {
				t.Errorf("loop reported at call %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLoopDetectorText(t *testing.T) {
	t.Parallel()
	sentence := "I will now read the configuration file to check the settings. "
	tests := []struct {
		name   string
		pieces []string
		want   bool
	}{
		{"ten repeats", []string{strings.Repeat(sentence, 10)}, true},
		{"nine repeats", []string{strings.Repeat(sentence, 9)}, false},
		{"repeats split across pieces", splitEvery(strings.Repeat(sentence, 10)+"\n", 7), true},
		{"short sentences do not count", []string{strings.Repeat("Okay. ", 40)}, false},
		{"repeated lines in a code block do not count", []string{"```go\n" + strings.Repeat("\tfmt.Println(\"this line repeats in the code on purpose, fine\")\n", 12) + "```\n"}, false},
		{"different sentences", []string{func() string {
			var b strings.Builder
			for i := range 20 {
				b.WriteString(strings.Repeat("word ", 10) + string(rune('a'+i)) + ". ")
			}
			return b.String()
		}()}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d loopDetector
			d.response()
			got := false
			for _, p := range tt.pieces {
				if d.text(p) {
					got = true
					break
				}
			}
			if got != tt.want {
				t.Errorf("loop = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLoopDetectorTextResetsPerResponse(t *testing.T) {
	t.Parallel()
	sentence := "I will now read the configuration file to check the settings.\n"
	var d loopDetector
	d.response()
	if d.text(strings.Repeat(sentence, 6)) {
		t.Fatal("loop after 6")
	}
	d.response()
	if d.text(strings.Repeat(sentence, 6)) {
		t.Fatal("counts carried over from the previous response")
	}
}

func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}
