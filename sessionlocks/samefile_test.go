package sessionlocks

// The .hold probe touches only the file judged: sameFile's rule, and
// probeHold keeping to it on a real file replaced under its name, on every
// system (Unix compares dev and inode, Windows volume serial and file index).

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSameFile(t *testing.T) {
	judged := fileID{dev: 0x2a, ino: 7, mode: 1, size: 0, msec: 100}
	tests := []struct {
		name      string
		want, got fileID
		same      bool
	}{
		{"the same file", judged, judged, true},
		{"the same file, rewritten since", judged, fileID{dev: 0x2a, ino: 7, mode: 1, size: 9, msec: 200}, true},
		{"another inode (file index)", judged, fileID{dev: 0x2a, ino: 8, mode: 1}, false},
		{"another device (volume)", judged, fileID{dev: 0x2b, ino: 7, mode: 1}, false},
		{"file index in the high word", fileID{dev: 1, ino: 1 << 32, mode: 1}, fileID{dev: 1, ino: 0, mode: 1}, false},
		{"nothing was judged", fileID{}, fileID{dev: 3, ino: 4, mode: 1}, true},
		{"judged without an identity (no file index)", fileID{mode: 1, msec: 100}, fileID{dev: 3, ino: 4, mode: 1}, true},
		{"opened without an identity", judged, fileID{mode: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameFile(tt.want, tt.got); got != tt.same {
				t.Errorf("sameFile(%+v, %+v) = %v, want %v", tt.want, tt.got, got, tt.same)
			}
		})
	}
}

// A .hold replaced after it was judged (a CLI re-creating it) is not
// probed: its new owner may be about to lock it.
func TestProbeHoldLeavesAReplacedFileAlone(t *testing.T) {
	dir := t.TempDir()
	hold := filepath.Join(dir, holdFileName(4242))
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	judged, err := lstatID(hold)
	if err != nil {
		t.Fatal(err)
	}
	if hp := probeHold(hold, judged); hp.err != nil || hp.held || !sameFile(judged, hp.id) {
		t.Fatalf("probe of the file judged: held %v, err %v, id %+v (judged %+v)", hp.held, hp.err, hp.id, judged)
	}
	// Made while the first still exists, so that it cannot get its inode.
	other := filepath.Join(dir, "new")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, hold); err != nil {
		t.Fatal(err)
	}
	if hp := probeHold(hold, judged); !hp.changed {
		t.Fatalf("probe of a replaced .hold: held %v, err %v; want it reported changed", hp.held, hp.err)
	}
}
