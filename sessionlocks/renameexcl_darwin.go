package sessionlocks

// renameExclAt on macOS: renameatx_np(RENAME_EXCL).

import "golang.org/x/sys/unix"

// renameExclAt renames from to to within the directory open at dfd, failing
// with EEXIST rather than replace a file that took to's name meanwhile.
func renameExclAt(dfd int, from, to string) error {
	err := unix.RenameatxNp(dfd, from, dfd, to, unix.RENAME_EXCL)
	if err == unix.EINVAL || err == unix.ENOTSUP {
		return linkBackAt(dfd, from, to)
	}
	return err
}
