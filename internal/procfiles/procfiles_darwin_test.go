package procfiles

// What live_test.go needs on macOS, and the other libproc calls against
// real processes. They run on the macOS CI job (macos-latest).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
)

func fileID(t *testing.T, path string) FileID {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return FileID{Dev: uint64(st.Dev), Ino: st.Ino} // sign-extended, as the engine does
}

func refusedHere(*testing.T, []Process, error) bool { return false }

func startOf(t *testing.T, pid int) time.Time {
	t.Helper()
	start, err := startTime(int32(pid))
	if err != nil {
		t.Fatal(err)
	}
	return start
}

func TestExecutable(t *testing.T) {
	got, err := Executable(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	want, _ := filepath.EvalSymlinks(self)
	if got, _ = filepath.EvalSymlinks(got); got != want {
		t.Errorf("Executable(self) = %q, want %q", got, want)
	}
}

// TestTerminal: a child whose controlling terminal is a new pty is named
// on it ("ttys012"); this test's own answer is logged (CI has no terminal).
func TestTerminal(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=wait")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	said := make(chan string, 1)
	go func() {
		buf := make([]byte, 64)
		n, _ := master.Read(buf)
		said <- string(buf[:max(n, 0)])
	}()
	select {
	case s := <-said:
		if !strings.Contains(s, "ready") {
			t.Fatalf("the child on the terminal said %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the child on the terminal said nothing in 10 s")
	}
	name, err := Terminal(cmd.Process.Pid)
	if err != nil || "/dev/"+name != slave.Name() {
		t.Errorf("Terminal(child) = %q, %v; want %s", name, err, filepath.Base(slave.Name()))
	}
	self, err := Terminal(os.Getpid())
	t.Logf("this test's terminal: %q, %v", self, err)
	if err != nil {
		t.Error(err)
	}
}

// openPTY opens a new pty pair through libc: posix_openpt, grantpt,
// unlockpt and ptsname_r.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	h, err := purego.Dlopen("/usr/lib/libSystem.B.dylib", purego.RTLD_LAZY|purego.RTLD_GLOBAL)
	if err != nil {
		t.Fatal(err)
	}
	sym := func(name string) uintptr {
		fn, err := purego.Dlsym(h, name)
		if err != nil {
			t.Fatal(err)
		}
		return fn
	}
	fd, _, errno := purego.SyscallN(sym("posix_openpt"), unix.O_RDWR|unix.O_NOCTTY)
	if int32(fd) < 0 {
		t.Fatalf("posix_openpt: %v", syscall.Errno(errno))
	}
	master = os.NewFile(fd, "ptmx")
	for _, f := range []string{"grantpt", "unlockpt"} {
		if r, _, errno := purego.SyscallN(sym(f), fd); int32(r) != 0 {
			t.Fatalf("%s: %v", f, syscall.Errno(errno))
		}
	}
	name := make([]byte, 128)
	ptsname := sym("ptsname_r")
	if r, _, errno := purego.SyscallN(ptsname, fd, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name))); int32(r) != 0 {
		t.Fatalf("ptsname_r: %v", syscall.Errno(errno))
	}
	slave, err = os.OpenFile(unix.ByteSliceToString(name), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, slave
}
