package wine

import (
	"os"
	"runtime"
	"testing"
)

// `make test-windows` runs the tests under Wine with WINEPREFIX set, which Wine passes on to Windows programs; on
// Windows itself and elsewhere it is unset.
func TestRunning(t *testing.T) {
	want := runtime.GOOS == "windows" && os.Getenv("WINEPREFIX") != ""
	if Running() != want {
		t.Errorf("Running() = %v on %s with WINEPREFIX=%q", Running(), runtime.GOOS, os.Getenv("WINEPREFIX"))
	}
}
