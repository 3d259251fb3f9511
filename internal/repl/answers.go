package repl

// What the server says besides the answers printed as they come: the ids and
// token its answers named, notifications, late answers and .trace's frames.

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/copilot-ide/sessionlocks/internal/escape"
	"github.com/copilot-ide/sessionlocks/rpc"
)

// answers remembers what the server's answers named: the session ids (for
// completion) and state dir, and for $last and $token the last answer and
// the last token given (by an answer, or by a -32005 error's data: the
// fresh canResume answer to decide on again).
type answers struct {
	mu    sync.Mutex
	ids   map[string]bool
	dir   string // learnt and read on the REPL's loop alone
	last  json.RawMessage
	token string
}

// learn takes what an answer names; seen says it was shown as an answer,
// which $last then stands for.
func (a *answers) learn(res json.RawMessage, seen bool) {
	var v struct { // field names match JSON's case-insensitively
		StateDir, SessionID, Token string
		Sessions                   []struct{ ID string }
	}
	json.Unmarshal(res, &v)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dir = cmp.Or(v.StateDir, a.dir)
	a.token = cmp.Or(v.Token, a.token)
	if seen {
		a.last = res
	}
	ids := []string{v.SessionID}
	for _, s := range v.Sessions {
		ids = append(ids, s.ID)
	}
	a.note(ids, nil)
}

// note adds ids to those seen and drops gone; the caller holds mu.
func (a *answers) note(ids, gone []string) {
	if a.ids == nil {
		a.ids = map[string]bool{}
	}
	for _, id := range ids {
		if id != "" {
			a.ids[id] = true
		}
	}
	for _, id := range gone {
		delete(a.ids, id)
	}
}

// value is what $token and $last stand for, as JSON.
// $last.a.b.0 is a member of it: of b's first element, canResume's
// $last.holders.0.pid.
func (a *answers) value(name string) (json.RawMessage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if name == "$token" {
		if a.token == "" {
			return nil, errors.New("$token is the token of the last answer that gave one (canResume's), and none has yet")
		}
		return json.Marshal(a.token)
	}
	if a.last == nil {
		return nil, errors.New("$last is the last answer, and there is none yet")
	}
	v := a.last
	for _, key := range strings.Split(name, ".")[1:] {
		var obj map[string]json.RawMessage
		var arr []json.RawMessage
		i, err := strconv.Atoi(key)
		switch {
		case json.Unmarshal(v, &obj) == nil && obj[key] != nil:
			v = obj[key]
		case err == nil && json.Unmarshal(v, &arr) == nil && i >= 0 && i < len(arr):
			v = arr[i]
		default:
			return nil, fmt.Errorf("%s: the last answer has nothing at %q", name, key)
		}
	}
	return v, nil
}

func (a *answers) knownIDs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Collect(maps.Keys(a.ids))
}

// onLateAnswer shows the answer to a call that was interrupted: nothing was
// done (-32800), or what a forceResume or reclaimStale that had already
// begun to act did before it finished.
func (r *repl) onLateAnswer(method string, result json.RawMessage, err *rpc.Error) {
	if err != nil {
		r.out.print(r.out.line(sgrDim, fmt.Sprintf("(the interrupted %s: error %d: %s)", method, err.Code, err.Message)))
		return
	}
	r.out.print(r.out.line(sgrNotice, fmt.Sprintf("the interrupted %s had already begun to act; it finished and did this:", method)) + r.out.json(result))
}

// onFrame sees each message on the wire, on the client's read loop: it
// shows frames while tracing, and prints a notification's params exactly as
// they came (jsonrpc2 would re-encode them, sorting their keys).
func (r *repl) onFrame(in bool, body []byte) {
	if r.trace.Load() {
		arrow := map[bool]string{true: "<-- ", false: "--> "}[in]
		r.out.print(r.out.line(sgrDim, fmt.Sprintf("%sContent-Length: %d", arrow, len(body))) + r.out.line(sgrDim, arrow+string(escape.JSON(body))))
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if !in || json.Unmarshal(body, &msg) != nil || msg.Method == "" || msg.ID != nil {
		return
	}
	var n rpc.SessionsChangedParams
	if msg.Method == rpc.NotifySessionsChanged && json.Unmarshal(msg.Params, &n) == nil {
		var changed []string
		for _, s := range n.Changed {
			changed = append(changed, s.ID)
		}
		r.answers.mu.Lock()
		r.answers.note(changed, n.Removed)
		r.answers.mu.Unlock()
	}
	select {
	case r.notified <- struct{}{}:
	default:
	}
	if r.notes.Load() {
		s := r.out.line(sgrNotice, "<- notification "+msg.Method)
		if msg.Params != nil {
			s += r.out.json(msg.Params)
		}
		r.out.print(s)
	}
}
