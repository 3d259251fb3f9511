// Package realcli installs the pinned GitHub Copilot CLI from the npm registry
// and runs it offline, so that the conformance tests (build tag realcli, run by
// `make test-realcli`) can check sessionlocks against the real thing rather
// than against fixtures we wrote ourselves.
//
// The CLI is the native binary of @github/copilot-<platform>, unpacked into a
// cache directory under the path npm would give it
// (node_modules/@github/copilot-linux-x64/copilot), because the engine
// recognises the CLI by that argv[0]. The tarball is fetched with `npm pack`, so
// the user's registry, proxy and certificate settings apply, and checked
// against the integrity pinned here before anything is unpacked.
//
// Each run gets its own HOME, a loopback Provider that never answers (the CLI
// then waits for its first model response until it is killed), and its own
// process group, so that a test can kill everything it started.
package realcli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// Version is the Copilot CLI release the conformance tests pin. The layout
// fixture under testdata/realcli is named after it.
const Version = "1.0.102"

// A pin is one platform package at Version and the registry's sha512
// integrity for its tarball (`npm view <pkg>@<version> dist.integrity`).
type pin struct {
	pkg       string
	integrity string
}

// pins lists the platforms whose package we have checked. The conformance
// tests read /proc, so only Linux matters; other platforms report
// ErrUnavailable.
var pins = map[string]pin{
	"linux/amd64": {"@github/copilot-linux-x64", "sha512-eGHPbsP0p2QgfVZCjtbGBFZPBOJQ0DN7xIbBRAo7oG8b1zfLirQIdfI4h8Iy68Dv2cKJGJZg2/EO7W7KpIMJOw=="},
	"linux/arm64": {"@github/copilot-linux-arm64", "sha512-5rO0B2/AduCekrE+aUzipySKZxZY2b/tVRZ8Suy8ymPFNC0Q7HQiQ8DZhxj+3RhHR8rU2Z8KOJVAbtMlROX6+A=="},
}

// ErrUnavailable means the real CLI cannot be had here: the registry cannot
// be reached, npm is missing, or the platform has no pinned package. Callers
// skip rather than fail.
var ErrUnavailable = errors.New("real Copilot CLI unavailable")

// EnvBinary names an environment variable that, when set, points at an
// already installed copilot binary to use instead of the cache.
const EnvBinary = "SESSIONLOCKS_REALCLI"

// EnvCache overrides the cache directory (default: the user cache directory
// plus sessionlocks/realcli).
const EnvCache = "SESSIONLOCKS_REALCLI_CACHE"

// Install is an installed copilot binary.
type Install struct {
	// Binary is the absolute path of the native copilot executable.
	Binary string
	// Dir is the directory the package was installed into.
	Dir string
	// Cached is true when nothing had to be downloaded.
	Cached bool
}

// CacheDir returns the directory that holds one subdirectory per installed version.
func CacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set %s): %w", EnvCache, err)
	}
	return filepath.Join(base, "sessionlocks", "realcli"), nil
}

// marker is written last, naming the integrity that was verified, so that a
// half-finished install is never mistaken for a good one.
const marker = ".installed"

// Ensure returns the pinned CLI, installing it into the cache first if it is
// not there. Progress goes to log. Errors wrapping ErrUnavailable mean "skip".
func Ensure(ctx context.Context, log io.Writer) (Install, error) {
	if b := os.Getenv(EnvBinary); b != "" {
		abs, err := filepath.Abs(b)
		if err != nil {
			return Install{}, err
		}
		if err := checkVersion(abs); err != nil {
			return Install{}, fmt.Errorf("%s=%s: %w", EnvBinary, b, err)
		}
		return Install{Binary: abs, Dir: filepath.Dir(abs), Cached: true}, nil
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	p, ok := pins[platform]
	if !ok {
		return Install{}, fmt.Errorf("%w: no pinned Copilot CLI package for %s", ErrUnavailable, platform)
	}
	cache, err := CacheDir()
	if err != nil {
		return Install{}, err
	}
	dir := filepath.Join(cache, Version)
	in := Install{Dir: dir, Binary: binaryPath(dir, p.pkg), Cached: true}
	if b, err := os.ReadFile(filepath.Join(dir, marker)); err == nil && strings.TrimSpace(string(b)) == p.integrity {
		if _, err := os.Stat(in.Binary); err == nil {
			return in, nil
		}
	}
	in.Cached = false
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return Install{}, err
	}
	tmp, err := os.MkdirTemp(cache, ".install-"+Version+"-")
	if err != nil {
		return Install{}, err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(log, "realcli: fetching %s@%s (about 130 MB) into %s\n", p.pkg, Version, dir)
	tgz, err := npmPack(ctx, tmp, p.pkg+"@"+Version)
	if err != nil {
		return Install{}, err
	}
	if err := verifyIntegrity(tgz, p.integrity); err != nil {
		return Install{}, err
	}
	stage := filepath.Join(tmp, "stage")
	if err := unpack(tgz, filepath.Join(stage, "node_modules", filepath.FromSlash(p.pkg))); err != nil {
		return Install{}, fmt.Errorf("unpack %s: %w", p.pkg, err)
	}
	if err := checkVersion(binaryPath(stage, p.pkg)); err != nil {
		return Install{}, err
	}
	if err := os.WriteFile(filepath.Join(stage, marker), []byte(p.integrity+"\n"), 0o644); err != nil {
		return Install{}, err
	}
	// A stale or half-finished install is replaced whole; a concurrent
	// Ensure that got there first is as good as ours.
	os.RemoveAll(dir)
	if err := os.Rename(stage, dir); err != nil {
		if b, rerr := os.ReadFile(filepath.Join(dir, marker)); rerr == nil && strings.TrimSpace(string(b)) == p.integrity {
			return in, nil
		}
		return Install{}, err
	}
	fmt.Fprintf(log, "realcli: installed %s\n", in.Binary)
	return in, nil
}

func binaryPath(dir, pkg string) string {
	return filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "copilot")
}

