package rpc

// Stdio: the protocol's stream over standard input and output, kept clear of
// stray writes.

import (
	"io"
	"os"
)

// Stdio returns standard input and the original standard output as one
// stream for Serve, and points os.Stdout (and where it can, the descriptor)
// at standard error: a stray fmt.Println lands in the log instead of
// corrupting the protocol. Call it once, before anything writes to stdout.
func Stdio() (io.ReadWriteCloser, error) {
	out, err := takeStdout()
	if err != nil {
		return nil, err
	}
	os.Stdout = os.Stderr
	return ReadWriteCloser(os.Stdin, out), nil
}
