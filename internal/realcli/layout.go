package realcli

// Recording the files the real CLI leaves in a session directory.

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Entry is one file in a recorded layout: its name, type, permissions and
// size, never its content.
type Entry struct {
	// Path is slash-separated, relative to the recorded root, with the
	// run-specific parts replaced by placeholders (see Normalize).
	Path string
	// Type is d (directory), f (regular file), l (symlink), p (FIFO), s (socket) or ? (other).
	Type byte
	// Perm is the permission bits.
	Perm fs.FileMode
	// Size is the file's size in bytes; -1 for anything but a regular file.
	Size int64
}

var placeholders = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uuid>"},
	{regexp.MustCompile(`^inuse\.[1-9][0-9]*\.(lock|hold)$`), "inuse.<pid>.$1"},
	{regexp.MustCompile(`^process-[0-9]+-[0-9]+\.log$`), "process-<ms>-<pid>.log"},
}

// Normalize replaces the parts of a name that differ between runs (session
// UUIDs, pids, timestamps) with placeholders, one path component at a time.
func Normalize(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, p := range parts {
		for _, ph := range placeholders {
			p = ph.re.ReplaceAllString(p, ph.with)
		}
		parts[i] = p
	}
	return strings.Join(parts, "/")
}

// Record walks root without following symlinks and returns every entry below
// it, normalized and sorted by path. Entries that normalize to the same path
// (two sessions, say) are kept once, with the first one's size.
func Record(root string) ([]Entry, error) {
	seen := map[string]bool{}
	var out []Entry
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// The CLI may remove a temporary file while we walk.
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if path == root {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		e := Entry{Path: Normalize(rel), Type: typeLetter(info.Mode()), Perm: info.Mode().Perm(), Size: -1}
		if e.Type == 'f' {
			e.Size = info.Size()
		}
		if !seen[e.Path] {
			seen[e.Path] = true
			out = append(out, e)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

func typeLetter(m fs.FileMode) byte {
	switch {
	case m.IsDir():
		return 'd'
	case m.IsRegular():
		return 'f'
	case m&fs.ModeSymlink != 0:
		return 'l'
	case m&fs.ModeNamedPipe != 0:
		return 'p'
	case m&fs.ModeSocket != 0:
		return 's'
	}
	return '?'
}

// String formats an entry as one line of a layout file: "f 0644 5 path".
func (e Entry) String() string {
	size := "-"
	if e.Size >= 0 {
		size = strconv.FormatInt(e.Size, 10)
	}
	return fmt.Sprintf("%c %04o %s %s", e.Type, e.Perm, size, e.Path)
}

// Section is one named snapshot in a layout file.
type Section struct {
	Name    string
	Entries []Entry
}

// WriteLayout writes a layout file: comment lines (each prefixed "# "), then
// each section as a "[name]" line followed by one entry per line.
func WriteLayout(w io.Writer, comment string, sections ...Section) error {
	bw := bufio.NewWriter(w)
	for _, line := range strings.Split(strings.TrimRight(comment, "\n"), "\n") {
		fmt.Fprintln(bw, strings.TrimRight("# "+line, " "))
	}
	for _, s := range sections {
		fmt.Fprintf(bw, "\n[%s]\n", s.Name)
		for _, e := range s.Entries {
			fmt.Fprintln(bw, e)
		}
	}
	return bw.Flush()
}

// ReadLayout parses a layout file written by WriteLayout. Sections start
// with a line "[name]"; entries before the first section belong to "".
func ReadLayout(r io.Reader) (map[string][]Entry, error) {
	sections := map[string][]Entry{}
	section := ""
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line[1 : len(line)-1]
			sections[section] = nil
			continue
		}
		f := strings.SplitN(line, " ", 4)
		if len(f) != 4 || len(f[0]) != 1 {
			return nil, fmt.Errorf("line %d: %q is not \"type perm size path\"", n, line)
		}
		perm, err := strconv.ParseUint(f[1], 8, 32)
		if err != nil {
			return nil, fmt.Errorf("line %d: permissions %q: %v", n, f[1], err)
		}
		size := int64(-1)
		if f[2] != "-" {
			if size, err = strconv.ParseInt(f[2], 10, 64); err != nil {
				return nil, fmt.Errorf("line %d: size %q: %v", n, f[2], err)
			}
		}
		sections[section] = append(sections[section], Entry{Path: f[3], Type: f[0][0], Perm: fs.FileMode(perm), Size: size})
	}
	return sections, sc.Err()
}
