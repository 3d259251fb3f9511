package rpc

// The answers' pipe made larger, on Linux.

import "golang.org/x/sys/unix"

// growPipe enlarges the pipe the answers go out on, when fd is one, so that
// a large answer (listSessions over thousands of sessions) is written in
// one go instead of 64 KiB at a time, each waiting for the client to read.
// The size is what an unprivileged process may ask for by default
// (/proc/sys/fs/pipe-max-size); failing is harmless.
func growPipe(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return
	}
	unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, 1<<20)
}
