// Package procfiles reads what the kernel says about other processes' files
// where Go's own packages and x/sys cannot: who has a given file open and
// since when, the executable it runs, and its controlling terminal. On macOS
// that is libproc, called through purego (no cgo); on Windows the Restart
// Manager. It gives facts; the caller decides what they prove.
//
// A call that cannot work on this system returns an error wrapping
// errors.ErrUnsupported that says why; an empty answer without an error is
// an answer ("nobody has it open"). Linux needs none of this: the engine
// reads /proc itself.
package procfiles

import (
	"errors"
	"time"
)

// FileID is a file's identity: on macOS the device and inode (only the low
// 32 bits of Dev count: dev_t is 32 bits), on Windows the volume serial
// number and file index.
type FileID struct{ Dev, Ino uint64 }

// Process is a process that has a file open.
type Process struct {
	PID int
	// Start is when the process started, read as the engine reads it; zero
	// where the system did not say.
	Start time.Time
}

// OpenFile is one of a process's descriptors open on a file.
type OpenFile struct {
	FD int
	FileID
	Path string // where the kernel last saw the file: a name, never proof
}

var (
	// ErrChanged: the path no longer names the file asked about.
	ErrChanged = errors.New("the file was replaced while it was being looked up")
	// ErrBusy: an earlier look-up is still waiting on the kernel.
	ErrBusy = errors.New("an earlier look-up of open files is still waiting on the kernel")
)
