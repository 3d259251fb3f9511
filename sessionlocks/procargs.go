package sessionlocks

// parseProcargs2 decodes macOS's kern.procargs2, built everywhere so that
// it is tested on recorded bytes on every system.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// maxProcargsArgc bounds the argc a record may claim: ARG_MAX (1 MiB)
// allows no more than half a million one-byte arguments.
const maxProcargsArgc = 1 << 19

var errProcargs = errors.New("malformed kern.procargs2")

// parseProcargs2 decodes kern.procargs2 into the arguments: argc (int32,
// little-endian), the exec path NUL-terminated, NUL padding, argc
// NUL-terminated arguments, the environment. A record cut short is an
// error: half a command line must not be taken for the CLI's.
//
// The padding is not "every NUL after the path" (argv[0] may be ""): xnu
// pads to the pointer size, so the arguments start at the first multiple
// of 8 bytes from the path's start past its NUL, or at a non-NUL sooner.
func parseProcargs2(b []byte) ([]string, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: %d bytes, no argc", errProcargs, len(b))
	}
	argc := int32(binary.LittleEndian.Uint32(b))
	if argc < 0 || argc > maxProcargsArgc {
		return nil, fmt.Errorf("%w: argc %d", errProcargs, argc)
	}
	b = b[4:]
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, fmt.Errorf("%w: the executable path is not terminated", errProcargs)
	}
	// The arguments start after the padding: NULs up to an 8-byte boundary.
	start, end := i+1, min(len(b), (i+1+7)&^7)
	for start < end && b[start] == 0 {
		start++
	}
	b = b[start:]
	// Capacity from what the record can hold, not from what it claims.
	argv := make([]string, 0, min(int(argc), bytes.Count(b, []byte{0})))
	for len(argv) < int(argc) {
		j := bytes.IndexByte(b, 0)
		if j < 0 {
			return nil, fmt.Errorf("%w: argc %d, but only %d arguments are terminated", errProcargs, argc, len(argv))
		}
		argv = append(argv, string(b[:j]))
		b = b[j+1:]
	}
	return argv, nil
}
