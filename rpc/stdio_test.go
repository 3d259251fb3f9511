//go:build linux || darwin || freebsd || netbsd || openbsd || windows

package rpc

// Stdio keeps stray writes off the protocol, where it can move the OS's own
// standard output (the systems of stdio_unix.go and stdio_windows.go).

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// TestStdioKeepsStrayWritesOffTheProtocol runs itself as a child that takes
// over stdio the way serve does, then writes to os.Stdout, to fd 1 directly
// and to the protocol stream: only the last may reach the real stdout.
func TestStdioKeepsStrayWritesOffTheProtocol(t *testing.T) {
	if os.Getenv("RPC_STDIO_CHILD") == "1" {
		proto, err := Stdio()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("stray fmt.Println")
		rawStdoutWrite([]byte("stray raw write to stdout\n"))
		proto.Write([]byte("protocol\n"))
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStdioKeepsStrayWritesOffTheProtocol$")
	cmd.Env = append(os.Environ(), "RPC_STDIO_CHILD=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if stdout.String() != "protocol\n" {
		t.Errorf("stdout = %q, want only the protocol", stdout.String())
	}
	for _, s := range []string{"stray fmt.Println", "stray raw write to stdout"} {
		if !bytes.Contains(stderr.Bytes(), []byte(s)) {
			t.Errorf("%q did not reach stderr: %q", s, stderr.String())
		}
	}
}
