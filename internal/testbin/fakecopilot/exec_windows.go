package fakecopilot

import (
	"errors"
	"os"
	"syscall"
)

// execKeepingHold: Windows has no exec that keeps the process (and its handles).
func execKeepingHold(hold *os.File, argv []string) error { return errors.ErrUnsupported }

// execSignal is never delivered on Windows (only os.Interrupt is).
var execSignal os.Signal = syscall.SIGHUP
