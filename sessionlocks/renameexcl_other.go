//go:build unix && !linux && !darwin

package sessionlocks

// renameExclAt on other Unix systems: link(2) then unlink(2).

func renameExclAt(dfd int, from, to string) error { return linkBackAt(dfd, from, to) }