// networkFailure matches npm's messages for a registry it cannot reach.
var networkFailure = regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ESOCKETTIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENETDOWN|network|socket hang up|getaddrinfo|proxy`)

// npmPack downloads spec's tarball into dir and returns its path.
func npmPack(ctx context.Context, dir, spec string) (string, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("%w: npm is not installed: %v", ErrUnavailable, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "pack", "--json", "--silent", "--pack-destination", dir,
		"--fetch-retries", "1", "--fetch-timeout", "60000", spec)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := npmError(stdout.Bytes(), stderr.String())
		if networkFailure.MatchString(msg) || ctx.Err() != nil {
			return "", fmt.Errorf("%w: npm registry unreachable: %s", ErrUnavailable, lastLines(msg, 3))
		}
		return "", fmt.Errorf("npm pack %s: %v: %s", spec, err, lastLines(msg, 5))
	}
	tgz, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if len(tgz) != 1 {
		return "", fmt.Errorf("npm pack %s left %d tarballs in %s", spec, len(tgz), dir)
	}
	return tgz[0], nil
}

// npmError extracts "CODE: summary" from the JSON npm prints with --json,
// falling back to its raw output.
func npmError(stdout []byte, stderr string) string {
	var e struct {
		Error struct{ Code, Summary string }
	}
	if json.Unmarshal(stdout, &e) == nil && e.Error.Summary != "" {
		return e.Error.Code + ": " + e.Error.Summary
	}
	return strings.TrimSpace(stderr + "\n" + string(stdout))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// verifyIntegrity checks file against an npm "sha512-<base64>" integrity string.
func verifyIntegrity(file, integrity string) error {
	want, ok := strings.CutPrefix(integrity, "sha512-")
	if !ok {
		return fmt.Errorf("unsupported integrity %q", integrity)
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha512.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	got := base64.StdEncoding.EncodeToString(h.Sum(nil))
	if got != want {
		return fmt.Errorf("%s: integrity sha512-%s, want %s: refusing to install it", filepath.Base(file), got, integrity)
	}
	return nil
}

// unpack extracts an npm tarball (entries under package/) into dst. Only
// regular files and directories are written, and no entry may leave dst.
func unpack(tgz, dst string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		rel, ok := strings.CutPrefix(path.Clean(hdr.Name), "package/")
		if !ok || rel == "" || rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
			return fmt.Errorf("tarball entry %q is outside package/", hdr.Name)
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(target, tr, hdr.FileInfo().Mode().Perm()|0o600); err != nil {
				return err
			}
		default:
			return fmt.Errorf("tarball entry %q has type %q; only files and directories are expected", hdr.Name, hdr.Typeflag)
		}
	}
}

func writeFile(target string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// checkVersion reads the package.json beside the binary and insists on the
// pinned release, so that a fixture is never compared against some other CLI.
// (Running `copilot --version` would do, but the CLI unpacks a 235 MB runtime
// into its cache directory first.)
func checkVersion(bin string) error {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "package.json"))
	if err != nil {
		return fmt.Errorf("not an npm-installed Copilot CLI: %w", err)
	}
	var pj struct{ Name, Version string }
	if err := json.Unmarshal(b, &pj); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(filepath.Dir(bin), "package.json"), err)
	}
	if !strings.HasPrefix(pj.Name, "@github/copilot-") || pj.Version != Version {
		return fmt.Errorf("%s is %s@%s, want a @github/copilot-<platform> package at %s", bin, pj.Name, pj.Version, Version)
	}
	if _, err := os.Stat(bin); err != nil {
		return err
	}
	return nil
}
