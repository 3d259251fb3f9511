package sessionlocks

// Review: the machine's lock table (/proc/locks) names a file by the device
// of its inode's super block, which is not always the device stat(2) gives
// (overlayfs over two file systems, btrfs subvolumes). A young .hold whose
// named pid runs nowhere here, held by a process this sidecar cannot tie to
// the pid, must still read live on such a file system.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// overlayStateDir mounts an overlay whose upper layer is a tmpfs and whose
// lower layer is on the test's own file system (so stat's device is not
// the lock table's), and returns a state dir inside it.
func overlayStateDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	base := t.TempDir()
	lower, upper, mnt := filepath.Join(base, "lower"), filepath.Join(base, "t"), filepath.Join(base, "m")
	for _, d := range []string{lower, upper, mnt} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount("tmpfs", upper, "tmpfs", 0, ""); err != nil {
		t.Skip("cannot mount tmpfs:", err)
	}
	t.Cleanup(func() { unix.Unmount(upper, unix.MNT_DETACH) })
	for _, d := range []string{"up", "wk"} {
		os.Mkdir(filepath.Join(upper, d), 0o700)
	}
	opts := "lowerdir=" + lower + ",upperdir=" + filepath.Join(upper, "up") + ",workdir=" + filepath.Join(upper, "wk")
	if err := unix.Mount("overlay", mnt, "overlay", 0, opts); err != nil {
		t.Skip("cannot mount overlayfs:", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	sd := filepath.Join(mnt, "session-state")
	if err := os.Mkdir(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	return sd
}

func TestYoungHoldHeldByAnotherProcessOnOverlayIsLive(t *testing.T) {
	t.Run("the test's own file system", func(t *testing.T) { youngHoldHeldElsewhere(t, t.TempDir()) })
	t.Run("overlayfs over two file systems", func(t *testing.T) { youngHoldHeldElsewhere(t, overlayStateDir(t)) })
	// Fedora's and openSUSE's default: /home is a btrfs subvolume.
	t.Run("a btrfs subvolume", func(t *testing.T) { youngHoldHeldElsewhere(t, btrfsSubvolumeStateDir(t)) })
}

// btrfsSubvolumeStateDir mounts a fresh btrfs image and returns a state
// dir inside a subvolume of it, as a home directory on a subvolume is.
func btrfsSubvolumeStateDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	if _, err := exec.LookPath("mkfs.btrfs"); err != nil {
		t.Skip("mkfs.btrfs unavailable (apt-get install btrfs-progs)")
	}
	base := t.TempDir()
	img, mnt := filepath.Join(base, "img"), filepath.Join(base, "m")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 200<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.btrfs", "-q", img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.btrfs: %v %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a btrfs image: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	home := filepath.Join(mnt, "home")
	if out, err := exec.Command("btrfs", "subvolume", "create", home).CombinedOutput(); err != nil {
		t.Fatalf("btrfs subvolume create: %v %s", err, out)
	}
	sd := filepath.Join(home, "session-state")
	if err := os.Mkdir(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	return sd
}

func youngHoldHeldElsewhere(t *testing.T, sd string) {
	dir := newSession(t, sd, "s")
	pid := deadPID(t)
	writeLock(t, dir, pid, time.Time{})
	hold := writeHold(t, dir, pid, time.Time{})
	// A CLI this process cannot see (hidden by hidepid, another kernel's
	// lock forwarded by virtiofsd, ...) holds the .hold's flock.
	flockHolder(t, hold, 60)
	waitFor(t, "flock(1) to take the .hold", func() bool {
		f, err := os.Open(hold)
		if err != nil {
			return false
		}
		defer f.Close()
		return tryLock(f) == errLockBusy
	})
	e := newEngine(t, sd, time.Minute) // the .hold stays young throughout
	s := mustSession(t, e, "s")
	if len(s.Holders) != 1 || s.Holders[0].Verdict != Live {
		t.Fatalf("a young .hold whose flock is held reads %s (%s: %s) on %s; want live: its lock is in /proc/locks",
			s.State, s.Holders[0].Reason, s.Holders[0].Detail, e.platform().FileSystem)
	}
	ls, err := e.List(context.Background(), ListOptions{IDs: []string{"s"}})
	if err != nil {
		t.Fatal(err)
	}
	if ls[0].State != StateInUse {
		t.Fatalf("listing: %s, want inUse", ls[0].State)
	}
}

// Issue 26: never "In use by pid N" for a pid that is not running. A .hold
// held by a process this sidecar cannot tie to its pid (a CLI in another
// container, whose pid here is nobody's) is live by its lock, and the
// prompt's sentence must not name pid N as a running holder.
func TestHeldHoldOfAPidRunningNowhereIsNotInUseByIt(t *testing.T) {
	for _, age := range []time.Duration{0, time.Minute} {
		sd := t.TempDir()
		dir := newSession(t, sd, "s")
		pid := deadPID(t)
		writeLock(t, dir, pid, time.Now().Add(-age))
		hold := writeHold(t, dir, pid, time.Now().Add(-age))
		flockHolder(t, hold, 60)
		waitFor(t, "flock(1) to take the .hold", func() bool { return lockTableHolds(must(lstatID(hold))) })
		s := mustSession(t, newEngine(t, sd, 5*time.Second), "s")
		msg := s.Message(time.Now())
		if s.State != StateInUse || strings.HasPrefix(msg, fmt.Sprintf("In use by pid %d", pid)) {
			t.Errorf("lock %s old, pid %d running nowhere: %s, %q (%s)", age, pid, s.State, msg, s.Holders[0].Detail)
		}
	}
}
