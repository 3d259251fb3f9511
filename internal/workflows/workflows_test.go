// Tests of what .github/workflows/ci.yml and release.yml do, read from the files themselves and from the tables
// they must agree with (npm/sessionlocks/platforms.json, the Makefile's PLATFORMS).
package workflows

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

const root = "../.."

type workflow struct {
	Jobs map[string]job `yaml:"jobs"`
}

type job struct {
	RunsOn   string `yaml:"runs-on"`
	Needs    list   `yaml:"needs"`
	Strategy struct {
		Matrix struct {
			OS      []string            `yaml:"os"`
			Include []map[string]string `yaml:"include"`
		} `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []step `yaml:"steps"`
}

type step struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

// list is a YAML value that is one string or a sequence of them, as `needs` may be.
type list []string

func (l *list) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = list{n.Value}
		return nil
	}
	var s []string
	err := n.Decode(&s)
	*l = s
	return err
}

func load(t *testing.T, name string) workflow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return w
}

type platform struct{ Platform, Arch, Goos, Goarch string }

// platforms reads npm/sessionlocks/platforms.json, the one table of what we ship.
func platforms(t *testing.T) []platform {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "npm", "sessionlocks", "platforms.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ps []platform
	if err := json.Unmarshal(data, &ps); err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		t.Fatal("platforms.json is empty")
	}
	return ps
}

func mainPackage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "npm", "sessionlocks", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Name string }
	if err := json.Unmarshal(data, &m); err != nil || m.Name == "" {
		t.Fatalf("npm/sessionlocks/package.json: no name (%v)", err)
	}
	return m.Name
}

// matrixOS is the systems a job runs on: its matrix's os list or include rows, or its runs-on.
func matrixOS(j job) []string {
	if !strings.Contains(j.RunsOn, "matrix.os") {
		return []string{j.RunsOn}
	}
	oses := slices.Clone(j.Strategy.Matrix.OS)
	for _, row := range j.Strategy.Matrix.Include {
		oses = append(oses, row["os"])
	}
	return oses
}

func runsEverywhere(t *testing.T, what string, j job) {
	t.Helper()
	oses := matrixOS(j)
	for _, system := range []string{"ubuntu-", "macos-", "windows-"} {
		if !slices.ContainsFunc(oses, func(os string) bool { return strings.HasPrefix(os, system) }) {
			t.Errorf("%s runs on %v: no %s* runner", what, oses, system)
		}
	}
}

// jobsRunning names the jobs that have a step whose run: matches re, sorted.
func jobsRunning(w workflow, re *regexp.Regexp) []string {
	var names []string
	for name, j := range w.Jobs {
		if slices.ContainsFunc(j.Steps, func(s step) bool { return re.MatchString(s.Run) }) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func TestCIRunsTheTestsOnThreeSystems(t *testing.T) {
	w := load(t, "ci.yml")
	for what, re := range map[string]*regexp.Regexp{
		"the Go tests":   regexp.MustCompile(`go test -count=1 \./\.\.\.`),
		"the Node tests": regexp.MustCompile(`node --test`),
	} {
		jobs := jobsRunning(w, re)
		if len(jobs) == 0 {
			t.Errorf("no ci.yml job runs %s (%s)", what, re)
		}
		for _, name := range jobs {
			runsEverywhere(t, "ci.yml job "+name+", which runs "+what, w.Jobs[name])
		}
	}
	if jobs := jobsRunning(w, regexp.MustCompile(`(?m)^make ci$`)); len(jobs) != 1 {
		t.Errorf("jobs running `make ci`: %v, want one", jobs)
	}
}

var publishRe = regexp.MustCompile(`^node npm/scripts/publish\.mjs --version "\$VERSION" (\S+)$`)

func TestReleasePublishesEveryPlatformPackageBeforeTheMainOne(t *testing.T) {
	w := load(t, "release.yml")
	main := mainPackage(t)
	var want []string
	for _, p := range platforms(t) {
		want = append(want, main+"-"+p.Platform+"-"+p.Arch)
	}

	var published []string
	var publishJob string
	for name, j := range w.Jobs {
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "npm publish") {
				t.Errorf("job %s runs npm publish itself; only npm/scripts/publish.mjs, in the order checked here, may", name)
			}
			if !strings.Contains(s.Run, "publish.mjs") {
				continue
			}
			m := publishRe.FindStringSubmatch(strings.TrimSpace(s.Run))
			if m == nil {
				t.Errorf("job %s: a publish step this test cannot read: %q (want one package per step, as %s)", name, s.Run, publishRe)
				continue
			}
			if publishJob != "" && publishJob != name {
				t.Errorf("packages are published by two jobs, %s and %s, whose order is not fixed", publishJob, name)
			}
			publishJob = name
			published = append(published, m[1])
		}
	}

	mainAt := slices.Index(published, main)
	if mainAt < 0 {
		t.Fatalf("the release does not publish %s; it publishes %v", main, published)
	}
	if mainAt != len(published)-1 {
		t.Errorf("%s must be published once, last; the order is %v", main, published)
	}
	for _, pkg := range want {
		at := slices.Index(published, pkg)
		switch {
		case at < 0:
			t.Errorf("the release does not publish %s (platforms.json has it); it publishes %v", pkg, published)
		case at > mainAt:
			t.Errorf("%s is published after %s, which names it as a dependency: %v", pkg, main, published)
		}
	}
	for _, pkg := range published {
		if pkg != main && !slices.Contains(want, pkg) {
			t.Errorf("the release publishes %s, which platforms.json does not have", pkg)
		}
	}
	if len(published) != len(want)+1 {
		t.Errorf("the release publishes %d packages (%v), want the %d of platforms.json and the main one", len(published), published, len(want))
	}

	// What is published was tested: the publishing job waits for the tests of the packed packages.
	tests := jobsRunning(w, regexp.MustCompile(`node --test`))
	if len(tests) == 0 {
		t.Fatal("release.yml does not run the Node tests on the packed packages")
	}
	for _, name := range tests {
		if !slices.Contains(w.Jobs[publishJob].Needs, name) {
			t.Errorf("job %s publishes without waiting for job %s, which tests the packages (needs: %v)", publishJob, name, w.Jobs[publishJob].Needs)
		}
		runsEverywhere(t, "release.yml job "+name, w.Jobs[name])
		if !slices.ContainsFunc(w.Jobs[name].Steps, func(s step) bool { return s.Env["SESSIONLOCKS_PACKED"] != "" }) {
			t.Errorf("job %s does not test the packed tarballs (no step sets SESSIONLOCKS_PACKED)", name)
		}
	}
}

func TestReleaseBuildsExactlyThePlatformsTable(t *testing.T) {
	var fromTable []string
	for _, p := range platforms(t) {
		fromTable = append(fromTable, p.Goos+"/"+p.Goarch)
	}
	slices.Sort(fromTable)

	// The release builds with `make release`, whose cross-builds are the Makefile's PLATFORMS.
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PLATFORMS\s*:?=(.*)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("no PLATFORMS := line in the Makefile")
	}
	fromMake := strings.Fields(string(m[1]))
	slices.Sort(fromMake)
	if !slices.Equal(fromMake, fromTable) {
		t.Errorf("the Makefile's PLATFORMS are %v, platforms.json's %v", fromMake, fromTable)
	}

	w := load(t, "release.yml")
	builds := jobsRunning(w, regexp.MustCompile(`\bmake release\b`))
	if len(builds) != 1 {
		t.Fatalf("jobs running `make release`: %v, want one (the binaries are built once)", builds)
	}
	for name, j := range w.Jobs {
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "PLATFORMS") || regexp.MustCompile(`\bgo build\b|\bmake (cross|npm)\b`).MatchString(s.Run) {
				t.Errorf("job %s builds binaries other than through `make release`: %q", name, s.Run)
			}
		}
	}
	// The version is the tag's, taken in one place and handed to make, which stamps binaries and packages with it.
	data, _ := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yml"))
	if n := strings.Count(string(data), "${GITHUB_REF_NAME#v}"); n != 1 {
		t.Errorf("release.yml takes the version from the tag in %d places, want 1", n)
	}
	if !slices.ContainsFunc(w.Jobs[builds[0]].Steps, func(s step) bool { return strings.Contains(s.Run, `make release VERSION="$VERSION"`) }) {
		t.Errorf("job %s does not run make release with VERSION=\"$VERSION\"", builds[0])
	}

	// Each system the packages are tested on runs a binary the release built.
	for name, j := range w.Jobs {
		for _, row := range j.Strategy.Matrix.Include {
			if bin := row["binary"]; bin != "" && !slices.Contains(fromTable, strings.Replace(strings.Split(bin, "/")[0], "-", "/", 1)) {
				t.Errorf("job %s tests %s, which the release does not build", name, bin)
			}
		}
	}
}
