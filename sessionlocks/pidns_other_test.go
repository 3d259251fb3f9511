//go:build !linux

package sessionlocks

// PID namespaces are Linux's; elsewhere the PID-reuse-by-copilot test does not exist.
const nsHelperEnv = "SESSIONLOCKS_TEST_PIDNS"

func runNamespaceHelper() int { return 0 }
