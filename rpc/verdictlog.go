package rpc

// Logging the verdicts the server gives, so that the log at info answers "why
// was this session refused?"; bounded, since a session may have 100,000
// holders and one change may name thousands of sessions.

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"github.com/copilot-ide/sessionlocks/watch"
)

const (
	maxLoggedHolders  = 5  // a session's holders with a line each; the rest get one line of counts
	maxLoggedSessions = 20 // the sessions of one change with lines; the rest get one line
)

func logVerdicts(log *slog.Logger, msg string, s sessionlocks.Session) {
	if len(s.Holders) == 0 {
		log.Info(msg, "session", s.ID, "state", s.State)
		return
	}
	for _, h := range s.Holders[:min(len(s.Holders), maxLoggedHolders)] {
		log.Info(msg, "session", s.ID, "state", s.State, "pid", h.PID, "verdict", h.Verdict, "reason", h.Reason, "detail", h.Detail)
	}
	if more := len(s.Holders) - maxLoggedHolders + s.HoldersOmitted; more > 0 {
		log.Info(msg, "session", s.ID, "state", s.State, "moreHolders", more, "listedVerdicts", verdictCounts(s.Holders))
	}
}

// verdictCounts is "live=1 stale=3": how many listed holders have each verdict.
func verdictCounts(hs []sessionlocks.Holder) string {
	n := map[sessionlocks.Verdict]int{}
	for _, h := range hs {
		n[h.Verdict]++
	}
	var out []string
	for _, v := range []sessionlocks.Verdict{sessionlocks.Live, sessionlocks.Unknown, sessionlocks.Stale} {
		if n[v] > 0 {
			out = append(out, fmt.Sprintf("%s=%d", v, n[v]))
		}
	}
	return strings.Join(out, " ")
}

// verdictLog logs the verdicts of the sessions the watcher reports when they
// change, not on every write to a session's metadata (which the watcher
// reports too).
type verdictLog struct {
	log  *slog.Logger
	seen map[string]string // session id: its verdicts' signature
}

func (v *verdictLog) change(c watch.Change) {
	logged := 0
	for _, s := range c.Changed {
		if sig := signature(s); v.seen[s.ID] != sig {
			v.seen[s.ID] = sig
			if logged++; logged <= maxLoggedSessions {
				logVerdicts(v.log, "verdict changed", s)
			}
		}
	}
	for _, id := range c.Removed {
		delete(v.seen, id)
	}
	if logged > maxLoggedSessions {
		v.log.Info("verdicts changed in more sessions", "count", logged-maxLoggedSessions)
	}
}

// signature names a session's state and its first holders' verdicts, and
// counts the rest: bounded, whatever the session holds.
func signature(s sessionlocks.Session) string {
	sig := fmt.Sprintf("%s %d+%d %s", s.State, len(s.Holders), s.HoldersOmitted, verdictCounts(s.Holders))
	for _, h := range s.Holders[:min(len(s.Holders), maxLoggedHolders)] {
		sig += fmt.Sprintf(" %d/%s/%s", h.PID, h.Verdict, h.Reason)
	}
	return sig
}
