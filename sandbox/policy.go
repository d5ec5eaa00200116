package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Enabled is the setting tools.sandbox.enabled.
type Enabled string

// The values of tools.sandbox.enabled.
const (
	// EnabledAuto contains commands wherever the machine supports it and says so where
	// it does not. It is the default.
	EnabledAuto Enabled = "auto"
	// EnabledOn requires containment: where the machine has none, commands are refused.
	EnabledOn Enabled = "true"
	// EnabledOff runs commands uncontained.
	EnabledOff Enabled = "false"
)

// Config is the sandbox's part of the settings, tools.sandbox.
type Config struct {
	// Enabled is "auto" (also ""), "true" or "false".
	Enabled Enabled
	// Network lets contained commands reach the network.
	Network bool
	// WritablePaths are writable besides the defaults; HiddenPaths hidden besides them.
	// "~/" at their start is the home directory; relative paths are relative to the
	// first workspace root.
	WritablePaths []string
	HiddenPaths   []string
	// AutoAllow lets a contained command that no rule names run without a question in
	// the default approval mode.
	AutoAllow bool
}

// Options are the facts of this agentls process that a policy depends on.
type Options struct {
	// Roots are the workspace roots: writable, with their sensitive paths read-only.
	Roots []string
	// ConfigDirs are agentls's and Gemini CLI's configuration folders: hidden.
	ConfigDirs []string
	// Helper is the sandbox helper program (see Helper); "" means there is none, and
	// commands cannot be contained.
	Helper string
}

// Sandbox contains the commands of one workspace on this machine. Its methods are
// safe for concurrent use; it does not change once made.
type Sandbox struct {
	status Status
	policy Policy
	self   string
	// refuse is why commands must be refused: containment is required and missing.
	refuse string
	// secrets are the paths the policy keeps from commands, those a workspace root
	// lies in included (Secret).
	secrets []string
}

// sensitiveInRoot are the paths inside a workspace root that a contained command may
// not change: what makes git, agentls, Gemini CLI or the editor run code or trust more.
var sensitiveInRoot = []string{".git/config", ".git/hooks", ".agentls", ".gemini", ".vscode"}

// secretsInHome are the folders under the home directory that hold the user's keys.
var secretsInHome = []string{".ssh", ".gnupg", ".aws", ".config/gcloud", ".docker", ".kube", ".netrc", ".git-credentials"}

