package sandbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Watching works with seccomp's user notification: the helper installs a filter whose
// listener it hands to agentls over a socket before executing the command; each
// system call the filter names then waits in the kernel until agentls has told the
// Watcher and answered "continue". The filter is inherited by every process the command
// starts. A process may hold one such filter only, so a command started inside a
// watched command is not watched again (its own helper says so).

// watchCall says which arguments of a watched system call name paths.
type watchCall struct {
	nr uint32
	// flags, when not -1, is the argument holding open(2)'s flags: the call is watched
	// only when they ask to write or create. openat2 has them in a struct (how).
	flags int
	how   bool
	paths []pathArg
	// errno, when not 0, refuses the call instead: io_uring, whose operations are not
	// system calls a filter sees.
	errno unix.Errno
}

// pathArg names a path argument: path is its index; dir is the index of the directory
// descriptor it is relative to, or atCWD; fdOnly makes the descriptor at path the file.
type pathArg struct {
	dir, path int
	fdOnly    bool
	tree      bool
}

// atCWD marks a path argument relative to the process's directory.
const atCWD = -1

// writeFlags are the open(2) flags that make an open a change.
const writeFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC

// watchFilter is the classic BPF program of the helper's notifying filter.
func watchFilter() ([]unix.SockFilter, error) {
	arch, calls := watchCalls()
	if calls == nil {
		return nil, errNoFilter
	}
	const (
		ldAbs, jeq, jset, ret = bpfLoad, bpfJeq, bpfJset, bpfRet
		allow                 = unix.SECCOMP_RET_ALLOW
		notify                = unix.SECCOMP_RET_USER_NOTIF
	)
	prog := []unix.SockFilter{
		{Code: ldAbs, K: offArch},
		{Code: jeq, Jt: 1, K: arch},
		{Code: ret, K: allow}, // another ABI: the socket filter, or nothing, holds it
	}
	for _, c := range calls {
		var body []unix.SockFilter
		switch {
		case c.errno != 0:
			body = []unix.SockFilter{{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(c.errno)}}
		case c.flags >= 0:
			body = []unix.SockFilter{
				{Code: ldAbs, K: uint32(offArgs + 8*c.flags)},
				{Code: jset, Jt: 0, Jf: 1, K: writeFlags},
				{Code: ret, K: notify},
				{Code: ret, K: allow},
			}
		default:
			body = []unix.SockFilter{{Code: ret, K: notify}}
		}
		prog = append(prog, unix.SockFilter{Code: ldAbs, K: offNr},
			unix.SockFilter{Code: jeq, Jt: 0, Jf: uint8(len(body)), K: c.nr})
		prog = append(prog, body...)
	}
	return append(prog, unix.SockFilter{Code: ret, K: allow}), nil
}

// installWatch is the helper's part: it installs the notifying filter on this thread
// and sends its listener on the socket sock, or why there is none, and closes sock.
func installWatch(sock int) {
	defer unix.Close(sock)
	fd, err := newListener()
	if err != nil {
		unix.Sendmsg(sock, []byte(err.Error()), nil, nil, 0)
		return
	}
	unix.Sendmsg(sock, []byte("ok"), unix.UnixRights(fd), nil, 0)
	unix.Close(fd)
}

// newListener installs the notifying filter and returns its listener.
func newListener() (int, error) {
	prog, err := watchFilter()
	if err != nil {
		return -1, err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	switch {
	case e == unix.EBUSY:
		return -1, errors.New("the command runs inside a watched command already, whose watch holds it")
	case e != 0:
		return -1, fmt.Errorf("installing the watching seccomp filter: %w", e)
	}
	return int(r), nil
}

// Watch is a watched command's link to its Watcher, from the command's start until
// Stop.
type Watch struct {
	w           Watcher
	ours, child *os.File

	mu      sync.Mutex
	stopped bool
	err     error         // why nothing is watched, once known
	known   chan struct{} // closed when the helper said whether it watches
}

// Watch makes cmd, already wrapped by Wrap and with its ExtraFiles final, tell w of
// every path it is about to change. The caller calls Started once cmd started (Abandon
// if it did not), and Stop once it ended. It fails where cmd is not contained: only
// the helper can install the filter.
func (s *Sandbox) Watch(cmd *exec.Cmd, w Watcher) (*Watch, error) {
	i := slices.IndexFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, EnvHelper+"=") })
	if i < 0 {
		return nil, errors.New("the command is not contained, and only contained commands are watched")
	}
	var spec Spec
	if err := json.Unmarshal([]byte(strings.TrimPrefix(cmd.Env[i], EnvHelper+"=")), &spec); err != nil {
		return nil, fmt.Errorf("reading the command's sandbox spec: %w", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("creating the watch socket: %w", err)
	}
	wt := &Watch{w: w, ours: os.NewFile(uintptr(fds[0]), "watch"), child: os.NewFile(uintptr(fds[1]), "watch"), known: make(chan struct{})}
	spec.Watch = 3 + len(cmd.ExtraFiles)
	raw, err := json.Marshal(spec)
	if err != nil {
		wt.Abandon()
		return nil, fmt.Errorf("encoding the sandbox spec: %w", err)
	}
	cmd.Env = slices.Clone(cmd.Env)
	cmd.Env[i] = EnvHelper + "=" + string(raw)
	cmd.ExtraFiles = append(cmd.ExtraFiles, wt.child)
	return wt, nil
}

