// Package sandbox holds the commands agentls runs in an OS sandbox: what a contained
// command may write, what it may not see, whether it may reach the network, and how
// that is enforced on this machine.
//
// A contained command is started as agentls itself (the helper), with the policy in
// the environment variable [EnvHelper]; package sandbox/reexec, imported first by
// cmd/agentls, finds it there before the rest of agentls initialises, applies the
// policy to its own process and executes the command in place, so the command keeps
// the process id, process group and open files the caller gave it. On Linux the
// helper runs, in order: the mounts of a private mount namespace (read-only paths
// inside the workspace, hidden secrets) and loopback of a private network namespace,
// where unprivileged user namespaces work; dropping every capability; no_new_privs;
// Landlock (writes only under the writable paths, TCP refused where the network is
// off and no network namespace holds it, signals and abstract unix sockets scoped);
// a seccomp filter refusing new internet sockets where the network is off without a
// network namespace; then exec.
//
// agentls itself is never restricted: only the processes it starts.
package sandbox

import (
	"fmt"
	"strings"
)

// EnvHelper is the environment variable that carries a helper's [Spec]. It is removed
// before the command runs.
const EnvHelper = "AGENTLS_SANDBOX_HELPER"

// ExitSetup is the exit status of a helper that could not set the sandbox up; its
// standard error says why. It is bash's status for a command that cannot execute.
const ExitSetup = 126

// EnvMachine, when set to "landlock" or "none" in agentls's environment, makes Probe
// report less than the machine has (on Linux): user namespaces unusable, or Landlock
// too. It is how the fallbacks are tried on a machine that has everything.
const EnvMachine = "AGENTLS_SANDBOX_MACHINE"

// Spec is what the helper is told: the program to execute and the policy to hold it
// in. It travels as JSON in [EnvHelper].
type Spec struct {
	// Path is the program to execute, already looked up; its arguments are the
	// helper's own.
	Path string `json:"path"`
	// Policy is what the program may do.
	Policy Policy `json:"policy"`
	// Probe makes the helper set everything up and exit 0 instead of executing Path: it
	// is how Probe finds out whether the namespaces work here.
	Probe bool `json:"probe,omitempty"`
	// Watch, when not 0, is the descriptor of a unix socket on which the helper sends
	// the listener of a seccomp filter that stops each system call changing a path
	// until agentls has seen it (see [Sandbox.Watch]), or why it could not install one.
	Watch int `json:"watch,omitempty"`
}

// Policy is what a contained command may do. Paths are absolute and cleaned.
type Policy struct {
	// Writable are the directories and files the command may change, create and
	// delete under; everything else is read-only to it.
	Writable []string `json:"writable"`
	// ReadOnly are paths inside Writable that stay read-only (a repository's
	// .git/config and hooks, agentls's and the editors' settings folders). Only a mount
	// namespace can hold them; without one the consent analysis guards them.
	ReadOnly []string `json:"readOnly,omitempty"`
	// Hidden are paths the command cannot read (the user's keys and agentls's own
	// configuration): an empty, inaccessible directory or an empty file in their place.
	// Only a mount namespace can hide them.
	Hidden []string `json:"hidden,omitempty"`
	// Readable are folders inside Hidden ones that the command may still read (not
	// change): an extension's folder in ~/.gemini/extensions, for its own hooks.
	Readable []string `json:"readable,omitempty"`
	// Network lets the command reach the network. Without it a network namespace of its
	// own (only its own loopback), or where none can be made, Landlock's TCP rules and a
	// seccomp filter refusing internet sockets.
	Network bool `json:"network,omitempty"`
	// Namespaces runs the command in user, mount and (without Network) network
	// namespaces of its own.
	Namespaces bool `json:"namespaces,omitempty"`
	// LandlockABI is the Landlock ABI version to enforce at most; 0 means none.
	LandlockABI int `json:"landlockABI,omitempty"`
}

// Level says how contained commands are.
type Level string

// The levels of containment, strongest first.
const (
	// LevelNamespaces is Landlock plus user, mount and network namespaces.
	LevelNamespaces Level = "landlock+namespaces"
	// LevelLandlock is Landlock alone: writes are confined, but paths inside the
	// workspace cannot be kept read-only nor secrets hidden, and the network is held
	// by TCP rules and a seccomp filter.
	LevelLandlock Level = "landlock"
	// LevelNone is no containment.
	LevelNone Level = "none"
)

// Status is what the sandbox does on this machine, as `agentls sandbox`, the editors
// and each shell result report it.
type Status struct {
	// Contained says that commands run contained.
	Contained bool `json:"contained"`
	// Level is how.
	Level Level `json:"level"`
	// Reason says why commands are not contained, or what is weaker than the full
	// sandbox; "" when nothing is missing.
	Reason string `json:"reason,omitempty"`
	// Machine is what this machine supports.
	Machine Machine `json:"machine"`
	// Writable, ReadOnly and Hidden are the policy's paths; Network whether commands may
	// reach the network.
	Writable []string `json:"writable,omitempty"`
	ReadOnly []string `json:"readOnly,omitempty"`
	Hidden   []string `json:"hidden,omitempty"`
	Network  bool     `json:"network"`
	// AutoAllow is the setting tools.sandbox.autoAllow.
	AutoAllow bool `json:"autoAllow"`
	// Summary is the status in one line, for a shell result or a status bar:
	// "contained (landlock+namespaces, network off)" or "not contained: REASON".
	Summary string `json:"summary"`
}

// summary is Status.Summary.
func (s Status) summary() string {
	if !s.Contained {
		return "not contained: " + s.Reason
	}
	var b strings.Builder
	fmt.Fprintf(&b, "contained (%s", s.Level)
	if s.Network {
		b.WriteString(", network allowed")
	} else {
		b.WriteString(", network off")
	}
	b.WriteString(")")
	if s.Reason != "" {
		b.WriteString("; " + s.Reason)
	}
	return b.String()
}

// Machine is what this machine can do to contain a command.
type Machine struct {
	// OS is runtime.GOOS.
	OS string `json:"os"`
	// LandlockABI is the kernel's Landlock ABI version; 0 when Landlock is unavailable,
	// for the reason in LandlockError.
	LandlockABI   int    `json:"landlockABI"`
	LandlockError string `json:"landlockError,omitempty"`
	// UserNamespaces says that unprivileged user, mount and network namespaces work
	// (tried for real); if not, UserNamespacesError says why.
	UserNamespaces      bool   `json:"userNamespaces"`
	UserNamespacesError string `json:"userNamespacesError,omitempty"`
	// Seccomp says that seccomp filters can be installed.
	Seccomp bool `json:"seccomp"`
}
