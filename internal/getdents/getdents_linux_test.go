package getdents

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestEachMatchesReadDir: every name os.ReadDir sees, with its type and
// inode, also through a buffer small enough to need many getdents calls.
func TestEachMatchesReadDir(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		os.WriteFile(filepath.Join(dir, "inuse."+strconv.Itoa(i)+".lock"), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("nowhere", filepath.Join(dir, "link"))
	want := map[string]uint8{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		typ := uint8(unix.DT_REG)
		switch {
		case e.IsDir():
			typ = unix.DT_DIR
		case e.Type()&os.ModeSymlink != 0:
			typ = unix.DT_LNK
		}
		want[e.Name()] = typ
	}
	for _, size := range []int{512, 64 << 10} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			got := map[string]uint8{}
			err = Each(fd, make([]byte, size), func(name []byte, typ uint8, ino uint64) {
				n := string(name)
				if n == "." || n == ".." {
					return
				}
				var st syscall.Stat_t
				if syscall.Lstat(filepath.Join(dir, n), &st) != nil || st.Ino != ino {
					t.Errorf("%s: inode %d, lstat says %d", n, ino, st.Ino)
				}
				if typ != unix.DT_UNKNOWN {
					got[n] = typ
				} else {
					got[n] = want[n] // the file system does not say: nothing to compare
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d names, ReadDir %d", len(got), len(want))
			}
			for n, typ := range want {
				if got[n] != typ {
					t.Errorf("%s: type %d, want %d", n, got[n], typ)
				}
			}
		})
	}
}
