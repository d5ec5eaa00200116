package sandbox

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// The classic BPF instructions the filters are made of, and their offsets in struct
// seccomp_data.
const (
	bpfLoad = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K

	offNr   = 0
	offArch = 4
	offArgs = 16 // args[0]; an argument's low half, on these little-endian machines
)

// socketFilter is the classic BPF program of refuseInternetSockets.
func socketFilter() ([]unix.SockFilter, error) {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil, errNoFilter
	}
	const (
		ldAbs, jeq, jge, ret = bpfLoad, bpfJeq, bpfJge, bpfRet
		allow                = unix.SECCOMP_RET_ALLOW
		refuse               = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		offArg0              = offArgs
	)
	// x32's system calls share amd64's audit arch with this bit set; they are refused
	// wholesale rather than listed.
	const x32Bit = 0x40000000
	prog := []unix.SockFilter{
		{Code: ldAbs, K: offArch},
		{Code: jeq, Jt: 1, K: arch},
		{Code: ret, K: refuse}, // another ABI: nothing of it is expected here
		{Code: ldAbs, K: offNr},
		{Code: jge, Jt: 0, Jf: 1, K: x32Bit},
		{Code: ret, K: refuse},
		{Code: jeq, Jt: 0, Jf: 1, K: unix.SYS_IO_URING_SETUP},
		{Code: ret, K: refuse},
		{Code: jeq, Jt: 1, Jf: 0, K: unix.SYS_SOCKET},
		{Code: ret, K: allow},
		{Code: ldAbs, K: offArg0},
		{Code: jeq, Jt: 2, Jf: 0, K: unix.AF_INET},
		{Code: jeq, Jt: 1, Jf: 0, K: unix.AF_INET6},
		{Code: ret, K: allow},
		{Code: ret, K: refuse},
	}
	return prog, nil
}
