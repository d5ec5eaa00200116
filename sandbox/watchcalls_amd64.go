//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// watchCalls returns this architecture's audit arch and the system calls a watched
// command is stopped at.
func watchCalls() (uint32, []watchCall) {
	one := func(nr uint32, dir, path int) watchCall {
		return watchCall{nr: nr, flags: -1, paths: []pathArg{{dir: dir, path: path}}}
	}
	return unix.AUDIT_ARCH_X86_64, []watchCall{
		{nr: unix.SYS_OPEN, flags: 1, paths: []pathArg{{dir: atCWD, path: 0}}},
		{nr: unix.SYS_OPENAT, flags: 2, paths: []pathArg{{dir: 0, path: 1}}},
		{nr: unix.SYS_OPENAT2, flags: -1, how: true, paths: []pathArg{{dir: 0, path: 1}}},
		one(unix.SYS_CREAT, atCWD, 0),
		one(unix.SYS_TRUNCATE, atCWD, 0),
		one(unix.SYS_UNLINK, atCWD, 0),
		one(unix.SYS_UNLINKAT, 0, 1),
		one(unix.SYS_RMDIR, atCWD, 0),
		{nr: unix.SYS_RENAME, flags: -1, paths: []pathArg{{dir: atCWD, path: 0, tree: true}, {dir: atCWD, path: 1, tree: true}}},
		{nr: unix.SYS_RENAMEAT, flags: -1, paths: []pathArg{{dir: 0, path: 1, tree: true}, {dir: 2, path: 3, tree: true}}},
		{nr: unix.SYS_RENAMEAT2, flags: -1, paths: []pathArg{{dir: 0, path: 1, tree: true}, {dir: 2, path: 3, tree: true}}},
		one(unix.SYS_CHMOD, atCWD, 0),
		one(unix.SYS_FCHMODAT, 0, 1),
		one(unix.SYS_FCHMODAT2, 0, 1),
		{nr: unix.SYS_FCHMOD, flags: -1, paths: []pathArg{{path: 0, fdOnly: true}}},
		one(unix.SYS_MKDIR, atCWD, 0),
		one(unix.SYS_MKDIRAT, 0, 1),
		one(unix.SYS_LINK, atCWD, 1),
		one(unix.SYS_LINKAT, 2, 3),
		one(unix.SYS_SYMLINK, atCWD, 1),
		one(unix.SYS_SYMLINKAT, 1, 2),
		{nr: unix.SYS_IO_URING_SETUP, errno: unix.ENOSYS},
	}
}
