package sessionlocks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestResolveID resolves what people type against a real state dir: exact
// ids, unique prefixes, ambiguous ones, and names that are no session.
func TestResolveID(t *testing.T) {
	state := t.TempDir()
	for _, id := range []string{
		"33333333-aaaa", "3333bbbb-cccc", "abc", "abcdef-1", "dead0b0e-4c1e",
	} {
		if err := os.MkdirAll(filepath.Join(state, id), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Named like sessions, but not session directories.
	os.WriteFile(filepath.Join(state, "deadfile"), nil, 0o644)
	os.MkdirAll(filepath.Join(state, ".session-operation-locks"), 0o755)
	if runtime.GOOS != "windows" {
		os.Symlink(t.TempDir(), filepath.Join(state, "linked-session"))
	}
	e := New(Options{StateDir: state})

	for _, c := range []struct {
		name, in, want string
		err            error
	}{
		{"exact", "33333333-aaaa", "33333333-aaaa", nil},
		{"unique prefix", "33333333", "33333333-aaaa", nil},
		{"another unique prefix", "3333b", "3333bbbb-cccc", nil},
		{"exact wins over being a prefix of another", "abc", "abc", nil},
		{"prefix of the longer one", "abcd", "abcdef-1", nil},
		{"ambiguous", "3333", "", ErrAmbiguousID},
		{"unknown", "ffff", "", ErrNotFound},
		{"a file is no session", "deadf", "", ErrNotFound},
		{"a symlink is no session", "linked", "", ErrNotFound},
		{"dot-name refused", ".session-operation-locks", "", ErrInvalidID},
		{"dot prefix refused", ".sess", "", ErrInvalidID},
		{"path refused", "../etc", "", ErrInvalidID},
		{"empty refused", "", "", ErrInvalidID},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "a symlink is no session" && runtime.GOOS == "windows" {
				t.Skip("no symlinks without privileges")
			}
			got, err := e.Resolve(c.in)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("ResolveID(%q) = %q, %v; want %v", c.in, got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ResolveID(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}

	t.Run("ambiguous names the candidates", func(t *testing.T) {
		_, err := e.Resolve("3333")
		var ae *AmbiguousIDError
		if !errors.As(err, &ae) {
			t.Fatalf("got %v", err)
		}
		if want := []string{"33333333-aaaa", "3333bbbb-cccc"}; fmt.Sprint(ae.Candidates) != fmt.Sprint(want) || ae.Count != 2 {
			t.Errorf("candidates %v (count %d), want %v", ae.Candidates, ae.Count, want)
		}
		if msg := err.Error(); !strings.Contains(msg, "33333333-aaaa, 3333bbbb-cccc") || !strings.Contains(msg, "type more of the id") {
			t.Errorf("message %q", msg)
		}
	})

	t.Run("many candidates are bounded", func(t *testing.T) {
		dir := t.TempDir()
		for i := range 50 {
			os.MkdirAll(filepath.Join(dir, fmt.Sprintf("beef%04d", i)), 0o755)
		}
		_, err := New(Options{StateDir: dir}).Resolve("beef")
		var ae *AmbiguousIDError
		if !errors.As(err, &ae) || ae.Count != 50 || len(ae.Candidates) != maxCandidates {
			t.Fatalf("got %v", err)
		}
		if !strings.Contains(err.Error(), "and 30 more") {
			t.Errorf("message %q", err)
		}
	})

	t.Run("missing state dir", func(t *testing.T) {
		_, err := New(Options{StateDir: filepath.Join(state, "nope")}).Resolve("3333")
		var nf *NotFoundError
		if !errors.As(err, &nf) || !nf.NoDir || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("got %v; want a not-found error that says the state dir does not exist", err)
		}
	})

}
