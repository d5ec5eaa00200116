package session

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentls/agentls/clients"
)

func respContent(outputs ...string) clients.Content {
	c := clients.Content{Role: clients.RoleUser}
	for i, o := range outputs {
		c.Parts = append(c.Parts, respPart(string(rune('a'+i)), "read_file", o))
	}
	return c
}

func TestResponseCap(t *testing.T) {
	t.Parallel()
	x := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name     string
		contents []clients.Content
		budget   int
		want     int // -1: any cap that makes the contents fit
	}{
		{"fits whole", []clients.Content{user("q"), respContent(x(100))}, 10000, 0},
		{"no responses to cut", []clients.Content{user(x(5000))}, 1000, 0},
		{"one large output", []clients.Content{user("q"), respContent(x(50000))}, 20000, -1},
		{"small outputs stay whole, large ones share the rest", []clients.Content{respContent(x(2000), x(30000), x(40000))}, 20000, -1},
		{"never below the floor", []clients.Content{respContent(x(50000), x(50000))}, 100, minResponseCap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := responseCap(tt.contents, tt.budget)
			if tt.want >= 0 {
				if got != tt.want {
					t.Errorf("responseCap = %d, want %d", got, tt.want)
				}
				return
			}
			if got < minResponseCap {
				t.Fatalf("responseCap = %d", got)
			}
			total := 0
			for _, c := range shortenResponses(tt.contents, got) {
				total += size(c)
			}
			// Each shortened string gains a marker of about a hundred bytes.
			if total > tt.budget+300 || total < tt.budget*9/10 {
				t.Errorf("cap %d gives %d bytes for a budget of %d: not filled, or over", got, total, tt.budget)
			}
		})
	}
	// Outputs shorter than the cap keep their share whole.
	c := []clients.Content{respContent(x(2000), x(30000), x(40000))}
	limit := responseCap(c, 20000)
	short := shortenResponses(c, limit)
	if out := short[0].Parts[0].FunctionResponse.Response["output"]; out != x(2000) {
		t.Errorf("the short output was cut (cap %d)", limit)
	}
}

func TestShortenResponses(t *testing.T) {
	t.Parallel()
	long := "HEAD" + strings.Repeat("é", 3000) + "TAIL"
	orig := []clients.Content{
		user(long),
		respContent(long, "short"),
		{Role: clients.RoleUser, Parts: []clients.Part{{FunctionResponse: &clients.FunctionResponse{
			Name: "x", Response: map[string]any{"error": long, "count": 3},
		}}}},
	}
	before := js(t, orig)
	got := shortenResponses(orig, 1000)
	if js(t, orig) != before {
		t.Fatal("the original contents were changed")
	}
	if answer(got[0]) != long {
		t.Error("a prompt was shortened")
	}
	out := got[1].Parts[0].FunctionResponse.Response["output"].(string)
	if !strings.HasPrefix(out, "Output too large. Showing the first ") || !strings.Contains(out, "\nHEAD") ||
		!strings.HasSuffix(out, "TAIL") || !strings.Contains(out, "characters omitted] ...") {
		t.Errorf("shortened output %q", out)
	}
	if !utf8.ValidString(out) || len(out) > 1200 {
		t.Errorf("shortened output: %d bytes, valid UTF-8 %v", len(out), utf8.ValidString(out))
	}
	if got[1].Parts[1].FunctionResponse.Response["output"] != "short" {
		t.Error("a short output was changed")
	}
	resp := got[2].Parts[0].FunctionResponse.Response
	if e, _ := resp["error"].(string); len(e) > 1200 || resp["count"] != 3 {
		t.Errorf("error response %v", resp)
	}
	if same := shortenResponses(orig, 0); js(t, same) != before {
		t.Error("a limit of 0 changed the contents")
	}
}
