package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Probe finds out what this machine supports, trying the namespaces for real with
// the helper at self (agentls's executable).
func Probe(self string) Machine {
	m := Machine{OS: runtime.GOOS}
	if abi, err := llsys.LandlockGetABIVersion(); err != nil {
		switch {
		case errors.Is(err, unix.ENOSYS):
			m.LandlockError = "the kernel has no Landlock (Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK)"
		case errors.Is(err, unix.EOPNOTSUPP):
			m.LandlockError = "Landlock is disabled (add landlock to the lsm= boot parameter)"
		default:
			m.LandlockError = err.Error()
		}
	} else {
		m.LandlockABI = abi
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil {
		m.Seccomp = true
	}
	if err := probeNamespaces(self); err != nil {
		m.UserNamespacesError = err.Error()
	} else {
		m.UserNamespaces = true
	}
	switch os.Getenv(EnvMachine) {
	case "landlock":
		m.UserNamespaces, m.UserNamespacesError = false, "turned off by "+EnvMachine+"=landlock"
	case "none":
		m.UserNamespaces, m.UserNamespacesError = false, "turned off by "+EnvMachine+"=none"
		m.LandlockABI, m.LandlockError = 0, "turned off by "+EnvMachine+"=none"
		m.Seccomp = false
	}
	return m
}

// probeNamespaces starts the helper in new namespaces, where it sets up a mount
// namespace and loopback and exits.
func probeNamespaces(self string) error {
	cmd := exec.Command(self)
	spec, err := json.Marshal(Spec{Probe: true, Policy: Policy{Namespaces: true}})
	if err != nil {
		return err
	}
	cmd.Env = []string{EnvHelper + "=" + string(spec)}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	setNamespaces(cmd.SysProcAttr, false)
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(stderr.String()), "agentls sandbox: ")); msg != "" {
			return errors.New(msg)
		}
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return fmt.Errorf("%w (kernel.unprivileged_userns_clone=0, AppArmor's apparmor_restrict_unprivileged_userns, or a container's seccomp profile)", err)
		}
		return err
	}
	return nil
}

// setNamespaces makes a command start in user and mount namespaces of its own, and a
// network namespace unless network, keeping the caller's user and group ids and
// giving the helper the capabilities it needs to set them up.
func setNamespaces(sys *syscall.SysProcAttr, network bool) {
	sys.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNS
	if !network {
		sys.Cloneflags |= unix.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	sys.GidMappingsEnableSetgroups = false
	sys.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN}
}

// Wrap makes cmd, not yet started and with its Path looked up, start contained:
// through the helper, in the policy's namespaces. It leaves cmd as it is where
// commands run uncontained, and fails where containment is required and missing.
func (s *Sandbox) Wrap(cmd *exec.Cmd) error {
	if s.refuse != "" {
		return errors.New(s.refuse)
	}
	if !s.status.Contained || cmd.Err != nil {
		return nil // cmd.Start reports cmd.Err
	}
	spec, err := json.Marshal(Spec{Path: cmd.Path, Policy: s.policy})
	if err != nil {
		return fmt.Errorf("encoding the sandbox policy: %w", err)
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, EnvHelper+"=")
	}), EnvHelper+"="+string(spec))
	cmd.Path = s.self
	if s.policy.Namespaces {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		setNamespaces(cmd.SysProcAttr, s.policy.Network)
	}
	return nil
}
