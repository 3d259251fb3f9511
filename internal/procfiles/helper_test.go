package procfiles

// A child process for the live tests: the test binary itself, started
// again to hold a file open (or a terminal) until the test lets it go.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

const helperEnv = "PROCFILES_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "hold":
		// Opens the file named in PROCFILES_TEST_FILE and keeps it open
		// until its stdin closes.
		f, err := os.Open(os.Getenv("PROCFILES_TEST_FILE"))
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		f.Close()
	case "wait":
		// Keeps its terminal until killed.
		fmt.Println("ready")
		time.Sleep(time.Minute)
	}
	os.Exit(0)
}

// holdOpen starts a child that keeps path open, and returns it once it has
// the file open; release closes its stdin, and it exits.
func holdOpen(t *testing.T, path string) (cmd *exec.Cmd, release func()) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=hold", "PROCFILES_TEST_FILE="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the child holding %s said %q", path, line)
	}
	return cmd, func() { stdin.Close(); cmd.Wait() }
}
