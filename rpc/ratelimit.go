package rpc

// Warnings about bad input, rate-limited: a peer can send the same bad
// message in a loop, and must not fill the log.

import (
	"sync"
	"time"
)

// rateLimit lets one warning of each kind through per second; those held
// back are counted in one line when the second is over.
type rateLimit struct {
	mu   sync.Mutex
	last map[string]time.Time
	held map[string]int
}

type warner interface{ Warn(string, ...any) }

func (r *rateLimit) warn(log warner, kind, msg string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last, r.held = map[string]time.Time{}, map[string]int{}
	}
	now := time.Now()
	if since := now.Sub(r.last[kind]); since < time.Second {
		if r.held[kind]++; r.held[kind] == 1 {
			time.AfterFunc(time.Second-since, func() {
				r.mu.Lock()
				n := r.held[kind]
				r.held[kind], r.last[kind] = 0, time.Now()
				r.mu.Unlock()
				log.Warn(msg+" (more alike, held back)", "alikeSuppressed", n)
			})
		}
		return
	}
	r.last[kind] = now
	log.Warn(msg, args...)
}
