package rpc

// listSessions' encoding: each session's JSON kept and reused while the
// session is unchanged, and versions and deltas for a caller that passes since.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// sessionJSON keeps the wire encoding of every session listed last, and
// reuses it while the session is unchanged: an IDE lists the same sessions
// again and again, and encoding them (RFC 3339 times above all) was most of
// the server's time for a warm listSessions. Whether a session changed is
// decided on the engine's values, field by field (sameWireSession), which costs
// a few comparisons where encoding costs a microsecond or more.
//
// A whole listing that is the very slice encoded last time (the engine's
// ListShared hands out its kept listing, which never changes, until
// something does) is not even compared: its sessions' JSON is copied as it
// was joined last time.
type sessionJSON struct {
	mu  sync.Mutex
	m   map[string]*encodedSession
	gen uint64 // counts appendList calls

	last     []sessionlocks.Session // the last whole listing encoded
	lastEnts []*encodedSession      // its sessions' encodings
	lastSize int                    // their length joined

	// The encodings behind the last few answers that carry a version (see
	// ListSessionsParams.Since), newest at versions[vnext-1], so that a
	// later call naming one of them can be answered with what changed.
	versions [versionsKept]versioned
	vnext    int
	vcount   uint64
	nonce    string
}

// versionsKept is how many versioned answers are remembered. A client needs
// one (the last answer it holds), but every answer made takes a place: one
// per call in flight, and an ordered answer may be made up to
// maxAnswerAttempts times before one is sent. A version pushed out costs
// only a whole answer.
const versionsKept = 16

// versioned is one answer that carried a version: the encodings it joined,
// in order. They are never modified once stored (encodedSession.json), so
// an entry of a later listing that is the same pointer is, byte for byte,
// the session the client already holds.
type versioned struct {
	version string
	ents    []*encodedSession
}

type encodedSession struct {
	src  sessionlocks.Session
	json []byte // json.Marshal(wireSession(src)); never modified once stored
	gen  uint64 // the last appendList that used it
}

// appendList appends the JSON of a ListSessionsResult for these sessions
// to dst, byte for byte what json.Marshal of the struct gives (the tests
// hold it to that). With all set, the sessions are the whole state dir and
// entries for sessions not among them are forgotten. A non-nil since is the
// call's ListSessionsParams.Since: the answer then carries a version and,
// when since names a remembered answer, is a delta against it.
func (c *sessionJSON) appendList(dst []byte, stateDir string, total int, ss []sessionlocks.Session, all bool, since *string) ([]byte, error) {
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
	ents, size, err := c.encodings(ss, all)
	if err != nil {
		return nil, err
	}
	if since == nil {
		return append(appendJoined(dst, ents, size), "]}"...), nil
	}
	return c.appendVersioned(dst, ents, size, *since), nil
}

