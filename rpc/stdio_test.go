//go:build linux || darwin

package rpc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
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
		syscall.Write(1, []byte("stray write to fd 1\n"))
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
	for _, s := range []string{"stray fmt.Println", "stray write to fd 1"} {
		if !bytes.Contains(stderr.Bytes(), []byte(s)) {
			t.Errorf("%q did not reach stderr: %q", s, stderr.String())
		}
	}
}
