package rpc

// Transcript tests: each testdata/rpc/*.txtar file holds the exact bytes a
// client sends (-- in --) and the exact bytes the server answers (-- out --),
// after masking. Files named state/... in the archive are written into a
// fresh state directory first (an archive file named "state" makes the state
// directory a plain file: unreadable). Comment lines of the form
// "! max-message-size N" set server options.
//
// Masking is by rule, not by hand-edited goldens:
//   - the state directory's path becomes $STATE and the server's pid $PID;
//   - values that are clock readings of this run (members probedAt,
//     lockWrittenAt, startedAt, uptimeMs) become "$TIME"/$N, and Go
//     durations inside strings ("written 3ms ago") become $DUR; createdAt and
//     updatedAt come from the fixtures' workspace.yaml and stay;
//   - values that describe the machine or the engine's cache (goVersion, os, fileSystem,
//     arch, entries, hits, misses) become $X.
// Content-Length headers are checked against the real body first and then
// recomputed for the masked body, so the golden files stay exact frames.
//
// Requests are handled one at a time (Options.sequential) so the answers
// come in a fixed order; concurrency has its own tests.
//
// go test ./rpc/ -run Transcript -update rewrites the -- out -- sections.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"golang.org/x/tools/txtar"
)

var discardLog = slog.New(slog.DiscardHandler)

var update = flag.Bool("update", false, "rewrite the -- out -- sections of testdata/rpc/*.txtar")

func TestTranscript(t *testing.T) {
	files, err := filepath.Glob("../testdata/rpc/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts found: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	stateDir := filepath.Join(tmp, "state")
	var in, want []byte
	outIndex := -1
	for i, f := range ar.Files {
		switch {
		case f.Name == "in":
			in = f.Data
		case f.Name == "out":
			want, outIndex = f.Data, i
		case f.Name == "state":
			if err := os.WriteFile(stateDir, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(f.Name, "state/"):
			p := filepath.Join(tmp, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(f.Name, "/") {
				continue
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected archive file %q", f.Name)
		}
	}
	if in == nil || outIndex < 0 {
		t.Fatal("a transcript needs -- in -- and -- out -- sections")
	}
	// The fixtures are leftovers of sessions that ended a while ago: date
	// them so (past the settle window, well after any boot).
	past := time.Now().Add(-30 * time.Second)
	filepath.WalkDir(filepath.Join(tmp, "state"), func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, past, past)
		}
		return nil
	})
	opts := Options{
		Engine:     sessionlocks.New(sessionlocks.Options{StateDir: stateDir, Logger: discardLog}),
		Logger:     discardLog,
		sequential: true,
	}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		if v, ok := strings.CutPrefix(line, "! max-message-size "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			opts.MaxMessageSize = n
		}
	}

	got := serveBytes(t, opts, in)
	got = mask(t, got, stateDir)
	if !bytes.HasSuffix(got, []byte("\n")) {
		// txtar ends every file with a newline; a Content-Length framed
		// stream ends with the last body's "}".
		got = append(got, '\n')
	}
	if *update {
		ar.Files[outIndex].Data = got
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("answers differ from %s (go test ./rpc/ -run Transcript -update rewrites them)\n%s", file, lineDiff(want, got))
	}
}

// serveBytes runs a server over pipes, sends in, closes the input and
// returns everything the server wrote until it hung up.
func serveBytes(t testing.TB, opts Options, in []byte) []byte {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- NewServer(opts).Serve(ctx, ReadWriteCloser(inR, outW)) }()
	go func() {
		inW.Write(in)
		inW.Close()
	}()
	out, err := io.ReadAll(outR)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return out
}

var (
	maskTime     = regexp.MustCompile(`"(probedAt|lockWrittenAt|startedAt)":"[^"]*"`)
	maskNumber   = regexp.MustCompile(`"(uptimeMs)":\d+`)
	maskMachine  = regexp.MustCompile(`"(goVersion|os|arch|fileSystem)":"[^"]*"|"(entries|hits|misses)":\d+`)
	maskDuration = regexp.MustCompile(`\b(\d+(\.\d+)?(ns|µs|us|ms|s|m|h))+\b`)
)

// maskStatePath is a path below $STATE as JSON spells a Windows one.
var maskStatePath = regexp.MustCompile(`\$STATE(\\\\[^"\\]*)+`)

func maskBody(body []byte, stateDir string, pid int) []byte {
	s := string(body)
	// In JSON a Windows path's backslashes are doubled: its spelling there
	// is masked too, and what follows $STATE is written with slashes.
	if esc, _ := json.Marshal(stateDir); len(esc) > 2 {
		s = strings.ReplaceAll(s, string(esc[1:len(esc)-1]), "$STATE")
	}
	s = strings.ReplaceAll(s, stateDir, "$STATE")
	s = maskStatePath.ReplaceAllStringFunc(s, func(m string) string { return strings.ReplaceAll(m, `\\`, "/") })
	s = strings.ReplaceAll(s, `"pid":`+strconv.Itoa(pid)+`,`, `"pid":"$PID",`)
	s = maskTime.ReplaceAllString(s, `"$1":"$$TIME"`)
	s = maskNumber.ReplaceAllString(s, `"$1":$$N`)
	s = maskMachine.ReplaceAllStringFunc(s, func(m string) string {
		k, _, _ := strings.Cut(m, ":")
		return k + `:"$X"`
	})
	s = maskDuration.ReplaceAllString(s, "$$DUR")
	return []byte(s)
}

// mask splits the server's output into frames, checks each frame's
// Content-Length, masks the bodies and frames them again.
func mask(t testing.TB, out []byte, stateDir string) []byte {
	var b bytes.Buffer
	r := bufio.NewReader(bytes.NewReader(out))
	if bytes.HasPrefix(out, []byte("Content-Length:")) {
		for {
			line, err := r.ReadString('\n')
			if err == io.EOF && line == "" {
				break
			}
			n, ok := strings.CutPrefix(line, "Content-Length: ")
			if !ok || !strings.HasSuffix(n, "\r\n") {
				t.Fatalf("bad header line %q in output", line)
			}
			length, err := strconv.Atoi(strings.TrimSuffix(n, "\r\n"))
			if err != nil {
				t.Fatal(err)
			}
			if blank, _ := r.ReadString('\n'); blank != "\r\n" {
				t.Fatalf("header not followed by a blank line: %q", blank)
			}
			body := make([]byte, length)
			if _, err := io.ReadFull(r, body); err != nil {
				t.Fatalf("Content-Length %d but the body is shorter: %v", length, err)
			}
			body = maskBody(body, stateDir, os.Getpid())
			fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
		}
		return b.Bytes()
	}
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !bytes.HasSuffix(line, []byte("\n")) {
			t.Fatalf("last line of output is not terminated: %q", line)
		}
		b.Write(maskBody(line, stateDir, os.Getpid()))
	}
	return b.Bytes()
}

// lineDiff shows the first differing lines, which is all a reader needs.
func lineDiff(want, got []byte) string {
	wl := strings.Split(string(want), "\n")
	gl := strings.Split(string(got), "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < 5; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d:\n  want %q\n   got %q\n", i+1, w, g)
			shown++
		}
	}
	return b.String()
}
