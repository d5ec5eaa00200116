package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Enter turns this process into the contained command if it was started as the
// helper ([EnvHelper] set) and does nothing otherwise. It returns only when the
// variable is absent: a helper executes the command or exits. It is called by package
// sandbox/reexec during initialisation, before the rest of agentls has run.
func Enter() {
	raw, ok := os.LookupEnv(EnvHelper)
	if !ok {
		return
	}
	os.Unsetenv(EnvHelper)
	var spec Spec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fail(fmt.Errorf("reading the policy: %w", err))
	}
	// Every step below acts on this thread, which then becomes the command.
	runtime.LockOSThread()
	if err := apply(spec.Policy); err != nil {
		fail(err)
	}
	if spec.Probe {
		os.Exit(0)
	}
	if spec.Watch > 0 {
		installWatch(spec.Watch)
	}
	err := syscall.Exec(spec.Path, os.Args, os.Environ())
	fail(fmt.Errorf("%s: %w", spec.Path, err))
}

// fail ends a helper that could not contain its command.
func fail(err error) {
	fmt.Fprintf(os.Stderr, "agentls sandbox: %v\n", err)
	os.Exit(ExitSetup)
}

// apply holds the calling thread to p.
func apply(p Policy) error {
	if p.Namespaces {
		if err := mountPolicy(p); err != nil {
			return err
		}
		if !p.Network {
			if err := loopbackUp(); err != nil {
				return fmt.Errorf("bringing up the network namespace's loopback: %w", err)
			}
		}
		if err := dropCapabilities(); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if p.LandlockABI > 0 {
		if err := restrictLandlock(p); err != nil {
			return err
		}
	}
	if !p.Network && !p.Namespaces {
		if err := refuseInternetSockets(); err != nil && !errors.Is(err, errNoFilter) {
			return err
		}
	}
	return nil
}

// mountPolicy makes the policy's read-only paths read-only and hides its hidden
// paths, in the mount namespace the helper was started in.
func mountPolicy(p Policy) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mount namespace private: %w", err)
	}
	for _, path := range p.ReadOnly {
		if err := bindReadOnly(path, path); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("making %s read-only: %w", path, err)
		}
	}
	// The readable folders are opened before the folders holding them are hidden,
	// and mounted back from the descriptors afterwards.
	readable := map[string]int{}
	for _, path := range p.Readable {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		defer unix.Close(fd)
		// A folder that is a link out of its hidden folder (to a secret, or to
		// another hidden folder) is not shown.
		if !liesInHidden(fd, path, p.Hidden) {
			continue
		}
		readable[path] = fd
	}
	for _, path := range p.Hidden {
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			continue // nothing to hide, or nothing the command could reach either
		}
		var err error
		switch inside := readableIn(readable, path); {
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			err = bindReadOnly("/dev/null", path)
		case len(inside) > 0:
			err = hideExcept(path, inside, readable)
		default:
			err = unix.Mount("none", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=000")
		}
		if err != nil {
			return fmt.Errorf("hiding %s: %w", path, err)
		}
	}
	return nil
}

// liesInHidden reports whether the folder open as fd, at path, really lies in the
// hidden folder that holds path, its links resolved.
func liesInHidden(fd int, path string, hidden []string) bool {
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return false
	}
	for _, h := range hidden {
		if !within(path, h) || path == h {
			continue
		}
		if rh, err := filepath.EvalSymlinks(h); err == nil && within(real, rh) && real != rh {
			return true
		}
	}
	return false
}

// readableIn returns the readable folders inside the hidden folder dir.
func readableIn(readable map[string]int, dir string) []string {
	var out []string
	for path := range readable {
		if rel, err := filepath.Rel(dir, path); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
			out = append(out, path)
		}
	}
	return out
}

// hideExcept hides the folder dir but for the folders inside, which stay readable:
// an empty tmpfs over dir holds the folders on the way to each, and each is its
// original mounted read-only from its descriptor in readable.
func hideExcept(dir string, inside []string, readable map[string]int) error {
	if err := unix.Mount("none", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=0555"); err != nil {
		return err
	}
	for _, path := range inside {
		if err := os.MkdirAll(path, 0o555); err != nil {
			return err
		}
		if err := bindReadOnly(fmt.Sprintf("/proc/self/fd/%d", readable[path]), path); err != nil {
			return fmt.Errorf("keeping %s readable: %w", path, err)
		}
	}
	return unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

// bindReadOnly mounts src at dst read-only. The flags a user namespace may not
// clear on the mount underneath (nosuid, nodev, noexec, atime) are kept.
func bindReadOnly(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dst, &fs); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for st, ms := range map[int64]uintptr{
		unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV, unix.ST_NOEXEC: unix.MS_NOEXEC,
		unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME, unix.ST_RELATIME: unix.MS_RELATIME,
	} {
		if fs.Flags&st != 0 {
			flags |= ms
		}
	}
	return unix.Mount("", dst, "", flags, "")
}

// loopbackUp brings up lo, the only interface of a new network namespace, so that a
// command's own servers and tests still reach each other.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// dropCapabilities leaves the thread, and what it executes, without any capability:
// the ones it held in its user namespace would let the command undo the mounts.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %w", err)
	}
	return nil
}

// restrictLandlock enforces p's Landlock ruleset on the calling thread.
func restrictLandlock(p Policy) error {
	cfg := landlockConfig(p.LandlockABI)
	// A directory's rights do not apply to a file (the kernel refuses the rule).
	var dirs, files []string
	for _, w := range p.Writable {
		if fi, err := os.Stat(w); err == nil && !fi.IsDir() {
			files = append(files, w)
		} else {
			dirs = append(dirs, w)
		}
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWDirs(dirs...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(files...).IgnoreIfMissing(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx").WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing(),
	}
	if p.Network || p.Namespaces {
		// The network namespace holds it; Landlock's TCP rules would also refuse the
		// command's own loopback.
		cfg = landlock.Config{HandledAccessFS: cfg.HandledAccessFS, Scoped: cfg.Scoped}
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("building the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("Landlock is not available")
	}
	defer unix.Close(fd)
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("enforcing the Landlock ruleset: %w", err)
	}
	return nil
}

// landlockConfig is the configuration of ABI version abi (at most the newest this
// package knows).
func landlockConfig(abi int) landlock.Config {
	configs := []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7}
	if abi > len(configs) {
		abi = len(configs)
	}
	return configs[abi-1]
}

// errNoFilter says that no seccomp filter is known for this architecture.
var errNoFilter = errors.New("no seccomp filter for this architecture")

// refuseInternetSockets installs a seccomp filter that makes socket(2) and
// socketpair(2) of the internet families, and io_uring, fail with EACCES: Landlock
// holds TCP only, and not MPTCP, which Go's net.Listen uses.
func refuseInternetSockets() error {
	prog, err := socketFilter()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("installing the seccomp filter: %w", e)
	}
	return nil
}
