package tools

import (
	"slices"
	"testing"
)

func TestWithoutVars(t *testing.T) {
	env := []string{"A=1", "AB=2", "B=x=y", "=odd", "C"}
	got := withoutVars(slices.Clone(env), []string{"A", "B", "C"})
	if want := []string{"AB=2", "=odd"}; !slices.Equal(got, want) {
		t.Errorf("withoutVars = %q, want %q", got, want)
	}
	if got := withoutVars(slices.Clone(env), nil); !slices.Equal(got, env) {
		t.Errorf("withoutVars with no names = %q", got)
	}
}
