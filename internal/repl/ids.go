package repl

// The session ids the REPL knows, from the answers it saw, for completion and
// for id prefixes.

import (
	"context"
	"encoding/json"
)

// refreshIDs asks for every session, to know the ids prefixes expand to.
func (r *repl) refreshIDs(ctx context.Context) {
	res, err := r.cl.call(ctx, "listSessions", nil)
	if err == nil && res.Err == nil {
		r.learn("listSessions", nil, res.Result)
	}
}

// learn remembers the session ids a result names, for completion and prefixes.
func (r *repl) learn(method string, params json.RawMessage, result json.RawMessage) {
	switch method {
	case "listSessions":
		var res struct {
			StateDir string `json:"stateDir"`
			Total    int    `json:"total"`
			Sessions []struct {
				ID string `json:"id"`
			} `json:"sessions"`
		}
		if json.Unmarshal(result, &res) != nil {
			return
		}
		ids := make([]string, len(res.Sessions))
		for i, s := range res.Sessions {
			ids[i] = s.ID
		}
		r.idsMu.Lock()
		defer r.idsMu.Unlock()
		if res.StateDir != "" {
			r.dir = res.StateDir
		}
		if params == nil && len(ids) == res.Total {
			r.ids = ids // the whole list: forget sessions that are gone
			return
		}
		r.ids = mergeIDs(ids, r.ids)
	case "canResume", "forceResume":
		var res struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(result, &res) == nil && res.SessionID != "" {
			r.idsMu.Lock()
			r.ids = mergeIDs([]string{res.SessionID}, r.ids)
			r.idsMu.Unlock()
		}
	}
}

func mergeIDs(front, rest []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range append(append([]string(nil), front...), rest...) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func (r *repl) knownIDs() []string {
	r.idsMu.Lock()
	defer r.idsMu.Unlock()
	return append([]string(nil), r.ids...)
}
