package repl

// The REPL's children on Windows: a process group of their own, liner's
// redraw.

import (
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Isolate gives a child its own process group, so that Ctrl-C at the console
// interrupts the REPL's call instead of killing the server under it. It sets
// cmd.SysProcAttr, which the REPL's children leave unset.
func Isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

var procWriteConsoleInputW = windows.NewLazySystemDLL("kernel32.dll").NewProc("WriteConsoleInputW")

// redrawLine makes liner redraw its prompt and the line being typed. liner
// has no call for this (peterh/liner#46), but it redraws both on a window
// buffer size event, so the REPL queues one carrying the current width.
func redrawLine() {
	out, err := windows.GetStdHandle(windows.STD_OUTPUT_HANDLE)
	if err != nil {
		return
	}
	var info windows.ConsoleScreenBufferInfo
	if windows.GetConsoleScreenBufferInfo(out, &info) != nil {
		return
	}
	in, err := windows.GetStdHandle(windows.STD_INPUT_HANDLE)
	if err != nil {
		return
	}
	// INPUT_RECORD with EventType WINDOW_BUFFER_SIZE_EVENT and a COORD.
	var rec struct {
		eventType uint16
		_         uint16
		size      windows.Coord
		_         [12]byte
	}
	rec.eventType = 0x0004
	rec.size = info.Size
	var n uint32
	procWriteConsoleInputW.Call(uintptr(in), uintptr(unsafe.Pointer(&rec)), 1, uintptr(unsafe.Pointer(&n)))
}