// encodings returns the encodings of ss, reused where a session is
// unchanged, and their length joined with commas.
func (c *sessionJSON) encodings(ss []sessionlocks.Session, all bool) ([]*encodedSession, int, error) {
	if all && len(ss) > 0 && len(ss) == len(c.last) && &ss[0] == &c.last[0] {
		return c.lastEnts, c.lastSize, nil
	}
	if c.m == nil {
		c.m = make(map[string]*encodedSession, len(ss))
	}
	c.gen++
	ents := make([]*encodedSession, len(ss))
	var miss []int
	for i := range ss {
		if e := c.m[ss[i].ID]; e != nil && sameWireSession(&e.src, &ss[i]) {
			ents[i] = e
		} else {
			miss = append(miss, i)
		}
	}
	if err := encodeSessions(ss, miss, ents); err != nil {
		return nil, 0, err
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
	if all {
		c.last, c.lastEnts, c.lastSize = ss, ents, size
	}
	return ents, size, nil
}

// appendVersioned ends an answer to a call that passed since (the sessions
// array is open in dst): with every session when since names no remembered
// answer, else with only the sessions that are not in that answer as they
// were there, and delta.order to rebuild the rest from it. Then the
// answer's version, which is the earlier one's when nothing differs.
func (c *sessionJSON) appendVersioned(dst []byte, ents []*encodedSession, size int, since string) []byte {
	var base *versioned
	if since != "" {
		for i := range c.versions {
			if v := &c.versions[i]; v.version == since {
				base = v
				break
			}
		}
	}
	var order []int
	var fresh []*encodedSession
	if base != nil {
		order, fresh = deltaOrder(base.ents, ents)
	}
	if base == nil || len(fresh) == len(ents) && len(ents) > 0 {
		// Whole: there is no earlier answer, or nothing of it to refer to.
		dst = appendJoined(dst, ents, size)
		return appendVersion(append(dst, ']'), c.remember(ents), nil, "")
	}
	freshSize := 0
	for _, e := range fresh {
		freshSize += len(e.json) + 1
	}
	dst = appendJoined(dst, fresh, freshSize)
	version := base.version
	sameList := len(ents) == len(base.ents) && (len(ents) == 0 || len(order) == 2 && order[0] == 0)
	if !sameList {
		version = c.remember(ents)
	}
	return appendVersion(append(dst, ']'), version, order, since)
}

// deltaOrder describes ents in terms of base. order is a list of steps:
// a negative -k takes the next k sessions of the answer's own sessions
// array (fresh, in order), and a pair start, count takes count sessions of
// base from index start. A count is never 0, so the last number of order is
// negative exactly when the last step is fresh sessions.
func deltaOrder(base, ents []*encodedSession) (order []int, fresh []*encodedSession) {
	if len(ents) == len(base) && (len(ents) == 0 || &ents[0] == &base[0]) {
		// The very list (a watched state dir with nothing changed): no
		// need to look each session up.
		if len(ents) == 0 {
			return []int{}, nil
		}
		return []int{0, len(ents)}, nil
	}
	at := make(map[*encodedSession]int, len(base))
	for i, e := range base {
		at[e] = i
	}
	order = []int{}
	for _, e := range ents {
		j, ok := at[e]
		n := len(order)
		switch {
		case !ok && n > 0 && order[n-1] < 0:
			order[n-1]--
			fresh = append(fresh, e)
		case !ok:
			order = append(order, -1)
			fresh = append(fresh, e)
		case n > 0 && order[n-1] > 0 && order[n-2]+order[n-1] == j:
			order[n-1]++
		default:
			order = append(order, j, 1)
		}
	}
	return order, fresh
}

// remember keeps ents as a new versioned answer, in place of the oldest,
// and returns its version: a per-process nonce, so that a version from an
// earlier server is never taken for one of this server's, and a count.
func (c *sessionJSON) remember(ents []*encodedSession) string {
	if c.nonce == "" {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		c.nonce = hex.EncodeToString(b[:])
	}
	c.vcount++
	v := &c.versions[c.vnext]
	c.vnext = (c.vnext + 1) % versionsKept
	v.version = c.nonce + "-" + strconv.FormatUint(c.vcount, 10)
	v.ents = ents
	return v.version
}

// appendVersion ends an answer whose sessions array is closed: its version
// and, for a delta (order non-nil), the delta, then the closing brace.
func appendVersion(dst []byte, version string, order []int, since string) []byte {
	dst = append(dst, `,"version":`...)
	dst = appendString(dst, version)
	if order != nil {
		dst = append(dst, `,"delta":{"since":`...)
		dst = appendString(dst, since)
		dst = append(dst, `,"order":[`...)
		for i, v := range order {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(v), 10)
		}
		dst = append(dst, "]}"...)
	}
	return append(dst, '}')
}

// appendJoined appends the encodings in ents, comma-separated, size bytes
// in all. The buffer is grown once to size: doubling a buffer of megabytes
// step by step cost more than everything else here.
func appendJoined(dst []byte, ents []*encodedSession, size int) []byte {
	dst = slices.Grow(dst, size+2)
	for i, e := range ents {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, e.json...)
	}
	return dst
}

