package sessionlocks

// renameExclAt on Linux: renameat2(RENAME_NOREPLACE).

import "golang.org/x/sys/unix"

// renameExclAt renames from to to within the directory open at dfd, failing
// with EEXIST rather than replace a file that took to's name meanwhile. It
// moves directories too, which link(2) cannot.
func renameExclAt(dfd int, from, to string) error {
	err := unix.Renameat2(dfd, from, dfd, to, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		return linkBackAt(dfd, from, to) // a file system without the flag
	}
	return err
}
