//go:build unix

package procfiles

// A terminal's name from its device number, as macOS's libc devname(3)
// finds it: a walk of /dev for the character device with that number. Pure
// Go, so it is tested on Linux's /dev too.

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// devName returns the name of the character device in dir whose device
// number is rdev, converted as uint64(Stat_t.Rdev) converts it.
func devName(dir string, rdev uint64) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		if e.Type()&fs.ModeCharDevice == 0 {
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // gone since the listing
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode()&fs.ModeCharDevice != 0 && uint64(st.Rdev) == rdev {
			return e.Name(), nil
		}
	}
	return "", fmt.Errorf("no character device in %s has device number %#x", dir, rdev)
}
