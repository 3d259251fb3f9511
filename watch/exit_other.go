//go:build !linux && !darwin && !windows

package watch

// Process exits elsewhere: not awaited; their sessions are polled.

func newExitWatcher(exits chan<- int) exitWatcher { return unsupportedWatcher{} }
