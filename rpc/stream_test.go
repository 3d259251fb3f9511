package rpc

// The codec under the server: framing detected, oversize and endless input
// streamed past, and results framed as jsonrpc2 would write them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/copilot-ide/sessionlocks/internal/syncbuf"
	"github.com/sourcegraph/jsonrpc2"
)

// TestHugeContentLength: a 4 GB Content-Length is streamed past, not
// buffered: the bytes allocated while discarding it are a tiny fraction of it.
func TestHugeContentLength(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 4 GB")
	}
	const huge = 4 << 30
	alloc, out := serveHuge(t, huge)
	if !bytes.Contains(out, []byte(`"code":-32600,"message":"message too large: 4294967296 bytes exceeds the limit of 8 MiB (8388608 bytes)`)) {
		t.Errorf("no error naming the limit: %.300q", out)
	}
	if !bytes.Contains(out, []byte(`"id":2,"result"`)) {
		t.Errorf("the request after the huge message was not answered: %.300q", out)
	}
	if alloc > 4<<20 {
		t.Errorf("allocated %d bytes while discarding a %d-byte message", alloc, int64(huge))
	}
}

// serveHuge sends a request, a message with the given Content-Length (its
// body generated on the fly) and another request; it returns the bytes
// allocated meanwhile and the output.
func serveHuge(t testing.TB, size int64) (uint64, []byte) {
	head := frame(`{"jsonrpc":"2.0","id":1,"method":"status"}`) + fmt.Sprintf("Content-Length: %d\r\n\r\n", size)
	tail := frame(`{"jsonrpc":"2.0","id":2,"method":"status"}`)
	in := io.MultiReader(strings.NewReader(head), &junk{n: size}, strings.NewReader(tail))
	var out syncbuf.Buffer
	opts := Options{Engine: engineFor(t.TempDir()), Logger: discardLog}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := NewServer(opts).Serve(context.Background(), ReadWriteCloser(io.NopCloser(in), &out)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, out.Bytes()
}

// junk is n bytes of whatever is in the caller's buffer: their content does
// not matter, and not writing them keeps the test fast.
type junk struct{ n int64 }

func (j *junk) Read(p []byte) (int, error) {
	if j.n == 0 {
		return 0, io.EOF
	}
	k := int64(len(p))
	if k > j.n {
		k = j.n
	}
	j.n -= k
	return int(k), nil
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

func TestStreamFramingDetection(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Framing
	}{
		{"  \r\n\t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}\n", FramingLine},
		{"[]\n", FramingLine},
		{frame(`{"jsonrpc":"2.0","id":1,"method":"status"}`), FramingHeader},
		{"\n\ncontent-length: 42\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}", FramingHeader},
	} {
		s := NewStream(ReadWriteCloser(io.NopCloser(strings.NewReader(c.in)), &syncbuf.Buffer{}), StreamOptions{Logger: discardLog})
		var v json.RawMessage
		s.ReadObject(&v)
		if got := s.framing; got != c.want {
			t.Errorf("%q: framing %v, want %v", c.in, got, c.want)
		}
	}
}

// TestStreamHeaderLimit: an endless header line costs bounded memory and
// gets an answer.
func TestStreamHeaderLimit(t *testing.T) {
	in := "X-Junk: " + strings.Repeat("a", 1<<20) + "\r\n\r\n" + frame(`{"jsonrpc":"2.0","id":1,"method":"status"}`)
	out := serveBytes(t, Options{Engine: engineFor(t.TempDir()), Logger: discardLog}, []byte(in))
	if !bytes.Contains(out, []byte("header block longer than 8192 bytes")) || !bytes.Contains(out, []byte(`"id":1,"result"`)) {
		t.Errorf("output: %.400q", out)
	}
}

// TestReplyFramedAsConnWould: a result the Conn encoded is framed as it
// is, without being encoded again; the bytes must be what jsonrpc2 itself
// writes, whatever the result holds.
func TestReplyFramedAsConnWould(t *testing.T) {
	results := []any{
		ListSessionsResult{StateDir: `/s "<&>"`, Sessions: []Session{}},
		map[string]any{"name": "a\u2028b\u202e <script> é \x1b", "n": 1.5},
		nil, "", []int{},
	}
	for _, id := range []jsonrpc2.ID{{Num: 7}, {Str: "x\"y", IsString: true}} {
		for _, r := range results {
			var got, want bytes.Buffer
			reply := func(out *bytes.Buffer, hook bool) {
				in, _ := io.Pipe() // never written: the Conn reads nothing
				s := NewStream(ReadWriteCloser(in, nopWriteCloser{out}), StreamOptions{Framing: FramingLine})
				opts := []jsonrpc2.ConnOpt{}
				if hook {
					opts = append(opts, jsonrpc2.OnSend(s.sending))
				}
				conn := jsonrpc2.NewConn(context.Background(), s, nil, opts...)
				defer conn.Close()
				if err := conn.Reply(context.Background(), id, r); err != nil {
					t.Fatal(err)
				}
			}
			reply(&got, true)
			reply(&want, false)
			if got.String() != want.String() {
				t.Errorf("id %v, result %#v:\n got %s\nwant %s", id, r, got.Bytes(), want.Bytes())
			}
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
