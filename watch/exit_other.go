//go:build !linux && !darwin && !windows

package watch

// Holder exits elsewhere: not watched; holders are polled.

func newExitWatcher(exits chan<- int) exitWatcher { return unsupportedWatcher{} }
