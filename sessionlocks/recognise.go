package sessionlocks

// Recognising the GitHub Copilot CLI by its command line. Recognition only
// ever decides liveness (a recognised process older than its lock is taken
// for the lock's writer, live "verified"); it never licenses a signal.

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// isCopilot reports whether process pid, running argv, is the GitHub
// Copilot CLI: the native binary where npm, Homebrew or WinGet put it, a
// JavaScript runtime running a script of the @github/copilot package, or
// the agency wrapper running copilot. Where argv[0] alone does not tell (a
// bare copilot from PATH), pid's executable and, on Linux, its main
// thread's name (the native CLI's is MainThread; AWS's copilot keeps its
// own) do; pid 0 looks no further than argv.
func isCopilot(argv []string, pid int) bool {
	if len(argv) == 0 {
		return false
	}
	if len(argv) == 1 {
		// One string with spaces: a process that rewrote its argv.
		if f := strings.Fields(argv[0]); len(f) > 1 {
			return isCopilot(f, pid)
		}
	}
	arg0 := slash(argv[0])
	if isCopilotBinary(arg0) {
		return true
	}
	if name := strings.ToLower(baseName(arg0)); pid > 0 && (name == "copilot" || name == "copilot.exe") {
		if exe := slash(procExe(pid)); exe != "" && isCopilotBinary(exe) {
			return true
		}
		if procComm(pid) == "MainThread" {
			return true
		}
	}
	name := strings.ToLower(strings.TrimSuffix(strings.ToLower(baseName(arg0)), ".exe"))
	switch {
	case name == "agency":
		return firstArg(argv[1:]) == "copilot" || isCopilotBinary(slash(firstArg(argv[1:])))
	case jsRuntime.MatchString(name):
		return runsCopilotScript(argv[1:], pid)
	}
	return false
}

// jsRuntime matches the names Node, Bun and Deno go by: node, nodejs,
// node20, node-22, nodejs18, bun, deno.
var jsRuntime = regexp.MustCompile(`^(node(js)?(-?[0-9][0-9.]*)?|bun|deno)$`)

// nativePackage matches the CLI's native package's directory,
// @github/copilot-<os>-<arch>[-<libc>].
var nativePackage = regexp.MustCompile(`^copilot-(linux|darwin|win32|freebsd)-[a-z0-9]+(-[a-z0-9]+)?$`)

// isCopilotBinary reports whether path (with '/' separators) is the CLI's
// native executable where npm or Homebrew put it.
func isCopilotBinary(path string) bool {
	dir, file := splitLast(path)
	if f := strings.ToLower(file); f != "copilot" && f != "copilot.exe" {
		return false
	}
	parent, pkg := splitLast(dir)
	_, scope := splitLast(parent)
	switch {
	case scope == "@github" && (pkg == "copilot" || nativePackage.MatchString(pkg)):
		return true
	case scope == "copilot-cli" && pkg != "": // .../Caskroom/copilot-cli/<version>/copilot
		return true
	case strings.HasPrefix(strings.ToLower(pkg), "github.copilot_") && strings.EqualFold(scope, "packages"): // WinGet
		return true
	}
	return false
}

// inCopilotPackage reports whether path is a file in the @github/copilot package.
func inCopilotPackage(path string) bool {
	return strings.Contains(slash(path), "/@github/copilot/")
}

// valueOptions are the runtime options whose value is the next argument;
// the script comes after them.
var valueOptions = map[string]bool{
	"-r": true, "--require": true, "--import": true, "--loader": true, "--experimental-loader": true,
	"-C": true, "--conditions": true, "--env-file": true, "--title": true, "--inspect-port": true,
	"--input-type": true, "--cpu-prof-dir": true, "--heap-prof-dir": true, "--diagnostic-dir": true,
	"--redirect-warnings": true, "--openssl-config": true, "--icu-data-dir": true,
}

// runsCopilotScript reports whether a runtime's arguments run a script of
// the @github/copilot package: the first argument that is not an option or
// an option's value; a bare word after an option the table does not know
// (node -W ignore script.js) is taken for its value, once.
func runsCopilotScript(args []string, pid int) bool {
	skipped := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return isCopilotScript(args[i+1], pid)
			}
			return false
		case valueOptions[a]:
			i++
			continue
		case strings.HasPrefix(a, "-"):
			continue
		case a == "run" && i == 0: // deno run, bun run
			continue
		}
		if isCopilotScript(a, pid) {
			return true
		}
		if skipped || i == 0 || !strings.HasPrefix(args[i-1], "-") || strings.ContainsAny(a, `/\`) {
			return false
		}
		skipped = true
	}
	return false
}

// isCopilotScript reports whether a runtime's script argument is in the
// @github/copilot package, directly or through links (npm's bin/copilot),
// followed as process pid sees them: from its own root and working
// directory (/proc/<pid>/root, cwd); pid 0 follows them here.
func isCopilotScript(a string, pid int) bool {
	if inCopilotPackage(a) {
		return true
	}
	if base := strings.ToLower(baseName(a)); base != "copilot" && base != "copilot.js" {
		return false
	}
	return inCopilotPackage(resolveIn(pid, a))
}

// resolveIn follows the links of path p as process pid sees it, reading
// each link's text only, and returns where they lead, or "" if it cannot tell.
func resolveIn(pid int, p string) string {
	root := ""
	if pid > 0 {
		root = "/proc/" + strconv.Itoa(pid) + "/root"
		if !filepath.IsAbs(p) {
			cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
			if err != nil {
				return ""
			}
			p = filepath.Join(cwd, p)
		}
	} else if !filepath.IsAbs(p) {
		return ""
	}
	for range 8 { // npm's bin link is one hop; a chain longer than this is not npm's
		target, err := os.Readlink(root + p)
		if err != nil {
			return p // not a link (or unreadable): where the chain ends
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
	}
	return ""
}

// firstArg is the first argument that is not an option.
func firstArg(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

func slash(p string) string { return strings.ReplaceAll(p, `\`, "/") }

// splitLast splits a '/'-separated path at its last separator.
func splitLast(p string) (dir, last string) {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}

// baseName splits on both separators: a Windows command line seen on any OS.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
