// Package procfiles reads what the kernel says about other processes' files
// where Go's own packages and x/sys cannot: who has a given file open and
// since when, the executable it runs, and its controlling terminal. On macOS
// that is libproc, called through purego (no cgo); on Windows the Restart
// Manager. It gives facts; the caller decides what they prove.
//
// A call that cannot work on this system returns an error wrapping
// errors.ErrUnsupported that says why: the caller then proves nothing. An
// empty answer without an error is an answer ("nobody has it open").
// Linux needs none of this: /proc says it all, without unsafe, and the
// engine reads it itself.
package procfiles

import (
	"errors"
	"time"
)

// FileID is a file's identity: on macOS the device and inode (st_dev,
// st_ino), on Windows the volume serial number and file index. Only the low
// 32 bits of Dev count on macOS, where dev_t is a 32-bit int: a caller may
// pass uint64(st.Dev) sign-extended or not.
type FileID struct{ Dev, Ino uint64 }

// Process is a process that has a file open.
type Process struct {
	PID int
	// Start is when the process started, read from the same source as the
	// engine reads it (kinfo_proc's p_starttime on macOS, the creation
	// FILETIME on Windows); zero where the system did not say.
	Start time.Time
}

// OpenFile is one of a process's descriptors open on a file.
type OpenFile struct {
	FD int
	FileID
	// Path is where the kernel last saw the file: a name for people (it can
	// be stale after a rename), never proof of which file it is.
	Path string
}

var (
	// ErrChanged: the path no longer names the file asked about.
	ErrChanged = errors.New("the file was replaced while it was being looked up")
	// ErrBusy: an earlier look-up is still waiting on the kernel (a stuck
	// file system, most likely), and this one gave up waiting for it.
	ErrBusy = errors.New("an earlier look-up of open files is still waiting on the kernel")
)
