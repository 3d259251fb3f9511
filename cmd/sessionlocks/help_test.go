package main

// Help asked for goes to stdout and exits 0, for the main command and every
// subcommand (issue 17: `--help` went to stderr, `version -h` exited 2); a
// mistake's usage goes to stderr with exit 2.

import (
	"strings"
	"testing"
)

func TestHelp(t *testing.T) {
	bin := serveBinary(t)
	type want struct {
		code   int
		stdout string // its first line begins so
		stderr string // contains this; "" means empty
	}
	cases := map[string]want{
		"--help":             {0, "usage: sessionlocks <command>", ""},
		"-h":                 {0, "usage: sessionlocks <command>", ""},
		"help":               {0, "usage: sessionlocks <command>", ""},
		"help call":          {0, "usage: sessionlocks call", ""},
		"":                   {2, "", "usage: sessionlocks <command>"},
		"nosuch":             {2, "", `unknown command "nosuch"`},
		"version -x":         {2, "", "usage: sessionlocks version"},
		"version x":          {2, "", `unexpected argument "x"`},
		"list --all --bogus": {2, "", "flag provided but not defined: -bogus"},
	}
	for name := range commands {
		for _, h := range []string{"-h", "--help"} {
			cases[name+" "+h] = want{0, "usage: sessionlocks " + name, ""}
		}
	}
	for args, w := range cases {
		t.Run(args, func(t *testing.T) {
			stdout, stderr, code := runBin(t, bin, "", strings.Fields(args)...)
			if code != w.code {
				t.Errorf("exit %d, want %d", code, w.code)
			}
			if first, _, _ := strings.Cut(stdout, "\n"); !strings.HasPrefix(first, w.stdout) || (w.stdout == "") != (len(stdout) == 0) {
				t.Errorf("stdout begins %q, want %q", first, w.stdout)
			}
			if (w.stderr == "") != (len(stderr) == 0) || !strings.Contains(stderr, w.stderr) {
				t.Errorf("stderr %q, want it to say %q", stderr, w.stderr)
			}
		})
	}
}
