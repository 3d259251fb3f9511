package realcli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// tarball writes an npm-style .tgz holding entries and returns its path.
func tarball(t *testing.T, entries ...*tar.Header) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, h := range entries {
		body := []byte("#!/bin/sh\n")
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(body)
		}
	}
	tw.Close()
	zw.Close()
	path := filepath.Join(t.TempDir(), "pkg.tgz")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func reg(name string, mode int64) *tar.Header {
	return &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: mode}
}

func TestUnpack(t *testing.T) {
	tests := []struct {
		name    string
		entries []*tar.Header
		wantErr string
	}{
		{"package files", []*tar.Header{reg("package/copilot", 0o755), reg("package/package.json", 0o644)}, ""},
		{"outside package/", []*tar.Header{reg("other/copilot", 0o755)}, "outside package/"},
		{"traversal", []*tar.Header{reg("package/../../etc/x", 0o644)}, "outside package/"},
		{"absolute", []*tar.Header{reg("/package/x", 0o644)}, "outside package/"},
		{"symlink", []*tar.Header{{Name: "package/copilot", Typeflag: tar.TypeSymlink, Linkname: "/bin/sh"}}, "only files and directories"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out")
			err := unpack(tarball(t, tt.entries...), dst)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				fi, err := os.Stat(filepath.Join(dst, "copilot"))
				// Windows has no executable bit: there the file is all.
				if err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o755 {
					t.Fatalf("copilot: %v, %v; want an executable", fi, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("unpack: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestVerifyIntegrity(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("content"), 0o644)
	sum := sha512.Sum512([]byte("content"))
	good := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	if err := verifyIntegrity(file, good); err != nil {
		t.Errorf("matching integrity: %v", err)
	}
	other := sha512.Sum512([]byte("other"))
	if err := verifyIntegrity(file, "sha512-"+base64.StdEncoding.EncodeToString(other[:])); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("mismatching integrity: %v, want a refusal", err)
	}
	if err := verifyIntegrity(file, "sha1-abc"); err == nil {
		t.Errorf("sha1 integrity accepted")
	}
}

func TestNPMError(t *testing.T) {
	out := []byte(`{"error":{"code":"ECONNREFUSED","summary":"FetchError: request to http://127.0.0.1:9/x failed","detail":"proxy?"}}`)
	msg := npmError(out, "")
	if msg != "ECONNREFUSED: FetchError: request to http://127.0.0.1:9/x failed" {
		t.Errorf("npmError = %q", msg)
	}
	if !networkFailure.MatchString(msg) {
		t.Errorf("%q not classed as a network failure", msg)
	}
	if e := npmError(nil, "npm ERR! code E404\nnpm ERR! 404 Not Found"); networkFailure.MatchString(e) {
		t.Errorf("a 404 (%q) was classed as a network failure: it must fail, not skip", e)
	}
}

func TestCheckVersion(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "copilot")
	os.WriteFile(bin, nil, 0o755)
	for _, tt := range []struct{ pkg, wantErr string }{
		{`{"name":"@github/copilot-linux-x64","version":"` + Version + `"}`, ""},
		{`{"name":"@github/copilot-linux-x64","version":"1.0.1"}`, "want"},
		{`{"name":"left-pad","version":"` + Version + `"}`, "want"},
	} {
		os.WriteFile(filepath.Join(dir, "package.json"), []byte(tt.pkg), 0o644)
		err := checkVersion(bin)
		if (tt.wantErr == "") != (err == nil) {
			t.Errorf("package.json %s: %v", tt.pkg, err)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"session-state/0f8fad5b-d9cb-469f-a165-70867728950e/inuse.4242.lock":               "session-state/<uuid>/inuse.<pid>.lock",
		"session-state/.session-operation-locks/0f8fad5b-d9cb-469f-a165-70867728950e.lock": "session-state/.session-operation-locks/<uuid>.lock",
		"logs/process-1795313422894-6859.log":                                              "logs/process-<ms>-<pid>.log",
		"session-state/x/inuse.0.lock":                                                     "session-state/x/inuse.0.lock", // not a pid the CLI writes
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLayoutRoundTrip(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("records Unix permission bits and a symbolic link, which Windows does not have")
	}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "s", "0f8fad5b-d9cb-469f-a165-70867728950e"), 0o700)
	os.WriteFile(filepath.Join(root, "s", "0f8fad5b-d9cb-469f-a165-70867728950e", "inuse.77.lock"), []byte("77\n"), 0o644)
	os.Symlink("nowhere", filepath.Join(root, "link"))
	// Explicit modes: the caller's umask must not matter.
	os.Chmod(filepath.Join(root, "s"), 0o755)
	os.Chmod(filepath.Join(root, "s", "0f8fad5b-d9cb-469f-a165-70867728950e", "inuse.77.lock"), 0o644)
	es, err := Record(root)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteLayout(&b, "a comment\nover two lines", Section{"live", es}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLayout(&b)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"l 0777 - link", "d 0755 - s", "d 0700 - s/<uuid>", "f 0644 3 s/<uuid>/inuse.<pid>.lock"}
	var lines []string
	for _, e := range got["live"] {
		lines = append(lines, e.String())
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("round trip:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if _, err := ReadLayout(strings.NewReader("f 0644 nope path\n")); err == nil {
		t.Errorf("a bad size was accepted")
	}
}

func TestHoldLocked(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("HoldLocked is implemented on unix only")
	}
	path := filepath.Join(t.TempDir(), "inuse.1.hold")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if held, err := HoldLocked(path); err != nil || held {
		t.Fatalf("unlocked hold: held=%v err=%v", held, err)
	}
	// flock(1) in another process holds it, as the CLI would; -F: it
	// becomes the sleep(1), so killing it leaves nothing holding the file.
	cmd := exec.Command("flock", "-F", "-x", path, "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; ; i++ {
		held, err := HoldLocked(path)
		if err != nil {
			t.Fatal(err)
		}
		if held {
			break
		}
		if i == 500 {
			t.Fatal("a hold flocked by flock(1) was never seen as held")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := HoldLocked(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Errorf("a missing hold gave no error")
	}
}
