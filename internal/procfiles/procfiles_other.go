//go:build !darwin && !windows

package procfiles

// Elsewhere every call refuses: on Linux the engine reads /proc itself,
// and other systems prove nothing.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

var errOther = fmt.Errorf("%w: reading other processes' files is implemented for macOS and Windows only (on %s the engine reads /proc itself, where there is one)", errors.ErrUnsupported, runtime.GOOS)

func openers(ctx context.Context, path string, want FileID) (found, error) { return found{}, errOther }

func executable(pid int) (string, error) { return "", errOther }

func terminal(pid int) (string, error) { return "", errOther }