// Started starts serving the command's filter; cmd has started.
func (wt *Watch) Started() {
	wt.child.Close()
	go wt.serve()
}

// Abandon releases a Watch whose command did not start.
func (wt *Watch) Abandon() {
	wt.child.Close()
	wt.ours.Close()
}

// Stop stops telling the Watcher, once every change it was told of has been let
// through; processes the command left running go on unwatched. It returns nil if the
// command was watched, and why not otherwise.
func (wt *Watch) Stop() error {
	<-wt.known
	wt.mu.Lock()
	defer wt.mu.Unlock()
	wt.stopped = true
	return wt.err
}

// serve receives the listener from the helper and answers its notifications until no
// process holds the filter any more.
func (wt *Watch) serve() {
	defer wt.ours.Close()
	fd, err := wt.receive()
	wt.mu.Lock()
	wt.err = err
	wt.mu.Unlock()
	close(wt.known)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: every process holding the filter has ended
		}
		var n notif
		if err := ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ENOENT) {
				continue // the process died before we read its call
			}
			return
		}
		wt.handle(fd, &n)
		resp := notifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		// ENOENT: the process was killed while waiting; nothing is owed to it.
		ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
	}
}

// receive reads the helper's message: the listener, or why there is none.
func (wt *Watch) receive() (int, error) {
	buf := make([]byte, 512)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(wt.ours.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("receiving the watch: %w", err)
	}
	if n == 0 {
		return -1, errors.New("the sandbox helper ended before it could watch the command")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, errors.New(string(buf[:n]))
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, errors.New(string(buf[:n]))
	}
	return fds[0], nil
}

// handle tells the Watcher of the paths the notified call is about to change.
func (wt *Watch) handle(fd int, n *notif) {
	_, calls := watchCalls()
	i := slices.IndexFunc(calls, func(c watchCall) bool { return c.nr == uint32(n.data.nr) })
	if i < 0 {
		return
	}
	c := calls[i]
	pid := int(n.pid)
	if c.how {
		// struct open_how begins with the flags, a u64.
		b, err := readMemory(pid, uintptr(n.data.args[2]), 8)
		if err != nil || len(b) < 8 || binary.NativeEndian.Uint64(b)&writeFlags == 0 {
			return
		}
	}
	type change struct {
		path string
		tree bool
	}
	var changes []change
	for _, a := range c.paths {
		var p string
		var err error
		if a.fdOnly {
			p, err = os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, int32(n.data.args[a.path])))
		} else {
			p, err = resolvePath(pid, n, a)
		}
		if err == nil && filepath.IsAbs(p) {
			changes = append(changes, change{p, a.tree})
		}
	}
	// The pid may have died and been reused while its memory was read.
	var id = n.id
	if ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) != nil {
		return
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.stopped {
		return
	}
	for _, ch := range changes {
		wt.w.Changing(ch.path, ch.tree)
	}
}

// resolvePath reads the path argument a of the call n of process pid and makes it
// absolute against the directory it is relative to.
func resolvePath(pid int, n *notif, a pathArg) (string, error) {
	p, err := readString(pid, uintptr(n.data.args[a.path]))
	if err != nil {
		return "", err
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	base := fmt.Sprintf("/proc/%d/cwd", pid)
	if a.dir != atCWD {
		if dfd := int32(n.data.args[a.dir]); dfd != unix.AT_FDCWD {
			base = fmt.Sprintf("/proc/%d/fd/%d", pid, dfd)
		}
	}
	dir, err := os.Readlink(base)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, p), nil
}

// readString reads a NUL-terminated string of at most PATH_MAX bytes from process pid.
func readString(pid int, addr uintptr) (string, error) {
	var out []byte
	for len(out) < unix.PathMax {
		// Up to the end of the page: the next one may not be mapped.
		n := 4096 - int(addr%4096)
		b, err := readMemory(pid, addr, n)
		if err != nil {
			return "", err
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return string(append(out, b[:i]...)), nil
		}
		out = append(out, b...)
		addr += uintptr(n)
	}
	return "", errors.New("path too long")
}

// readMemory reads n bytes at addr of process pid.
func readMemory(pid int, addr uintptr, n int) ([]byte, error) {
	b := make([]byte, n)
	got, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &b[0], Len: uint64(n)}}, []unix.RemoteIovec{{Base: addr, Len: n}}, 0)
	if err != nil {
		return nil, fmt.Errorf("reading the memory of process %s: %w", strconv.Itoa(pid), err)
	}
	return b[:got], nil
}

// notif is struct seccomp_notif.
type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	data  struct {
		nr   int32
		arch uint32
		ip   uint64
		args [6]uint64
	}
}

// notifResp is struct seccomp_notif_resp.
type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// ioctl runs an ioctl whose argument is a pointer.
func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg)); e != 0 {
		return e
	}
	return nil
}
