package sessionlocks

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPortableDirReaderAgrees: on Linux the portable reader, which other
// systems use, reads what the native one reads.
func TestPortableDirReaderAgrees(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "0f8fad5b-d9cb-469f-a165-70867728950e")
	writeLock(t, dir, 4242, time.Now())
	writeHold(t, dir, 4242, time.Now())
	writeLock(t, dir, 77, time.Now())
	os.Mkdir(filepath.Join(sd, ".session-operation-locks"), 0o700)
	os.WriteFile(filepath.Join(sd, "not-a-dir"), nil, 0o600)
	var native, portable []string
	readSessionIDs(sd, func(b []string) { native = append(native, b...) })
	readSessionIDsPortable(sd, func(b []string) { portable = append(portable, b...) })
	if len(native) != 1 || len(portable) != 1 || native[0] != portable[0] {
		t.Fatalf("ids: native %q, portable %q", native, portable)
	}
	nr := newDirReader(sd)
	defer nr.close()
	a, errA := nr.read(dir, native[0])
	a.meta = append([]byte(nil), a.meta...)
	p, errP := (&portableDirReader{}).read(dir, native[0])
	if errA != nil || errP != nil {
		t.Fatal(errA, errP)
	}
	if a.id != p.id || !a.hasMeta || !p.hasMeta || string(a.meta) != string(p.meta) || a.metaID != p.metaID || len(a.files) != 3 || len(p.files) != 3 {
		t.Fatalf("native %+v\nportable %+v", a, p)
	}
	for i := range a.files {
		if a.files[i] != p.files[i] {
			t.Fatalf("files: native %v, portable %v", a.files, p.files)
		}
	}
}
