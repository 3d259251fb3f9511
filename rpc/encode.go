package rpc

import (
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// sessionJSON keeps the wire encoding of every session listed last, and
// reuses it while the session is unchanged: an IDE lists the same sessions
// again and again, and encoding them (RFC 3339 times above all) was most of
// the server's time for a warm listSessions. Whether a session changed is
// decided on the engine's values, field by field (sameSession), which costs
// a few comparisons where encoding costs a microsecond or more.
//
// A whole listing that is the very slice encoded last time (the engine's
// ListShared hands out its kept listing, which never changes, until
// something does) is not even compared: its sessions' JSON is copied whole.
type sessionJSON struct {
	mu  sync.Mutex
	m   map[string]*encodedSession
	gen uint64 // counts appendList calls

	last     []sessionlocks.Session // the last whole listing encoded
	lastJSON []byte                 // its sessions' JSON, comma-separated
}

type encodedSession struct {
	src  sessionlocks.Session
	json []byte // json.Marshal(wireSession(src)); never modified once stored
	gen  uint64 // the last appendList that used it
}

// appendList appends the JSON of a ListSessionsResult for these sessions
// to dst, byte for byte what json.Marshal of the struct gives (the tests
// hold it to that). With all set, the sessions are the whole state dir and
// entries for sessions not among them are forgotten.
func (c *sessionJSON) appendList(dst []byte, stateDir string, total int, ss []sessionlocks.Session, all bool) ([]byte, error) {
	dir, err := json.Marshal(stateDir)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `{"stateDir":`...)
	dst = append(dst, dir...)
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, int64(total), 10)
	dst = append(dst, `,"sessions":[`...)

	c.mu.Lock()
	defer c.mu.Unlock()
	if all && len(ss) > 0 && len(ss) == len(c.last) && &ss[0] == &c.last[0] {
		dst = append(dst, c.lastJSON...)
		return append(dst, "]}"...), nil
	}
	if c.m == nil {
		c.m = make(map[string]*encodedSession, len(ss))
	}
	c.gen++
	ents := make([]*encodedSession, len(ss))
	var miss []int
	for i := range ss {
		if e := c.m[ss[i].ID]; e != nil && sameSession(&e.src, &ss[i]) {
			ents[i] = e
		} else {
			miss = append(miss, i)
		}
	}
	if err := encodeSessions(ss, miss, ents); err != nil {
		return nil, err
	}
	size := 0
	for i, e := range ents {
		if e.gen == 0 {
			c.m[ss[i].ID] = e // new
		}
		e.gen = c.gen
		size += len(e.json) + 1
	}
	if all && len(c.m) > len(ss) {
		for id, e := range c.m {
			if e.gen != c.gen {
				delete(c.m, id) // a session no longer in the state dir
			}
		}
	}
	// Grown once to size: doubling a buffer of megabytes step by step
	// cost more than everything else here.
	dst = slices.Grow(dst, size+2)
	start := len(dst)
	for i, e := range ents {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, e.json...)
	}
	if all {
		c.last, c.lastJSON = ss, slices.Clone(dst[start:])
	}
	return append(dst, "]}"...), nil
}

// encodeSessions encodes ss[i] into ents[i] for each i in miss, spread over
// the cores when there are many: the first listing after start encodes
// every session, and that was an eighth of its time.
func encodeSessions(ss []sessionlocks.Session, miss []int, ents []*encodedSession) error {
	workers := min(runtime.GOMAXPROCS(0), (len(miss)+127)/128)
	errs := make([]error, max(workers, 1))
	encode := func(w int) {
		for k := w; k < len(miss); k += max(workers, 1) {
			i := miss[k]
			b, err := json.Marshal(wireSession(ss[i]))
			if err != nil {
				errs[w] = err
				return
			}
			// The holders are copied: the engine's slices are shared, and
			// the comparison must be against what was encoded.
			src := ss[i]
			src.Holders = append([]sessionlocks.Holder(nil), ss[i].Holders...)
			ents[i] = &encodedSession{src: src, json: b}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			encode(w)
		}()
	}
	encode(0)
	wg.Wait()
	return errors.Join(errs...)
}

// sameSession reports whether a and b encode alike on the wire. Every field
// wireSession reads must be compared here; TestSessionJSONSeesEveryField
// changes each field of the engine's types in turn to keep it so.
func sameSession(a, b *sessionlocks.Session) bool {
	if a.ID != b.ID || a.Dir != b.Dir || a.Name != b.Name || a.CWD != b.CWD ||
		a.Repository != b.Repository || a.Branch != b.Branch || a.ClientName != b.ClientName ||
		!a.CreatedAt.Equal(b.CreatedAt) || !a.UpdatedAt.Equal(b.UpdatedAt) ||
		a.State != b.State || a.Conflict != b.Conflict || len(a.Holders) != len(b.Holders) {
		return false
	}
	for i := range a.Holders {
		if !sameHolder(&a.Holders[i], &b.Holders[i]) {
			return false
		}
	}
	return true
}

func sameHolder(a, b *sessionlocks.Holder) bool {
	if a.SessionID != b.SessionID || a.PID != b.PID || a.LockFile != b.LockFile || a.HoldFile != b.HoldFile ||
		a.Verdict != b.Verdict || a.Reason != b.Reason || a.Detail != b.Detail ||
		!a.LockWrittenAt.Equal(b.LockWrittenAt) || !a.ProbedAt.Equal(b.ProbedAt) ||
		a.Cached != b.Cached || a.WriterVerified != b.WriterVerified {
		return false
	}
	if a.Process == b.Process {
		return true
	}
	if a.Process == nil || b.Process == nil {
		return false
	}
	return a.Process.StartedAt.Equal(b.Process.StartedAt) && a.Process.Command == b.Process.Command
}
