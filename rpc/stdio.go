package rpc

// Stdio: the protocol's stream over standard input and output, kept clear of
// stray writes.

import (
	"io"
	"os"
)

// Stdio returns the process's standard input and original standard output
// as one stream for Serve, and makes sure nothing else can write to that
// output again: os.Stdout, and where the platform allows the descriptor
// itself, now lead to standard error. A stray fmt.Println (ours or a
// dependency's) then lands in the log instead of corrupting the protocol.
// Call it once, before anything else writes to stdout.
func Stdio() (io.ReadWriteCloser, error) {
	out, err := takeStdout()
	if err != nil {
		return nil, err
	}
	os.Stdout = os.Stderr
	return ReadWriteCloser(os.Stdin, out), nil
}
