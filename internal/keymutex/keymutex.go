// Package keymutex is a set of mutexes, one per key, made as needed and
// dropped when nobody holds or waits for them, whose waiting can be
// cancelled.
package keymutex

import (
	"context"
	"sync"
)

// Map is a mutex per key. The zero Map is not usable; call New.
type Map struct {
	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	held chan struct{} // holds a value while the key is locked
	refs int           // holders and waiters
}

// New returns an empty Map.
func New() *Map { return &Map{m: make(map[string]*entry)} }

// Lock waits until key is free or ctx is done. It returns the function that
// unlocks key, or ctx's error, in which case key was never locked.
func (k *Map) Lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	e := k.m[key]
	if e == nil {
		e = &entry{held: make(chan struct{}, 1)}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	select {
	case e.held <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-e.held; k.release(key, e) }) }, nil
	case <-ctx.Done():
		k.release(key, e)
		return nil, ctx.Err()
	}
}

func (k *Map) release(key string, e *entry) {
	k.mu.Lock()
	if e.refs--; e.refs == 0 {
		delete(k.m, key)
	}
	k.mu.Unlock()
}
