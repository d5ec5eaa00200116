package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestTempOwner(t *testing.T) {
	tests := []struct {
		name string
		want int
	}{
		{".f.go.agentls-1234-k3x9z", 1234},
		{".a.b.agentls-c.agentls-7-0", 7},
		{".f.agentls-1234-", 0},
		{".f.agentls-1234", 0},
		{".f.agentls--abc", 0},
		{".f.agentls-0-abc", 0},
		{".f.agentls-+12-abc", 0},
		{".f.agentls-12-ABC", 0},
		{".f.agentls-12-abc.bak", 0},
		{".f.agentls-12-abc-def", 0},
		{".f.agentls-12-" + strings.Repeat("z", 14), 0},
		{"f.agentls-12-abc", 0},
		{"..agentls-12-abc", 0},
		{".agentls-12-abc", 0},
		{".f.agentls-k3x9z", 0}, // an older agentls's: whose, is unknown
		{"main.go", 0},
	}
	for _, tt := range tests {
		if got := tempOwner(tt.name); got != tt.want {
			t.Errorf("tempOwner(%q) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// The name of a temporary file is one tempOwner recognises as this process's, also for
// a target whose name is too long to be kept whole.
func TestCreateTempName(t *testing.T) {
	dir := t.TempDir()
	for _, base := range []string{"f.go", strings.Repeat("é", 200)} {
		f, err := createTemp(dir, base, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		name := filepath.Base(f.Name())
		if got := tempOwner(name); got != os.Getpid() {
			t.Errorf("tempOwner(%q) = %d, want this process, %d", name, got, os.Getpid())
		}
		if len(name) > 255 {
			t.Errorf("temporary name %q is %d bytes long", name, len(name))
		}
		if !strings.HasPrefix(name, "."+base[:min(len(base), 20)]) {
			t.Errorf("temporary name %q does not start with the target's", name)
		}
		if !strings.Contains(name, tempMark+strconv.Itoa(os.Getpid())+"-") {
			t.Errorf("temporary name %q lacks the pid", name)
		}
	}
}
