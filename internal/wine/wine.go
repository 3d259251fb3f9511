// Package wine tells a test that it runs under Wine, and skips it there when it meets one of Wine's known gaps.
// `make test-windows` runs every package's tests as windows/amd64 binaries under Debian's Wine; a test that Wine
// cannot run truthfully says which gap it meets, here, rather than being left out by name in the Makefile.
package wine

import "testing"

// Gap is what Wine (8.0, Debian 12's) does differently from Windows, as a test that skips names it.
type Gap string

// The gaps tests meet. Each goes when the Wine that `make test-windows` installs no longer has it.
const (
	// Symlink: CreateSymbolicLink is a stub that reports success and makes nothing, so os.Symlink says a link
	// was made that is not there.
	Symlink Gap = "CreateSymbolicLink reports success and makes no link"
	// ExitedVisible: a process that exited stays visible to OpenProcess for up to about a second.
	ExitedVisible Gap = "an exited process stays visible for up to ~1 s"
	// DeleteWhileOpen: a file or directory deleted while another handle has it open stays in its directory
	// until that handle closes (Wine has no POSIX delete semantics, which Windows 10 uses and Go asks for), so
	// the directory cannot be removed meanwhile, and a watcher that holds a deleted directory open never sees
	// it go.
	DeleteWhileOpen Gap = "a file or directory deleted while open stays until its last handle closes"
	// PendingDelete: a file pending deletion (still open elsewhere) can be re-created under its name, and the
	// new file is then deleted when the old one's last handle closes; Windows refuses the re-create.
	PendingDelete Gap = "a file pending deletion can be re-created, and the new one is then deleted"
	// PosixRename: a rename with POSIX semantics (FileRenameInfoEx), which replaces a file others have open
	// with FILE_SHARE_DELETE, is not implemented.
	PosixRename Gap = "no rename with POSIX semantics (FileRenameInfoEx)"
	// RestartManager: the Restart Manager (rstrtmgr.dll) is a stub that names no process.
	RestartManager Gap = "the Restart Manager is a stub"
)

// Skip skips t when it runs under Wine, saying which gap it meets; elsewhere it does nothing.
func Skip(t testing.TB, gap Gap) {
	t.Helper()
	if Running() {
		t.Skip("skipped under Wine: " + string(gap))
	}
}
