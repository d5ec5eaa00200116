package confirm

import (
	"strings"
	"testing"
)

// TestQuestionChoices checks the answers an ask_user question offers to choose from,
// which every front end that shows choices offers alike.
func TestQuestionChoices(t *testing.T) {
	opts := []Option{{Label: "Go"}, {Label: "Rust"}}
	cases := []struct {
		q    Question
		want string
	}{
		{Question{Type: QuestionChoice, Options: opts}, "Go|Rust"},
		{Question{Options: opts}, "Go|Rust"}, // the type defaults to choice
		{Question{Type: QuestionYesNo, Options: opts}, "Yes|No"},
		{Question{Type: QuestionText, Options: opts}, ""},
		{Question{Type: "other"}, ""},
	}
	for _, tc := range cases {
		if got := strings.Join(tc.q.Choices(), "|"); got != tc.want {
			t.Errorf("%+v: choices %q, want %q", tc.q, got, tc.want)
		}
	}
}
