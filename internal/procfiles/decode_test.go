package procfiles

// The decoders on recorded bytes (testdata/*.hex, each saying where its
// bytes come from), runnable on every system.

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// record reads a testdata/*.hex file: '#' lines are comments, the rest hex.
func record(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var h strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); !strings.HasPrefix(line, "#") {
			h.WriteString(line)
		}
	}
	b, err := hex.DecodeString(h.String())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func TestDecodeFDList(t *testing.T) {
	b := record(t, "libproc-listfds.hex")
	got, err := decodeFDList(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []fdEntry{{0, proxFDTypeVnode}, {1, 6}, {2, 6}, {3, 5}, {21, proxFDTypeVnode}}
	if !slices.Equal(got, want) {
		t.Errorf("decodeFDList = %v, want %v", got, want)
	}
	if _, err := decodeFDList(b[:len(b)-3]); err == nil {
		t.Error("a record cut short decoded without an error")
	}
	if got, err := decodeFDList(nil); err != nil || len(got) != 0 {
		t.Errorf("no descriptors: %v, %v", got, err)
	}
}

func TestDecodeVnodePath(t *testing.T) {
	tests := []struct {
		file string
		want OpenFile
	}{
		{"libproc-vnodepath-hold.hex", OpenFile{FD: 21, FileID: FileID{Dev: 0x1000011, Ino: 0x2f1e4b7},
			Path: "/Users/dev/.copilot/session-state/0198c0de-4a2b-7c3d-8e9f-0a1b2c3d4e5f/inuse.4242.hold"}},
		{"libproc-vnodepath-big.hex", OpenFile{FD: 21, FileID: FileID{Dev: 0xbf000003, Ino: 0x1234567890ab}, Path: "/Volumes/x/f"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := record(t, tt.file)
			got, err := decodeVnodePath(21, b)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("decodeVnodePath = %+v, want %+v", got, tt.want)
			}
			if _, err := decodeVnodePath(21, b[:1199]); err == nil {
				t.Error("1199 bytes decoded without an error")
			}
		})
	}
}

func TestDecodeVnodePathFullPath(t *testing.T) {
	// A path that fills vip_path to its last byte (the kernel NUL-terminates
	// it there; a record without a NUL must still not read past it).
	b := make([]byte, vnodeFDInfoWithPathSize)
	for i := offPath; i < len(b); i++ {
		b[i] = 'a'
	}
	f, err := decodeVnodePath(3, b)
	if err != nil || len(f.Path) != maxPathLen {
		t.Errorf("decodeVnodePath = %d-byte path, %v; want %d bytes", len(f.Path), err, maxPathLen)
	}
}

// TestSameDarwinFile: dev_t is a signed 32-bit int on macOS; a caller that
// sign-extends st_dev still matches what vinfo_stat's uint32 vst_dev says.
func TestSameDarwinFile(t *testing.T) {
	vst := FileID{Dev: 0xbf000003, Ino: 0x1234567890ab}
	var stDev int32 = -0x40fffffd // 0xbf000003 as a dev_t
	for _, want := range []FileID{
		{Dev: uint64(stDev), Ino: vst.Ino},         // sign-extended
		{Dev: uint64(uint32(stDev)), Ino: vst.Ino}, // zero-extended
	} {
		if !sameDarwinFile(vst, want) {
			t.Errorf("sameDarwinFile(%#x, %#x) = false", vst, want)
		}
	}
	for _, other := range []FileID{{Dev: vst.Dev, Ino: vst.Ino + 1}, {Dev: vst.Dev + 1, Ino: vst.Ino}, {Dev: vst.Dev, Ino: vst.Ino & 0xffffffff}} {
		if sameDarwinFile(vst, other) {
			t.Errorf("sameDarwinFile(%#x, %#x) = true", vst, other)
		}
	}
}

func TestDecodePIDs(t *testing.T) {
	b := []byte{0, 0, 0, 0, 1, 0, 0, 0, 0x92, 0x10, 0, 0, 0xff} // 0 (kernel), 1, 4242, a stray byte
	if got := decodePIDs(b); !slices.Equal(got, []int32{1, 4242}) {
		t.Errorf("decodePIDs = %v", got)
	}
}

func TestDecodeProcessInfo(t *testing.T) {
	b := record(t, "rstrtmgr-processinfo.hex")
	if len(b) != 2*rmProcessInfoSize {
		t.Fatalf("%d bytes recorded, want two %d-byte records", len(b), rmProcessInfoSize)
	}
	got, err := decodeProcessInfo(b, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []Process{
		{PID: 4242, Start: time.Date(2026, 1, 1, 0, 0, 0, 123456700, time.UTC)},
		{PID: 1188, Start: time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)},
	}
	if len(got) != len(want) {
		t.Fatalf("decodeProcessInfo = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].PID != want[i].PID || !got[i].Start.Equal(want[i].Start) {
			t.Errorf("[%d] = %d %s, want %d %s", i, got[i].PID, got[i].Start.UTC().Format(time.RFC3339Nano), want[i].PID, want[i].Start.Format(time.RFC3339Nano))
		}
	}
	if got, err := decodeProcessInfo(b, 0); err != nil || len(got) != 0 {
		t.Errorf("none listed: %v, %v", got, err)
	}
	for _, n := range []int{3, -1} {
		if _, err := decodeProcessInfo(b, n); err == nil {
			t.Errorf("%d records claimed in a buffer of 2 decoded without an error", n)
		}
	}
	if !filetime(0).IsZero() {
		t.Error("a zero FILETIME is not unknown")
	}
}