// encodeSessions encodes ss[i] into ents[i] for each i in miss, spread over
// the cores when there are many: the first listing after start encodes
// every session, and that was an eighth of its time.
func encodeSessions(ss []sessionlocks.Session, miss []int, ents []*encodedSession) error {
	workers := min(runtime.GOMAXPROCS(0), (len(miss)+127)/128)
	errs := make([]error, max(workers, 1))
	encode := func(w int) {
		// Each worker encodes into arenas of 64 KiB, one allocation for a
		// hundred sessions or so; a session's JSON is its piece of one,
		// never written again.
		var arena []byte
		fresh := make([]encodedSession, 0, len(miss)/max(workers, 1)+1)
		for k := w; k < len(miss); k += max(workers, 1) {
			i := miss[k]
			if cap(arena)-len(arena) < 2048 {
				arena = make([]byte, 0, 64<<10)
			}
			start := len(arena)
			var err error
			if arena, err = appendSession(arena, &ss[i]); err != nil {
				errs[w] = err
				return
			}
			// The holders are copied: the engine's slices are shared, and
			// the comparison must be against what was encoded.
			src := ss[i]
			src.Holders = append([]sessionlocks.Holder(nil), ss[i].Holders...)
			fresh = append(fresh, encodedSession{src: src, json: arena[start:len(arena):len(arena)]})
			ents[i] = &fresh[len(fresh)-1]
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

// sameWireSession reports whether a and b encode alike on the wire. Every field
// wireSession reads must be compared here; TestSessionJSONSeesEveryField
// changes each field of the engine's types in turn to keep it so.
func sameWireSession(a, b *sessionlocks.Session) bool {
	if a.ID != b.ID || a.Dir != b.Dir || a.Name != b.Name || a.CWD != b.CWD ||
		a.Repository != b.Repository || a.Branch != b.Branch || a.ClientName != b.ClientName ||
		!a.CreatedAt.Equal(b.CreatedAt) || !a.UpdatedAt.Equal(b.UpdatedAt) ||
		a.State != b.State || a.Conflict != b.Conflict || len(a.Holders) != len(b.Holders) || a.HoldersOmitted != b.HoldersOmitted {
		return false
	}
	for i := range a.Holders {
		if !sameWireHolder(&a.Holders[i], &b.Holders[i]) {
			return false
		}
	}
	return true
}

func sameWireHolder(a, b *sessionlocks.Holder) bool {
	if a.SessionID != b.SessionID || a.PID != b.PID || a.LockFile != b.LockFile || a.HoldFile != b.HoldFile ||
		a.Verdict != b.Verdict || a.Reason != b.Reason || a.Detail != b.Detail ||
		!a.LockWrittenAt.Equal(b.LockWrittenAt) || !a.ProbedAt.Equal(b.ProbedAt) ||
		a.Cached != b.Cached || a.WriterVerified != b.WriterVerified {
		return false
	}
	if a.NoOwner != b.NoOwner || !sameWireOwner(a.Owner, b.Owner) {
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

func sameWireOwner(a, b *sessionlocks.Owner) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return a.PID == b.PID && a.NamespacePID == b.NamespacePID && a.StartedAt.Equal(b.StartedAt) && a.Evidence == b.Evidence
}

// appendSession appends json.Marshal(wireSession(*s)) to dst, without
// reflection: the first listing encodes every session, and encoding/json
// spent about 5 µs on each (an allocation for every time and the struct
// walked by reflection), more than reading it had cost. Holders, which few
// sessions have, still go through encoding/json. TestSessionJSONMatchesMarshal
// and TestSessionJSONSeesEveryField hold the result to json.Marshal's.
func appendSession(dst []byte, s *sessionlocks.Session) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, s.ID)
	dst = append(dst, `,"dir":`...)
	dst = appendString(dst, s.Dir)
	for _, f := range [...]struct{ key, v string }{
		{`,"name":`, s.Name}, {`,"cwd":`, s.CWD}, {`,"repository":`, s.Repository},
		{`,"branch":`, s.Branch}, {`,"clientName":`, s.ClientName},
	} {
		if f.v != "" {
			dst = appendString(append(dst, f.key...), f.v)
		}
	}
	for _, f := range [...]struct {
		key string
		t   time.Time
	}{{`,"createdAt":`, s.CreatedAt}, {`,"updatedAt":`, s.UpdatedAt}} {
		if !f.t.IsZero() {
			dst = appendTime(append(dst, f.key...), f.t)
		}
	}
	dst = append(dst, `,"state":`...)
	dst = appendString(dst, string(s.State))
	dst = append(dst, `,"conflict":`...)
	dst = strconv.AppendBool(dst, s.Conflict)
	dst = append(dst, `,"holders":`...)
	if len(s.Holders) == 0 {
		dst = append(dst, "[]"...)
	} else {
		hs, err := json.Marshal(wireHolders(s.Holders))
		if err != nil {
			return nil, err
		}
		dst = append(dst, hs...)
	}
	if s.HoldersOmitted != 0 {
		dst = strconv.AppendInt(append(dst, `,"holdersOmitted":`...), int64(s.HoldersOmitted), 10)
	}
	return append(dst, '}'), nil
}

// appendString appends s as encoding/json writes a string: as it is, in
// quotes, when it holds only printable ASCII that needs no escape (ids,
// paths, states: nearly every string listed); otherwise through
// encoding/json itself.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			b, _ := json.Marshal(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// plainJSON holds the bytes encoding/json writes unescaped (with its HTML
// escaping on, as json.Marshal has it).
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// appendTime appends t as wireTime does, in quotes.
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return append(t.AppendFormat(append(dst, '"'), timeLayout), '"')
	}
	hour, minute, sec := t.Clock()
	dst = append(dst, '"')
	dst = appendDigits(dst, year, 4)
	dst = appendDigits(append(dst, '-'), int(month), 2)
	dst = appendDigits(append(dst, '-'), day, 2)
	dst = appendDigits(append(dst, 'T'), hour, 2)
	dst = appendDigits(append(dst, ':'), minute, 2)
	dst = appendDigits(append(dst, ':'), sec, 2)
	dst = appendDigits(append(dst, '.'), t.Nanosecond()/1e6, 3)
	return append(dst, 'Z', '"')
}

// appendDigits appends the n lowest decimal digits of v, zero-padded.
func appendDigits(dst []byte, v, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, 0)
	}
	for i := len(dst) - 1; n > 0; i, n = i-1, n-1 {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
	return dst
}
