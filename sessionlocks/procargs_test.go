package sessionlocks

// parseProcargs2 on kern.procargs2 records as macOS's kernel lays them out
// (xnu's sysctl_procargsx), runnable on every system.

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
)

// procargs builds a record: argc, the exec path, pad NULs, then the NUL-
// terminated strings that follow (arguments, environment, apple strings).
func procargs(argc uint32, exe string, pad int, strs ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, argc)
	b = append(b, exe...)
	b = append(b, make([]byte, 1+pad)...)
	for _, s := range strs {
		b = append(append(b, s...), 0)
	}
	return b
}

// kernelPad is the padding xnu puts after the exec path: exec_save_path
// prefixes it with "executable_path=" (16 bytes) in the string area, and
// exec_extract_strings pads the area with NULs to a pointer boundary (8
// bytes for a 64-bit process) before argv; sysctl_procargsx returns argc,
// then the area from the path on.
func kernelPad(exe string) int { return (8 - (16+len(exe)+1)%8) % 8 }

func TestParseProcargs2(t *testing.T) {
	const cli = "/opt/homebrew/Caskroom/copilot-cli/1.0.102/copilot"
	// A native CLI as Homebrew starts it: the exec path, padding to an
	// 8-byte boundary, argv, the environment and the kernel's apple strings.
	native := procargs(2, cli, kernelPad(cli), cli, "--resume",
		"HOME=/Users/dev", "PATH=/opt/homebrew/bin:/usr/bin",
		"executable_path="+cli, "ptr_munge=", "main_stack=")
	// The npm CLI: node runs the script, argv[0] is not the exec path.
	node := procargs(3, "/usr/local/bin/node", kernelPad("/usr/local/bin/node"), "node", "/usr/local/lib/node_modules/@github/copilot/index.js", "--continue", "TERM=xterm-256color")
	tests := []struct {
		name    string
		in      []byte
		argv    []string
		wantErr bool
	}{
		{"native CLI with environment", native, []string{cli, "--resume"}, false},
		{"npm CLI under node", node, []string{"node", "/usr/local/lib/node_modules/@github/copilot/index.js", "--continue"}, false},
		{"no padding", procargs(1, "/bin/sleep", 0, "sleep"), []string{"sleep"}, false},
		{"argc 0", procargs(0, "/bin/x", 3, "ENV=1"), []string{}, false},
		{"arguments end at the record's end", procargs(2, "/bin/x", 1, "a", "b"), []string{"a", "b"}, false},
		{"empty", nil, nil, true},
		{"argc cut short", []byte{2, 0}, nil, true},
		{"only argc", procargs(1, "", 0)[:4], nil, true},
		{"exec path not terminated", append(binary.LittleEndian.AppendUint32(nil, 1), "/bin/sle"...), nil, true},
		{"last argument not terminated", append(procargs(2, "/bin/x", 1, "a"), "bc"...), nil, true},
		{"fewer arguments than argc", procargs(5, "/bin/x", 1, "a", "b"), nil, true},
		{"negative argc", procargs(0xffffffff, "/bin/x", 1, "a"), nil, true},
		{"huge argc", procargs(1<<30, "/bin/x", 1, "a"), nil, true},
		{"all NULs: argc 0, an empty path, well formed", make([]byte, 64), []string{}, false},
		// argv[0] may be "" (execve(path, {"", ...})): its NUL follows the
		// padding and is not more padding.
		{"empty argv[0] after padding", procargs(2, "/bin/sleep", kernelPad("/bin/sleep"), "", "30", "HOME=/"), []string{"", "30"}, false},
		{"empty argv[0], no padding", procargs(2, "/bin/sh", kernelPad("/bin/sh"), "", "-c", "HOME=/"), []string{"", "-c"}, false},
		{"all arguments empty", procargs(3, cli, kernelPad(cli), "", "", "", "HOME=/"), []string{"", "", ""}, false},
		{"only an empty argv[0]", procargs(1, "/bin/x", kernelPad("/bin/x"), ""), []string{""}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, err := parseProcargs2(tt.in)
			if tt.wantErr {
				if err == nil || !errors.Is(err, errProcargs) {
					t.Fatalf("parseProcargs2 = %q, %v; want an errProcargs", argv, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(argv, tt.argv) {
				t.Errorf("parseProcargs2 = %q; want %q", argv, tt.argv)
			}
		})
	}
}

// FuzzParseProcargs2: no input panics, and what parses is argc arguments,
// none holding a NUL.
func FuzzParseProcargs2(f *testing.F) {
	f.Add(procargs(2, "/bin/copilot", 4, "copilot", "--resume", "HOME=/"))
	f.Add(procargs(3, "/x", 0, "a"))
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		argv, err := parseProcargs2(b)
		if err != nil {
			return
		}
		if n := int(binary.LittleEndian.Uint32(b)); len(argv) != n {
			t.Fatalf("argc %d, %d arguments", n, len(argv))
		}
		if slices.ContainsFunc(argv, func(a string) bool { return strings.ContainsRune(a, 0) }) {
			t.Fatalf("a NUL inside %q", argv)
		}
	})
}
