package sandbox_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/agentls/agentls/sandbox"
)

// BenchmarkTrue is the cost of containment: /bin/true bare, contained with Landlock
// alone, and contained with the namespaces too (bench/sandbox.sh compares the peers).
func BenchmarkTrue(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	m := sandbox.Probe(self)
	dir := b.TempDir()
	levels := []struct {
		name string
		m    sandbox.Machine
	}{
		{"bare", sandbox.Machine{}},
		{"landlock", func() sandbox.Machine { l := m; l.UserNamespaces = false; l.UserNamespacesError = "off"; return l }()},
		{"namespaces", m},
	}
	for _, l := range levels {
		b.Run(l.name, func(b *testing.B) {
			sb, err := sandbox.New(l.m, sandbox.Config{}, sandbox.Options{Roots: []string{dir}, Helper: self})
			if err != nil {
				b.Fatal(err)
			}
			if l.name != "bare" && !sb.Contained() {
				b.Skipf("not contained here: %s", sb.Status().Reason)
			}
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if err := sb.Wrap(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
