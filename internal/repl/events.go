package repl

// What the server sends unasked or late: sessionsChanged and other
// notifications, answers to requests the person gave up on, and --trace frames.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/copilot-ide/sessionlocks/rpc"
)

// onNotify prints a notification as it arrives and keeps the known ids current.
func (r *repl) onNotify(method string, params json.RawMessage) {
	if method == "sessionsChanged" {
		var n struct {
			Changed []struct {
				ID string `json:"id"`
			} `json:"changed"`
			Removed []string `json:"removed"`
		}
		if json.Unmarshal(params, &n) == nil {
			r.idsMu.Lock()
			var changed []string
			for _, s := range n.Changed {
				changed = append(changed, s.ID)
			}
			gone := map[string]bool{}
			for _, id := range n.Removed {
				gone[id] = true
			}
			var keep []string
			for _, id := range mergeIDs(changed, r.ids) {
				if !gone[id] {
					keep = append(keep, id)
				}
			}
			r.ids = keep
			r.idsMu.Unlock()
		}
	}
	defer func() {
		r.nmu.Lock()
		r.nseq++
		close(r.nwake)
		r.nwake = make(chan struct{})
		r.nmu.Unlock()
	}()
	if !r.notes.Load() {
		return
	}
	s := r.out.paint(sgrNotice, "<- notification "+method) + "\n"
	if params != nil {
		s += r.out.json(params)
	}
	r.out.async(s)
}

// onFrame sees every frame on the wire. It prints them raw while tracing,
// headers as sent, then the body; and it hands notifications from the server
// to onNotify, exactly as they came.
// onLateAnswer shows the answer to a call that was interrupted: nothing was
// done (-32800), or what a forceResume or reclaimStale that had already
// begun to act did before it finished.
func (r *repl) onLateAnswer(method string, result json.RawMessage, err *rpc.Error) {
	if err != nil {
		r.out.async(r.out.paint(sgrDim, fmt.Sprintf("(the interrupted %s: error %d: %s)", method, err.Code, err.Message)) + "\n")
		return
	}
	r.out.async(r.out.paint(sgrNotice, fmt.Sprintf("the interrupted %s had already begun to act; it finished and did this:", method)) + "\n" + r.out.json(result))
}

func (r *repl) onFrame(out bool, header, body []byte) {
	r.traceFrame(out, header, body)
	if out {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) == nil && msg.Method != "" && msg.ID == nil {
		r.onNotify(msg.Method, msg.Params)
	}
}

func (r *repl) traceFrame(out bool, header, body []byte) {
	if !r.trace.Load() {
		return
	}
	arrow := "<-- "
	if out {
		arrow = "--> "
	}
	var b strings.Builder
	for _, h := range bytes.Split(header, []byte("\r\n")) {
		b.WriteString(r.out.paint(sgrDim, arrow+string(h)) + "\n")
	}
	b.WriteString(r.out.paint(sgrDim, arrow+string(body)) + "\n")
	r.out.async(b.String())
}

// lineWriter hands each complete line written to it to emit.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	emit func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.emit(string(bytes.TrimRight(w.buf[:i], "\r")))
		w.buf = w.buf[i+1:]
	}
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(string(w.buf))
		w.buf = nil
	}
}
