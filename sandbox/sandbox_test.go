package sandbox_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentls/agentls/sandbox"
)

// levels are the containments a test runs at: namespaces and Landlock, and Landlock
// alone, as the machine can give them.
var levels = []sandbox.Level{sandbox.LevelNamespaces, sandbox.LevelLandlock}

// machine returns this machine's support cut down to level; it skips the test, or
// fails it under AGENTLS_REQUIRE_SANDBOX=1, when the machine cannot give level.
func machine(t *testing.T, level sandbox.Level) sandbox.Machine {
	t.Helper()
	m := sandbox.Probe(self(t))
	missing := ""
	switch {
	case m.LandlockABI == 0:
		missing = "Landlock: " + m.LandlockError
	case level == sandbox.LevelNamespaces && !m.UserNamespaces:
		missing = "user namespaces: " + m.UserNamespacesError
	}
	if missing != "" {
		if os.Getenv("AGENTLS_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("AGENTLS_REQUIRE_SANDBOX=1 but this machine lacks %s", missing)
		}
		t.Skipf("this machine lacks %s", missing)
	}
	if level == sandbox.LevelLandlock {
		m.UserNamespaces, m.UserNamespacesError = false, "cut down by the test"
	}
	return m
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// place is a workspace and its surroundings: ws (the root), tmp (the temporary
// directory agentls gives commands) and outside, which no contained command may write.
type place struct{ base, ws, tmp, outside string }

func newPlace(t *testing.T) place {
	t.Helper()
	base := t.TempDir()
	p := place{base: base, ws: filepath.Join(base, "ws"), tmp: filepath.Join(base, "tmp"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{p.ws, p.tmp, p.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The policy's temporary directory is this one, not the /tmp that holds base.
	t.Setenv("TMPDIR", p.tmp)
	return p
}

func newBox(t *testing.T, m sandbox.Machine, c sandbox.Config, p place) *sandbox.Sandbox {
	t.Helper()
	box, err := sandbox.New(m, c, sandbox.Options{Roots: []string{p.ws}, Helper: self(t)})
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// bash runs script with bash in dir, contained in box unless box is nil.
func bash(t *testing.T, box *sandbox.Sandbox, dir, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	if box != nil {
		if err := box.Wrap(cmd); err != nil {
			t.Fatal(err)
		}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestWritesOutsideAreRefused tries each way of writing a file outside the writable
// paths: none leaves its marker when contained, and each does uncontained.
func TestWritesOutsideAreRefused(t *testing.T) {
	writes := []struct{ name, script string }{
		{"redirection", `echo pwned > "$M"`},
		{"append", `echo pwned >> "$M"`},
		{"output operand", `printf 'a\na\n' > notes.txt; uniq notes.txt "$M"`},
		{"sort -o", `echo b > in.txt; sort -o "$M" in.txt`},
		{"tee", `echo pwned | tee "$M"`},
		{"dd", `echo pwned | dd of="$M" status=none`},
		{"cp", `echo pwned > in.txt; cp in.txt "$M"`},
		{"mkdir", `mkdir "$M"`},
		{"symlink", `ln -s /etc/passwd "$M"`},
		{"rename out", `echo pwned > in.txt; mv in.txt "$M"`},
		{"through a link in the workspace", `ln -s "$(dirname "$M")" out; echo pwned > out/$(basename "$M")`},
		{"script the workspace ships", `printf '#!/bin/sh\necho pwned > "$1"\n' > x.sh; chmod +x x.sh; ./x.sh "$M"`},
		{"python-free interpreter", `awk -v m="$M" 'BEGIN { print "pwned" > m }'`},
	}
	for _, level := range levels {
		t.Run(string(level), func(t *testing.T) {
			m := machine(t, level)
			for _, w := range writes {
				t.Run(w.name, func(t *testing.T) {
					p := newPlace(t)
					box := newBox(t, m, sandbox.Config{}, p)
					if got := box.Status().Level; got != level {
						t.Fatalf("level %s, want %s (%s)", got, level, box.Status().Reason)
					}
					marker := filepath.Join(p.outside, "marker")
					script := "M=" + marker + "; " + w.script
					out, _ := bash(t, box, p.ws, script)
					if exists(marker) {
						t.Fatalf("contained, %q wrote %s; output:\n%s", w.script, marker, out)
					}
					// The control: the same payload uncontained leaves its marker.
					os.RemoveAll(filepath.Join(p.ws, "out"))
					if out, err := bash(t, nil, p.ws, script); err != nil || !exists(marker) {
						t.Fatalf("uncontained, %q left no marker (payload dead?): %v\n%s", w.script, err, out)
					}
				})
			}
		})
	}
}

// TestWritesInsideWork: the workspace, the temporary directory and /dev/null stay
// writable, and a failing write is explained.
func TestWritesInsideWork(t *testing.T) {
	for _, level := range levels {
		t.Run(string(level), func(t *testing.T) {
			p := newPlace(t)
			box := newBox(t, machine(t, level), sandbox.Config{}, p)
			out, err := bash(t, box, p.ws, `set -e
echo a > ws.txt; mkdir -p sub/dir; mv ws.txt sub/dir/; rm -r sub
echo b > "$TMPDIR/t.txt"; cat "$TMPDIR/t.txt"
echo c > /dev/null; echo d | cat > /dev/stdout
f=$(mktemp); echo e > "$f"; rm "$f"`)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			out, err = bash(t, box, p.ws, "echo x > "+filepath.Join(p.outside, "f"))
			if err == nil {
				t.Fatalf("write outside succeeded: %s", out)
			}
			why := box.Explain(out, p.ws)
			if !strings.Contains(why, filepath.Join(p.outside, "f")+" is outside the paths") {
				t.Fatalf("Explain(%q) = %q", out, why)
			}
		})
	}
}

// TestSensitivePathsInsideTheWorkspace: with namespaces, .git/hooks, .git/config and
// the settings folders stay read-only, while git commit works.
func TestSensitivePathsInsideTheWorkspace(t *testing.T) {
	m := machine(t, sandbox.LevelNamespaces)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	p := newPlace(t)
	git := `git -c user.name=t -c user.email=t@example.com`
	if out, err := bash(t, nil, p.ws, "git init -q && mkdir -p .vscode .gemini .agentls && "+git+" commit -q --allow-empty -m init"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	box := newBox(t, m, sandbox.Config{}, p)
	attacks := []struct{ name, script, path string }{
		{"hook", `printf '#!/bin/sh\ntouch "$M"\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`, ".git/hooks/pre-commit"},
		{"config", `git config core.fsmonitor 'touch $M'`, ".git/config"},
		{"vscode tasks", `echo '{}' > .vscode/tasks.json`, ".vscode/tasks.json"},
		{"gemini settings", `echo '{}' > .gemini/settings.json`, ".gemini/settings.json"},
		{"agentls settings", `echo '{}' > .agentls/settings.json`, ".agentls/settings.json"},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			before, _ := os.ReadFile(filepath.Join(p.ws, ".git/config"))
			out, _ := bash(t, box, p.ws, "M="+filepath.Join(p.outside, "m")+"; "+a.script)
			after, _ := os.ReadFile(filepath.Join(p.ws, ".git/config"))
			if a.path != ".git/config" && exists(filepath.Join(p.ws, a.path)) || string(before) != string(after) {
				t.Fatalf("%s changed: %s", a.path, out)
			}
			if why := box.Explain(out, p.ws); !strings.Contains(why, "read-only inside the sandbox") {
				t.Errorf("Explain(%q) = %q", out, why)
			}
		})
	}
	if out, err := bash(t, box, p.ws, "echo hi > f.txt && git add f.txt && "+git+" commit -q -m 'from the sandbox' && git log --oneline | wc -l"); err != nil || strings.TrimSpace(out) != "2" {
		t.Fatalf("git commit in the sandbox: %v\n%s", err, out)
	}
}

// TestHiddenPaths: hidden folders and files read as empty or refused; uncontained
// they hold their secret.
func TestHiddenPaths(t *testing.T) {
	m := machine(t, sandbox.LevelNamespaces)
	p := newPlace(t)
	secrets := filepath.Join(p.outside, "keys")
	os.MkdirAll(secrets, 0o700)
	os.WriteFile(filepath.Join(secrets, "id"), []byte("SECRET-KEY"), 0o600)
	token := filepath.Join(p.outside, "token")
	os.WriteFile(token, []byte("SECRET-TOKEN"), 0o600)
	box := newBox(t, m, sandbox.Config{HiddenPaths: []string{secrets, token}}, p)
	script := fmt.Sprintf("cat %s/id; cat %s; ls %s", secrets, token, secrets)
	out, _ := bash(t, box, p.ws, script)
	if strings.Contains(out, "SECRET") {
		t.Fatalf("a hidden secret was read: %s", out)
	}
	if out, _ := bash(t, nil, p.ws, script); !strings.Contains(out, "SECRET-KEY") || !strings.Contains(out, "SECRET-TOKEN") {
		t.Fatalf("control: %s", out)
	}
}

// TestReadingInHidden: Reading keeps one folder of a hidden folder readable, not
// writable; the rest of the hidden folder, a sibling folder and file included, stays
// hidden, and the sandbox it came from still hides the folder too.
func TestReadingInHidden(t *testing.T) {
	m := machine(t, sandbox.LevelNamespaces)
	p := newPlace(t)
	conf := filepath.Join(p.outside, "gemini")
	ext := filepath.Join(conf, "extensions", "guard")
	for path, content := range map[string]string{
		filepath.Join(ext, "check.sh"):                     "SCRIPT-BODY",
		filepath.Join(conf, "extensions", "other", "x.sh"): "SECRET-OTHER",
		filepath.Join(conf, "oauth_creds.json"):            "SECRET-CREDS",
	} {
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte(content), 0o600)
	}
	box := newBox(t, m, sandbox.Config{HiddenPaths: []string{conf}}, p)
	script := fmt.Sprintf("cat %s/check.sh; cat %s/extensions/other/x.sh; cat %s/oauth_creds.json; ls %s; touch %s/new && echo WROTE", ext, conf, conf, conf, ext)
	out, _ := bash(t, box.Reading(ext), p.ws, script)
	if !strings.Contains(out, "SCRIPT-BODY") || strings.Contains(out, "SECRET") || strings.Contains(out, "WROTE") || exists(filepath.Join(ext, "new")) {
		t.Fatalf("reading %s: %s", ext, out)
	}
	if out, _ := bash(t, box, p.ws, script); strings.Contains(out, "SCRIPT-BODY") {
		t.Fatalf("the sandbox Reading came from reads it too: %s", out)
	}
	if out, _ := bash(t, box.Reading(p.outside), p.ws, script); strings.Contains(out, "SCRIPT-BODY") || strings.Contains(out, "SECRET") {
		t.Fatalf("a folder holding the hidden one made readable: %s", out)
	}
	// An extension folder that is a link to a folder the sandbox hides elsewhere
	// (a key folder) does not show it.
	keys := filepath.Join(p.outside, "keys")
	os.MkdirAll(keys, 0o700)
	os.WriteFile(filepath.Join(keys, "id"), []byte("SECRET-KEY"), 0o600)
	linked := filepath.Join(conf, "extensions", "linked")
	if err := os.Symlink(keys, linked); err != nil {
		t.Fatal(err)
	}
	box2 := newBox(t, m, sandbox.Config{HiddenPaths: []string{conf, keys}}, p)
	if out, _ := bash(t, box2.Reading(linked), p.ws, "cat "+linked+"/id; cat "+keys+"/id"); strings.Contains(out, "SECRET-KEY") {
		t.Fatalf("a linked extension folder showed a hidden folder: %s", out)
	}
}

// listener counts the connections made to a loopback port of the host.
func listener(t *testing.T) (port string, count *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	count = new(atomic.Int32)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			count.Add(1)
			bufio.NewReader(c).ReadString('\n')
			c.Close()
		}
	}()
	_, port, _ = net.SplitHostPort(l.Addr().String())
	return port, count
}

// TestNetwork: with the network off no connection reaches the host, at either level;
// with it on, and uncontained, one does.
func TestNetwork(t *testing.T) {
	for _, level := range levels {
		t.Run(string(level), func(t *testing.T) {
			m := machine(t, level)
			p := newPlace(t)
			port, count := listener(t)
			script := "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo hi >&3"
			out, err := bash(t, newBox(t, m, sandbox.Config{}, p), p.ws, script)
			if err == nil || count.Load() != 0 {
				t.Fatalf("network off, yet connected (%d): %v %s", count.Load(), err, out)
			}
			if why := newBox(t, m, sandbox.Config{}, p).Explain(out, p.ws); !strings.Contains(why, "network") {
				t.Errorf("Explain(%q) = %q", out, why)
			}
			if out, err := bash(t, newBox(t, m, sandbox.Config{Network: true}, p), p.ws, script); err != nil {
				t.Fatalf("network on: %v %s", err, out)
			}
			if out, err := bash(t, nil, p.ws, script); err != nil {
				t.Fatalf("uncontained: %v %s", err, out)
			}
			waitCount(t, count, 2)
		})
	}
}

func waitCount(t *testing.T, c *atomic.Int32, want int32) {
	t.Helper()
	for i := 0; i < 200 && c.Load() < want; i++ {
		exec.Command("sleep", "0.01").Run()
	}
	if got := c.Load(); got != want {
		t.Fatalf("%d connections, want %d", got, want)
	}
}

// TestBuildsWork: go build and go test of a module, and npm test, run contained with
// the default policy.
func TestBuildsWork(t *testing.T) {
	m := machine(t, sandbox.LevelNamespaces)
	p := newPlace(t)
	if _, err := exec.LookPath("go"); err == nil {
		os.WriteFile(filepath.Join(p.ws, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
		os.WriteFile(filepath.Join(p.ws, "m.go"), []byte("package m\n\nfunc Two() int { return 2 }\n"), 0o644)
		os.WriteFile(filepath.Join(p.ws, "m_test.go"), []byte("package m\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal()\n\t}\n}\n"), 0o644)
		out, err := bash(t, newBox(t, m, sandbox.Config{}, p), p.ws, "go build ./... && go test -count=1 ./...")
		if err != nil {
			t.Fatalf("go build/test contained: %v\n%s", err, out)
		}
	}
	if _, err := exec.LookPath("npm"); err == nil {
		os.WriteFile(filepath.Join(p.ws, "package.json"), []byte(`{"name":"m","version":"1.0.0","scripts":{"test":"node -e \"require('fs').writeFileSync('npm-ran','ok')\""}}`), 0o644)
		out, err := bash(t, newBox(t, m, sandbox.Config{}, p), p.ws, "npm test --silent")
		if err != nil || !exists(filepath.Join(p.ws, "npm-ran")) {
			t.Fatalf("npm test contained: %v\n%s", err, out)
		}
	}
}

// TestFallbacks: each weaker machine gets the level it can give and says why; a
// required sandbox the machine cannot give refuses to run.
func TestFallbacks(t *testing.T) {
	p := newPlace(t)
	landlockOnly := sandbox.Machine{OS: "linux", LandlockABI: 7, Seccomp: true, UserNamespacesError: "operation not permitted"}
	none := sandbox.Machine{OS: "linux", LandlockError: "the kernel has no Landlock", UserNamespacesError: "operation not permitted"}
	for _, tc := range []struct {
		m         sandbox.Machine
		c         sandbox.Config
		level     sandbox.Level
		reason    string
		refused   bool
		contained bool
	}{
		{landlockOnly, sandbox.Config{}, sandbox.LevelLandlock, "not kept read-only", false, true},
		{none, sandbox.Config{}, sandbox.LevelNone, "the kernel has no Landlock", false, false},
		{none, sandbox.Config{Enabled: sandbox.EnabledOn}, sandbox.LevelNone, "no Landlock", true, false},
		{landlockOnly, sandbox.Config{Enabled: sandbox.EnabledOff}, sandbox.LevelNone, "tools.sandbox is false", false, false},
	} {
		box := newBox(t, tc.m, tc.c, p)
		st := box.Status()
		if st.Level != tc.level || st.Contained != tc.contained || !strings.Contains(st.Reason, tc.reason) {
			t.Errorf("%+v %+v: status %+v", tc.m, tc.c, st)
		}
		if !st.Contained && !strings.HasPrefix(st.Summary, "not contained: ") {
			t.Errorf("summary %q", st.Summary)
		}
		if (box.Err() != nil) != tc.refused {
			t.Errorf("%+v: Err() = %v", tc.c, box.Err())
		}
		if tc.refused {
			if err := box.Wrap(exec.Command("true")); err == nil {
				t.Errorf("Wrap ran a command that must be refused")
			}
		}
	}
}

// TestForcedMachine: AGENTLS_SANDBOX_MACHINE makes Probe report less, honestly.
func TestForcedMachine(t *testing.T) {
	t.Setenv(sandbox.EnvMachine, "landlock")
	if m := sandbox.Probe(self(t)); m.UserNamespaces || !strings.Contains(m.UserNamespacesError, sandbox.EnvMachine) {
		t.Errorf("landlock: %+v", m)
	}
	t.Setenv(sandbox.EnvMachine, "none")
	if m := sandbox.Probe(self(t)); m.LandlockABI != 0 || m.UserNamespaces || !strings.Contains(m.LandlockError, sandbox.EnvMachine) {
		t.Errorf("none: %+v", m)
	}
}

// TestBadSettings: a writable path that does not exist and an unknown enabled value
// are errors naming the key.
func TestBadSettings(t *testing.T) {
	p := newPlace(t)
	for _, tc := range []struct {
		c    sandbox.Config
		want string
	}{
		{sandbox.Config{WritablePaths: []string{filepath.Join(p.base, "nope")}}, "tools.sandbox.writablePaths"},
		{sandbox.Config{Enabled: "sometimes"}, "tools.sandbox.enabled"},
	} {
		_, err := sandbox.New(sandbox.Machine{}, tc.c, sandbox.Options{Roots: []string{p.ws}, Helper: self(t)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %s", tc.c, err, tc.want)
		}
	}
}

// TestHelperSetupFailure: a helper that cannot set up says so and exits ExitSetup;
// the command does not run.
func TestHelperSetupFailure(t *testing.T) {
	cmd := exec.Command(self(t))
	cmd.Env = append(os.Environ(), sandbox.EnvHelper+"={not json")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != sandbox.ExitSetup || !strings.Contains(string(out), "agentls sandbox: reading the policy") {
		t.Fatalf("%v: %s", err, out)
	}
}

// TestWritableFile: a file in writablePaths is writable, its neighbours are not.
func TestWritableFile(t *testing.T) {
	p := newPlace(t)
	file := filepath.Join(p.outside, "allowed.log")
	os.WriteFile(file, nil, 0o644)
	box := newBox(t, machine(t, sandbox.LevelLandlock), sandbox.Config{WritablePaths: []string{file}}, p)
	if out, err := bash(t, box, p.ws, "echo ok >> "+file); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if out, err := bash(t, box, p.ws, "echo no > "+filepath.Join(p.outside, "other")); err == nil {
		t.Fatalf("a neighbour of a writable file was written: %s", out)
	}
}
