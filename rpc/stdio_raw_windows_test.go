package rpc

// rawStdoutWrite for the stdio test on Windows: a write to the standard
// output handle.

import "golang.org/x/sys/windows"

// rawStdoutWrite writes to the process's standard output beneath os.Stdout,
// as a C library or a child process would: through the handle
// GetStdHandle gives now.
func rawStdoutWrite(b []byte) {
	h, err := windows.GetStdHandle(windows.STD_OUTPUT_HANDLE)
	if err != nil {
		return
	}
	var n uint32
	windows.WriteFile(h, b, &n, nil)
}
