package sessionlocks

// parseProcargs2 decodes macOS's kern.procargs2. It lives in a file of its
// own, built everywhere, so that it is tested on recorded bytes on every
// system (only macOS has the sysctl).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// maxProcargsArgc bounds the argc a record may claim: the kernel's own
// limit on arguments (ARG_MAX, 1 MiB) allows no more than half a million
// one-byte ones, and a larger count is garbage, not a command line.
const maxProcargsArgc = 1 << 19

var errProcargs = errors.New("malformed kern.procargs2")

// parseProcargs2 decodes kern.procargs2: argc (int32, host order: macOS runs
// only little-endian), the executable path NUL-terminated, NUL padding to
// a word boundary, then argc NUL-terminated arguments, then the environment
// (not read). A record that ends before the path's NUL, or claims arguments
// it does not hold, is an error: the caller must not take half a command
// line for the CLI's.
func parseProcargs2(b []byte) (exe string, argv []string, err error) {
	if len(b) < 4 {
		return "", nil, fmt.Errorf("%w: %d bytes, no argc", errProcargs, len(b))
	}
	argc := int32(binary.LittleEndian.Uint32(b))
	if argc < 0 || argc > maxProcargsArgc {
		return "", nil, fmt.Errorf("%w: argc %d", errProcargs, argc)
	}
	b = b[4:]
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", nil, fmt.Errorf("%w: the executable path is not terminated", errProcargs)
	}
	exe = string(b[:i])
	b = bytes.TrimLeft(b[i:], "\x00")
	// Capacity from what the record can hold, not from what it claims.
	argv = make([]string, 0, min(int(argc), bytes.Count(b, []byte{0})))
	for len(argv) < int(argc) {
		j := bytes.IndexByte(b, 0)
		if j < 0 {
			return "", nil, fmt.Errorf("%w: argc %d, but only %d arguments are terminated", errProcargs, argc, len(argv))
		}
		argv = append(argv, string(b[:j]))
		b = b[j+1:]
	}
	return exe, argv, nil
}
