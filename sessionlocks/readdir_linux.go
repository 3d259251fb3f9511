package sessionlocks

import (
	"bytes"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 8192); return &b }}

// readLockNames lists a session directory's inuse.* names and says whether
// it holds a workspace.yaml. On Linux it reads the directory with
// getdents64 itself, which allocates nothing for the names it skips (every
// session has a dozen entries and, mostly, no lock): a cold scan of 10,000
// sessions spends much of its time here.
func readLockNames(dir string) (names []string, hasMeta bool, err error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false, &os.PathError{Op: "read", Path: dir, Err: err}
		}
		if n <= 0 {
			return names, hasMeta, nil
		}
		// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
		for off := 0; off+19 <= n; {
			reclen := int(buf[off+16]) | int(buf[off+17])<<8
			if reclen == 0 || off+reclen > n {
				break
			}
			name := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			switch {
			case bytes.HasPrefix(name, []byte("inuse.")):
				if _, _, ok := parseLockName(string(name)); ok {
					names = append(names, string(name))
				}
			case string(name) == "workspace.yaml":
				hasMeta = true
			}
		}
	}
}
