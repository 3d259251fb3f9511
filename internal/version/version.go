// Package version holds the version stamped into the binary at link time.
package version

// Version is set with -ldflags "-X github.com/copilot-ide/sessionlocks/internal/version.Version=...".
var Version = "dev"
