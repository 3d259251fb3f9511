package procfiles

import (
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"testing"
)

// TestRefusals: a call that cannot work on this system says so (an error
// wrapping errors.ErrUnsupported), and Openers never answers "nobody".
func TestRefusals(t *testing.T) {
	calls := map[string]func() error{
		"Openers": func() error {
			procs, _, err := Openers(context.Background(), os.Args[0], FileID{})
			if procs != nil {
				t.Errorf("Openers refused with an answer: %v", procs)
			}
			return err
		},
		"Executable": func() error { _, err := Executable(os.Getpid()); return err },
		"Terminal":   func() error { _, err := Terminal(os.Getpid()); return err },
	}
	var refused []string
	switch runtime.GOOS {
	case "darwin":
	case "windows":
		refused = []string{"Executable", "Terminal"}
	default:
		refused = []string{"Openers", "Executable", "Terminal"}
	}
	for name, call := range calls {
		if err := call(); errors.Is(err, errors.ErrUnsupported) != slices.Contains(refused, name) {
			t.Errorf("%s on %s: %v", name, runtime.GOOS, err)
		}
	}
}