// New returns the sandbox for opts on machine m under settings c. The error is for
// settings that cannot be honoured, naming the key.
func New(m Machine, c Config, opts Options) (*Sandbox, error) {
	switch c.Enabled {
	case "":
		c.Enabled = EnabledAuto
	case EnabledAuto, EnabledOn, EnabledOff:
	default:
		return nil, fmt.Errorf("tools.sandbox.enabled: %q is not one of \"auto\", true, false", string(c.Enabled))
	}
	home, _ := os.UserHomeDir()
	abs := func(key, p string) (string, error) {
		switch {
		case p == "~" || strings.HasPrefix(p, "~/"):
			if home == "" {
				return "", fmt.Errorf("%s: %q: the home directory is not known", key, p)
			}
			p = filepath.Join(home, p[1:])
		case !filepath.IsAbs(p):
			if len(opts.Roots) == 0 {
				return "", fmt.Errorf("%s: %q is relative and there is no workspace root", key, p)
			}
			p = filepath.Join(opts.Roots[0], p)
		}
		return filepath.Clean(p), nil
	}
	s := &Sandbox{self: opts.Helper}
	p := Policy{Network: c.Network}
	for _, r := range opts.Roots {
		p.Writable = append(p.Writable, filepath.Clean(r))
		for _, rel := range sensitiveInRoot {
			p.ReadOnly = append(p.ReadOnly, filepath.Join(r, rel))
		}
	}
	p.Writable = append(p.Writable, defaultWritable(home)...)
	for _, w := range c.WritablePaths {
		a, err := abs("tools.sandbox.writablePaths", w)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(a); err != nil {
			return nil, fmt.Errorf("tools.sandbox.writablePaths: %q: %w", w, pathErr(err))
		}
		p.Writable = append(p.Writable, a)
	}
	var hidden []string
	if home != "" {
		for _, rel := range secretsInHome {
			hidden = append(hidden, filepath.Join(home, rel))
		}
	}
	hidden = append(hidden, opts.ConfigDirs...)
	hidden = append(hidden, "/var/run/docker.sock", "/run/docker.sock")
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		// The session bus and systemd's socket start programs outside any sandbox
		// (systemd-run --user); the agents hold keys.
		for _, rel := range []string{"bus", "systemd", "gnupg", "docker.sock", "podman", "keyring", "ssh-agent.socket"} {
			hidden = append(hidden, filepath.Join(rt, rel))
		}
	}
	if sock := os.Getenv("SSH_AUTH_SOCK"); filepath.IsAbs(sock) {
		hidden = append(hidden, sock)
	}
	for _, h := range c.HiddenPaths {
		a, err := abs("tools.sandbox.hiddenPaths", h)
		if err != nil {
			return nil, err
		}
		hidden = append(hidden, a)
	}
	for _, h := range hidden {
		h = filepath.Clean(h)
		s.secrets = append(s.secrets, h)
		// A folder that holds a workspace root is not hidden: the command works there.
		if slices.ContainsFunc(opts.Roots, func(r string) bool { return within(r, h) }) {
			continue
		}
		p.Hidden = append(p.Hidden, h)
	}
	p.Writable = dedupe(p.Writable)
	p.Hidden = dedupe(p.Hidden)

	st := Status{Machine: m, Network: c.Network, AutoAllow: c.AutoAllow}
	switch {
	case c.Enabled == EnabledOff:
		st.Level, st.Reason = LevelNone, "tools.sandbox is false in the settings"
	case s.self == "":
		st.Level, st.Reason = LevelNone, "this program has no sandbox helper (agentls's own executable is one)"
	case m.LandlockABI == 0 && !m.UserNamespaces:
		st.Level, st.Reason = LevelNone, machineReason(m)
	case m.LandlockABI == 0:
		// Namespaces alone would confine nothing but the mounts listed; the writes
		// anywhere else are Landlock's.
		st.Level, st.Reason = LevelNone, machineReason(m)
	case m.UserNamespaces:
		st.Contained, st.Level = true, LevelNamespaces
		p.Namespaces, p.LandlockABI = true, m.LandlockABI
	default:
		st.Contained, st.Level = true, LevelLandlock
		p.LandlockABI = m.LandlockABI
		st.Reason = "Landlock only (" + m.UserNamespacesError + "): paths inside the workspace such as .git/hooks are not kept read-only and secrets such as ~/.ssh are not hidden"
		if !c.Network {
			if m.LandlockABI < 4 && !m.Seccomp {
				st.Reason += "; the network is not held (Landlock ABI < 4 and no seccomp)"
			} else if !m.Seccomp {
				st.Reason += "; only TCP is held (no seccomp)"
			}
		}
	}
	if !st.Contained && c.Enabled == EnabledOn {
		s.refuse = "tools.sandbox.enabled is true but commands cannot be contained here: " + st.Reason
	}
	if st.Contained {
		st.Writable = p.Writable
		if p.Namespaces {
			// Only a mount namespace keeps these read-only and hides those.
			st.ReadOnly, st.Hidden = p.ReadOnly, p.Hidden
		}
	}
	st.Summary = st.summary()
	s.status, s.policy = st, p
	return s, nil
}

// machineReason says why machine m cannot contain commands.
func machineReason(m Machine) string {
	var why []string
	if m.LandlockError != "" {
		why = append(why, "Landlock: "+m.LandlockError)
	} else if m.LandlockABI == 0 {
		why = append(why, "no Landlock")
	}
	if m.UserNamespacesError != "" {
		why = append(why, "user namespaces: "+m.UserNamespacesError)
	}
	if len(why) == 0 {
		return "this system (" + m.OS + ") has no sandbox agentls can use"
	}
	return strings.Join(why, "; ")
}

