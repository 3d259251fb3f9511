package sessionlocks

import (
	"context"
	"errors"
	"time"
)

// The bodies in this file are being written; signatures are final.

// ValidateID reports whether id is a safe session id: one path component of
// [A-Za-z0-9._-], not "." or "..", at most 128 bytes. The error is an *IDError.
func ValidateID(id string) error { return errors.New("todo") }

// List returns every session in the state dir, newest UpdatedAt first. A
// missing state dir means no sessions, not an error. Probe results may come
// from the cache (Holder.Cached).
func (e *Engine) List(ctx context.Context) ([]Session, error) { return nil, errors.New("todo") }

// Sessions returns the named sessions in the order given, using the cache like
// List. An invalid id gives an *IDError, a missing one a *NotFoundError.
func (e *Engine) Sessions(ctx context.Context, ids []string) ([]Session, error) {
	return nil, errors.New("todo")
}

// Session reads one session with every holder probed afresh (never from the
// cache), as a decision such as canResume needs.
func (e *Engine) Session(ctx context.Context, id string) (Session, error) {
	return Session{}, errors.New("todo")
}

// Reclaim removes the files of stale holders (and unlocked orphan .hold
// files) in the named sessions, or in every session when ids is empty.
func (e *Engine) Reclaim(ctx context.Context, ids []string, dryRun bool) (ReclaimResult, error) {
	return ReclaimResult{}, errors.New("todo")
}

// Force removes every holder's files of one session under its operation lock.
// With terminate it first sends SIGTERM to verified live holders and waits up
// to grace for them to exit.
func (e *Engine) Force(ctx context.Context, id string, terminate bool, grace time.Duration) (ForceResult, error) {
	return ForceResult{}, errors.New("todo")
}

// ProcessStart returns the start time of pid, so that a watcher that opened a
// handle on pid can confirm it is still the process a lock named.
func ProcessStart(pid int) (time.Time, error) { return time.Time{}, errors.New("todo") }

type probeCache struct{}

func newProbeCache(ttl time.Duration, now func() time.Time) *probeCache { return &probeCache{} }
func (c *probeCache) stats() CacheStats                                 { return CacheStats{} }
func (c *probeCache) dropSession(id string)                             {}
func (c *probeCache) dropPID(pid int)                                   {}
func (c *probeCache) clear()                                            {}

type dirCache struct{}

func newDirCache() *dirCache       { return &dirCache{} }
func (c *dirCache) drop(id string) {}
func (c *dirCache) clear()         {}

type keyedMutex struct{}

func newKeyedMutex() *keyedMutex { return &keyedMutex{} }
