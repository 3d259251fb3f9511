// Package getdents walks a directory with getdents64(2) into a caller's
// buffer: no allocation per name and no lstat, where os.ReadDir makes a
// string and an entry for each. It exists for directories read often or
// huge (the state dir, a session of 100,000 locks, /proc).
package getdents

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Each calls fn with every name in the directory open at fd (". " and ".."
// included), its d_type (unix.DT_*; DT_UNKNOWN where the file system does
// not say) and its inode number, read with getdents64 into buf. The name is
// valid only during the call.
func Each(fd int, buf []byte, fn func(name []byte, typ uint8, ino uint64)) error {
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 || off+reclen > n {
				break
			}
			name := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			typ := buf[off+18]
			ino := binary.NativeEndian.Uint64(buf[off:])
			off += reclen
			fn(name, typ, ino)
		}
	}
}