// defaultWritable are the places builds and version control write outside the
// workspace: the temporary directory and the caches of Go, npm and the XDG cache.
func defaultWritable(home string) []string {
	out := []string{os.TempDir(), "/dev/shm"}
	if cache, err := os.UserCacheDir(); err == nil {
		// Made if missing: a contained command could not create it in the read-only
		// home, and go build's first cache would fail.
		_ = os.MkdirAll(cache, 0o700)
		out = append(out, cache)
	}
	if v := os.Getenv("GOCACHE"); filepath.IsAbs(v) {
		out = append(out, v)
	}
	switch v := os.Getenv("GOMODCACHE"); {
	case filepath.IsAbs(v):
		out = append(out, v)
	case os.Getenv("GOPATH") != "":
		for _, gp := range filepath.SplitList(os.Getenv("GOPATH")) {
			if filepath.IsAbs(gp) {
				out = append(out, filepath.Join(gp, "pkg", "mod"))
				break
			}
		}
	case home != "":
		out = append(out, filepath.Join(home, "go", "pkg", "mod"))
	}
	if v := os.Getenv("npm_config_cache"); filepath.IsAbs(v) {
		out = append(out, v)
	} else if home != "" {
		out = append(out, filepath.Join(home, ".npm"))
	}
	return out
}

// Secret returns the path the policy keeps from commands (the user's keys, agentls's
// and Gemini CLI's configuration, tools.sandbox.hiddenPaths, the agents' sockets)
// that is or holds path, or "" when there is none. A workspace root in such a path
// makes New leave it readable, so a front end that takes roots from a client refuses
// those (see toolbox.Options.CheckRoots).
func (s *Sandbox) Secret(path string) string {
	path = filepath.Clean(path)
	for _, h := range s.secrets {
		if within(path, h) {
			return h
		}
	}
	return ""
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// dedupe drops repeated paths, keeping the first of each.
func dedupe(paths []string) []string {
	out := paths[:0]
	for _, p := range paths {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// pathErr turns a stat error into words without repeating the path.
func pathErr(err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("it does not exist")
	case errors.Is(err, os.ErrPermission):
		return errors.New("permission denied")
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Reading returns a sandbox like s whose commands may also read (not change) dirs,
// where they lie in a hidden folder: an extension's hooks read their own scripts in
// the extension's folder, which lies in Gemini CLI's hidden configuration folder.
// Nothing else of the hidden folder shows: only the names on the way to dirs.
func (s *Sandbox) Reading(dirs ...string) *Sandbox {
	out := *s
	out.policy.Readable = slices.Clone(s.policy.Readable)
	for _, d := range dirs {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || !slices.ContainsFunc(s.policy.Hidden, func(h string) bool { return within(d, h) && h != d }) {
			continue
		}
		out.policy.Readable = append(out.policy.Readable, d)
	}
	return &out
}

// Status returns what the sandbox does.
func (s *Sandbox) Status() Status { return s.status }

// Contained reports whether commands run contained.
func (s *Sandbox) Contained() bool { return s.status.Contained }

// Err is why commands must not run at all: containment is required and this machine
// has none. It is nil otherwise.
func (s *Sandbox) Err() error {
	if s.refuse == "" {
		return nil
	}
	return errors.New(s.refuse)
}

// EnvPolicy carries a sandbox, encoded by Encode, to `agentls sandbox -- COMMAND` run
// where agentls cannot start the command itself (an ACP client's terminal), so that
// it is held to exactly the policy of the agentls that asked, whatever settings that
// terminal's environment would load.
const EnvPolicy = "AGENTLS_SANDBOX_POLICY"

// encoded is what Encode writes.
type encoded struct {
	Status Status `json:"status"`
	Policy Policy `json:"policy"`
	Refuse string `json:"refuse,omitempty"`
}

// Encode returns s as text for EnvPolicy.
func (s *Sandbox) Encode() string {
	b, _ := json.Marshal(encoded{Status: s.status, Policy: s.policy, Refuse: s.refuse}) // plain data: cannot fail
	return string(b)
}

// Decode returns the sandbox Encode described, run through helper (see Helper).
func Decode(text, helper string) (*Sandbox, error) {
	var e encoded
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvPolicy, err)
	}
	if e.Status.Contained && helper == "" {
		return nil, fmt.Errorf("%s: this program has no sandbox helper", EnvPolicy)
	}
	return &Sandbox{status: e.Status, policy: e.Policy, refuse: e.Refuse, self: helper}, nil
}
