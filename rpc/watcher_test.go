package rpc

// The server beside its watcher: notifications, their order against
// listings, and mutations while the watcher starts.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"github.com/copilot-ide/sessionlocks/watch"
)

// TestListingAtOnceWithAWatcher: a listSessions sent the moment the server
// starts, while its watcher is still setting up, is answered in full (it
// waits for the watcher's watches and shares its first scan). Under -race it
// also checks that the server's start-up state is set before requests run.
func TestListingAtOnceWithAWatcher(t *testing.T) {
	dir := makeState(t, 50, map[string][]int{"00000007-0000-4000-8000-000000000000": {deadPID}})
	for range 5 {
		e, w := watchedEngine(t, dir)
		c := connect(t, Options{Engine: e, Watcher: w}, ClientOptions{})
		var res ListSessionsResult
		if err := c.Call(context.Background(), MethodListSessions, nil, &res); err != nil {
			t.Fatal(err)
		}
		if res.Total != 50 || len(res.Sessions) != 50 {
			t.Fatalf("total %d, %d sessions; want 50", res.Total, len(res.Sessions))
		}
	}
}

// TestNotificationsWaitForFraming: a change seen before the client has
// said anything is delivered once the framing is known, in that framing.
func TestNotificationsWaitForFraming(t *testing.T) {
	for _, framing := range []Framing{FramingHeader, FramingLine} {
		t.Run(framing.String(), func(t *testing.T) {
			dir := makeState(t, 1, nil)
			e, w := watchedEngine(t, dir)
			notes := make(chan SessionsChangedParams, 10)
			c := connect(t, Options{Engine: e, Watcher: w}, ClientOptions{Framing: framing, OnNotification: sessionsChangedTo(notes)})
			// Once the watcher has its baseline, change a session and wait
			// until the watcher is handing the change over (Notified counts
			// before the call, which then waits for the framing): all before
			// the client has said a word.
			waitStarted(t, w)
			id := "00000000-0000-4000-8000-000000000000"
			writeSession(t, dir, id, []int{deadPID})
			waitFor(t, func() bool { return w.Stats().Notified > 0 })
			var st StatusResult
			if err := c.Call(context.Background(), MethodStatus, nil, &st); err != nil {
				t.Fatal(err)
			}
			if !st.Watching || st.Watch == nil {
				t.Errorf("status: watching=%v watch=%v", st.Watching, st.Watch)
			}
			select {
			case p := <-notes:
				if len(p.Changed) == 0 || p.Changed[0].ID != id || p.Removed == nil {
					t.Errorf("unexpected notification %+v", p)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no sessionsChanged notification")
			}
		})
	}
}

// TestListingHoldsNotificationsBack: a sessionsChanged for a change made
// while a listSessions answer is being made goes out after that answer, never
// before it (a client rebuilding its view from the answer would undo the
// change, and no later notification would put it right).
func TestListingHoldsNotificationsBack(t *testing.T) {
	dir := makeState(t, 3, nil)
	id := "00000001-0000-4000-8000-000000000000"
	e, w := watchedEngine(t, dir)
	var mu sync.Mutex
	var seen []string // what reached the client, in the order read
	notified := make(chan struct{}, 10)
	record := func(what string) {
		mu.Lock()
		seen = append(seen, what)
		mu.Unlock()
	}
	hooked := 0
	opts := Options{Engine: e, Watcher: w, testHookAnswered: func(method string) {
		if method != MethodListSessions || hooked > 0 {
			return
		}
		hooked++
		// The answer is made: the session changes now, and the watcher's
		// notification of it must wait for the answer.
		writeSession(t, dir, id, []int{deadPID})
		select {
		case <-notified:
			t.Error("a sessionsChanged went out while a listing was being made")
		case <-time.After(500 * time.Millisecond):
		}
	}}
	c := connect(t, opts, ClientOptions{Trace: func(in bool, body []byte) {
		var m struct {
			Method string                `json:"method"`
			Params SessionsChangedParams `json:"params"`
			Result ListSessionsResult    `json:"result"`
		}
		if !in || json.Unmarshal(body, &m) != nil {
			return
		}
		for _, s := range append(m.Params.Changed, m.Result.Sessions...) {
			if s.ID == id {
				record(fmt.Sprintf("%s %d holders", cmp.Or(m.Method, "answer"), len(s.Holders)))
				if m.Method != "" {
					notified <- struct{}{}
				}
			}
		}
	}})
	waitStarted(t, w)
	if err := c.Call(context.Background(), MethodListSessions, nil, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-notified:
	case <-time.After(10 * time.Second):
		t.Fatal("no sessionsChanged for the lock written while the listing was made")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 2 || seen[0] != "answer 0 holders" || seen[1] != "sessionsChanged 1 holders" {
		t.Errorf("the client read, in order:\n%s\nwant the answer (0 holders), then the notification (1 holder)", strings.Join(seen, "\n"))
	}
}

// waitStarted waits until w has its first listing and its watches.
func waitStarted(t testing.TB, w *watch.Watcher) {
	t.Helper()
	select {
	case <-w.Started():
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not start within 10s")
	}
}

// watchedEngine is an engine for dir and a notify-mode watcher on it, for
// a server to run; the test is skipped where no watcher can be made.
func watchedEngine(t testing.TB, dir string) (*sessionlocks.Engine, *watch.Watcher) {
	t.Helper()
	e := engineFor(dir)
	w, err := watch.New(e, watch.Options{Mode: watch.ModeNotify, Logger: discardLog})
	if err != nil {
		t.Skipf("watcher unavailable: %v", err)
	}
	return e, w
}

// sessionsChangedTo is a client's OnNotification that hands each
// sessionsChanged to notes.
func sessionsChangedTo(notes chan<- SessionsChangedParams) func(string, json.RawMessage) {
	return func(method string, params json.RawMessage) {
		var p SessionsChangedParams
		if method == NotifySessionsChanged && json.Unmarshal(params, &p) == nil {
			notes <- p
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// slowStart is a real watcher whose Run starts late, as it does when the
// machine is busy or the state dir is large.
type slowStart struct {
	*watch.Watcher
	delay time.Duration
}

func (s slowStart) Run(ctx context.Context, notify func(watch.Change)) error {
	time.Sleep(s.delay)
	return s.Watcher.Run(ctx, notify)
}

// TestRemovalsWhileTheWatcherStartsArePushed: status says the server is
// watching from the start, so the locks a forceResume or reclaimStale
// removes must be pushed even when the request comes before the watcher has
// read the state dir (it once went unheard: the watcher's first listing
// already lacked the locks, so it saw no change).
func TestRemovalsWhileTheWatcherStartsArePushed(t *testing.T) {
	for _, method := range []string{MethodForceResume, MethodReclaimStale} {
		t.Run(method, func(t *testing.T) {
			id := "00000002-0000-4000-8000-000000000000"
			dir := makeState(t, 3, map[string][]int{id: {deadPID}})
			e, w := watchedEngine(t, dir)
			notes := make(chan SessionsChangedParams, 10)
			c := connect(t, Options{Engine: e, Watcher: slowStart{w, 300 * time.Millisecond}}, ClientOptions{OnNotification: sessionsChangedTo(notes)})
			ctx := context.Background()
			var st StatusResult
			if err := c.Call(ctx, MethodStatus, nil, &st); err != nil {
				t.Fatal(err)
			}
			if !st.Watching {
				t.Fatal("status does not say the server is watching")
			}
			params := map[string]any{"sessionId": id}
			if method == MethodReclaimStale {
				params = map[string]any{"sessionIds": []string{id}}
			}
			if err := c.Call(ctx, method, params, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, id, fmt.Sprintf("inuse.%d.lock", deadPID))); !os.IsNotExist(err) {
				t.Fatalf("%s left the lock: %v", method, err)
			}
			for {
				select {
				case p := <-notes:
					for _, s := range p.Changed {
						if s.ID == id && s.State == SessionState(sessionlocks.StateFree) {
							return
						}
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s removed the lock, and no sessionsChanged said the session is free", method)
				}
			}
		})
	}
}
