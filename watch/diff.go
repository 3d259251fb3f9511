package watch

import (
	"cmp"
	"slices"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// unchanged reports whether b, a new reading of a session delivered as a,
// would tell the IDE nothing new: same state, conflict, metadata and holders
// (pid, files, verdict, reason).
// Probe times, the cached flag and the wording of details are ignored, or
// every re-probe would be a change.
func unchanged(a, b sessionlocks.Session) bool {
	if a.ID != b.ID || a.Dir != b.Dir || a.State != b.State || a.Conflict != b.Conflict ||
		a.Name != b.Name || a.CWD != b.CWD || a.Repository != b.Repository || a.Branch != b.Branch ||
		a.ClientName != b.ClientName || !a.CreatedAt.Equal(b.CreatedAt) || !a.UpdatedAt.Equal(b.UpdatedAt) ||
		len(a.Holders) != len(b.Holders) {
		return false
	}
	ah, bh := sortedHolders(a.Holders), sortedHolders(b.Holders)
	for i := range ah {
		x, y := ah[i], bh[i]
		if x.PID != y.PID || x.LockFile != y.LockFile || x.HoldFile != y.HoldFile ||
			x.Verdict != y.Verdict || x.Reason != y.Reason {
			return false
		}
	}
	return true
}

func sortedHolders(hs []sessionlocks.Holder) []sessionlocks.Holder {
	if slices.IsSortedFunc(hs, cmpHolder) {
		return hs
	}
	return slices.SortedFunc(slices.Values(hs), cmpHolder)
}

func cmpHolder(a, b sessionlocks.Holder) int {
	return cmp.Or(cmp.Compare(a.PID, b.PID), cmp.Compare(a.LockFile, b.LockFile), cmp.Compare(a.HoldFile, b.HoldFile))
}
