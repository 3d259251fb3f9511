//go:build !linux && !darwin && !windows

package watch

func newExitWatcher(exits chan<- int) exitWatcher { return unsupportedWatcher{} }
