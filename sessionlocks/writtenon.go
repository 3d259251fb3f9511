package sessionlocks

// Where a session was written: a CLI in a VM or in WSL that shares the
// state dir writes pids of another kernel, and its flock may never reach
// this one. Its locks are then unknown, never stale.

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// writtenOn is what a session's own files say of the system that wrote it.
type writtenOn struct {
	otherOS string // the other system, for a person ("linux", "Linux (WSL)"); "" when not known to differ
	seenOS  string // the system events.jsonl names, "" until it does
	events  fileID // events.jsonl when seenOS was read
	unread  bool   // events.jsonl is there but could not be read
	// unsure: on a macOS or Windows host, nothing says yet which system
	// wrote the session (the CLI writes its files after its lock). Linux
	// hosts see their guests' shares as shared file systems instead.
	unsure bool
}

// maxEventsHead bounds what is read of events.jsonl, whose second or third
// line names the system.
const maxEventsHead = 256 << 10

// readWrittenOn reads where the session in dir was written, seen from a
// machine running goos: a POSIX working directory on a Windows host (WSL),
// or the system the CLI's first system message names in events.jsonl.
// prev's answer stands while events.jsonl is the same file and it had
// found one.
func readWrittenOn(dir, cwd, goos string, prev *dirSnapshot) (w writtenOn) {
	defer func() {
		w.unsure = goos != "linux" && w.otherOS == "" && w.seenOS != goos && !(goos == "windows" && windowsPath(cwd))
	}()
	switch {
	case goos == "windows" && strings.HasPrefix(cwd, "/"):
		w.otherOS = "Linux (its working directory is " + clip(cwd, 60) + ")"
		return w
	case goos != "windows" && windowsPath(cwd):
		w.otherOS = "Windows (its working directory is " + clip(cwd, 60) + ")"
		return w
	}
	path := filepath.Join(dir, "events.jsonl")
	id, err := lstatID(path)
	if errors.Is(err, fs.ErrNotExist) {
		return w
	}
	if prev != nil && err == nil && prev.events.dev == id.dev && prev.events.ino == id.ino && (prev.seenOS != "" || prev.events.size == id.size) {
		return prev.writtenOn
	}
	f, _, err := openNoFollow(path) // not a regular file: an error
	if err != nil {
		w.unread = true
		return w
	}
	defer f.Close()
	b := make([]byte, min(id.size, maxEventsHead))
	n, err := io.ReadFull(f, b)
	if err != nil && n == 0 && len(b) > 0 {
		w.unread = true
		return w
	}
	w.events = id
	w.seenOS = osOfEvents(b[:n])
	if w.seenOS != "" && w.seenOS != goos {
		w.otherOS = w.seenOS
	}
	return w
}

// windowsPath reports whether p is a Windows path: a drive letter, or UNC.
func windowsPath(p string) bool {
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') || strings.HasPrefix(p, `\\`)
}

// osOfEvents finds the system the system message in the head of
// events.jsonl names, as Go names it, or "". Only that line is read: a
// prompt may say anything.
func osOfEvents(b []byte) string {
	for line := range bytes.Lines(b) {
		if !bytes.HasPrefix(line, []byte(`{"type":"system.message"`)) {
			continue
		}
		_, rest, ok := bytes.Cut(line, []byte("Operating System: "))
		if !ok {
			return ""
		}
		i := 0
		for i < len(rest) && i < 16 && ('a' <= rest[i] && rest[i] <= 'z' || '0' <= rest[i] && rest[i] <= '9') {
			i++
		}
		switch name := string(rest[:i]); name {
		case "win32":
			return "windows"
		case "linux", "darwin", "windows", "freebsd":
			return name
		}
		return ""
	}
	return ""
}
