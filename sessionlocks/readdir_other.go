//go:build !linux

package sessionlocks

import "os"

// readLockNames lists a session directory's inuse.* names and says whether
// it holds a workspace.yaml.
func readLockNames(dir string) (names []string, hasMeta bool, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	all, err := f.Readdirnames(-1)
	if err != nil {
		return nil, false, err
	}
	for _, n := range all {
		if _, _, ok := parseLockName(n); ok {
			names = append(names, n)
		} else if n == "workspace.yaml" {
			hasMeta = true
		}
	}
	return names, hasMeta, nil
}
