package sessionlocks

// The precondition a decision carries: which holders the user saw. A
// canResume answer names its session's live and unknown holders in a token;
// forceResume with that token proceeds only if every live or unknown holder
// it finds under the operation lock is one the token names.

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
)

// tokenEntries bounds the holders a token lists one by one; past it, a
// digest names them as a whole.
const tokenEntries = 64

// tokenOf names a session's live and unknown holders (their entries).
// Stale ones are not named: one that has come alive since is then not in it.
func tokenOf(entries []string) string {
	if len(entries) > tokenEntries {
		sum := sha256.Sum256([]byte(strings.Join(entries, ",")))
		return "v1s:" + base64.RawURLEncoding.EncodeToString(sum[:12])
	}
	return "v1:" + strings.Join(entries, ",")
}

// Admits reports whether every live or unknown holder of s, judged afresh,
// is named by token, an earlier judgement's. A malformed token admits nothing.
func Admits(token string, s Session) bool {
	if s.decided == nil {
		return false
	}
	switch {
	case strings.HasPrefix(token, "v1:"):
		if len(s.decided.nonStale) == 0 {
			return true
		}
		named := map[string]bool{}
		for _, e := range strings.Split(token[len("v1:"):], ",") {
			named[e] = true
		}
		return !slices.ContainsFunc(s.decided.nonStale, func(e string) bool { return !named[e] })
	case strings.HasPrefix(token, "v1s:"):
		// Named as a whole: only the very same set of holders.
		return s.decided.token == token
	}
	return false
}

// ValidToken reports whether token is in a form Token makes: "v1:" and the
// holders' entries, or "v1s:" and a digest. Anything else, "" included,
// must be refused before anything is judged.
func ValidToken(token string) bool {
	if d, ok := strings.CutPrefix(token, "v1s:"); ok {
		return len(d) == 16 && isBase64URL(d)
	}
	list, ok := strings.CutPrefix(token, "v1:")
	if !ok {
		return false
	}
	if list == "" {
		return true
	}
	for _, e := range strings.Split(list, ",") {
		pid, sum, ok := strings.Cut(e, ".")
		if !ok || len(sum) != 12 || !isBase64URL(sum) {
			return false
		}
		if n, err := strconv.Atoi(pid); err != nil || n < 1 || strconv.Itoa(n) != pid {
			return false
		}
	}
	return true
}

func isBase64URL(s string) bool {
	return !strings.ContainsFunc(s, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_')
	})
}

// holderEntry names one holder by its session, pid and the identity of its
// .lock (else its .hold): a rewritten file or a reused pid is another holder.
func holderEntry(session string, h Holder) string {
	f := h.lockID
	if !f.exists() {
		f = h.holdID
	}
	var b [8 * 5]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(h.PID))
	binary.LittleEndian.PutUint64(b[8:], f.dev)
	binary.LittleEndian.PutUint64(b[16:], f.ino)
	binary.LittleEndian.PutUint64(b[24:], uint64(f.msec))
	binary.LittleEndian.PutUint64(b[32:], uint64(f.mnsec))
	sum := sha256.Sum256(append([]byte(session+"\x00"), b[:]...))
	return strconv.Itoa(h.PID) + "." + base64.RawURLEncoding.EncodeToString(sum[:9])
}
