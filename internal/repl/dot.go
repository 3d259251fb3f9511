package repl

import (
	"fmt"
	"strings"
	"time"
)

// dotCommands are the REPL's own commands, with their one-line help.
var dotCommands = []struct{ name, args, help string }{
	{".help", "[method]", "list methods, or show one method's params and result"},
	{".trace", "on|off", "show the raw frames on the wire, both ways"},
	{".notifications", "on|off", "show notifications (sessionsChanged) as they arrive"},
	{".wait", "[5s]", "wait for a notification, if none came since the last call (for scripts)"},
	{".quit", "", "leave (so does Ctrl-D)"},
}

func (r *repl) dot(text string) (quit bool) {
	fields := strings.Fields(text)
	name, args := fields[0], fields[1:]
	errorf := func(format string, a ...any) {
		r.fail("error: " + fmt.Sprintf(format, a...))
	}
	switch name {
	case ".quit", ".exit", ".q":
		return true
	case ".help", ".h", ".?":
		if len(args) == 0 {
			r.out.print(r.generalHelp())
			return false
		}
		m := r.cat.method(args[0])
		if m == nil {
			if r.cat == nil {
				errorf("the server did not describe its methods (rpc.discover failed)")
			} else {
				errorf("no method %q; methods: %s", args[0], strings.Join(r.cat.names(), ", "))
			}
			return false
		}
		r.out.print(r.cat.help(m))
	case ".trace", ".notifications":
		flag := &r.trace
		if name == ".notifications" {
			flag = &r.notes
		}
		if len(args) == 1 && (args[0] == "on" || args[0] == "off") {
			flag.Store(args[0] == "on")
		} else if len(args) != 0 {
			errorf("usage: %s on|off", name)
			return false
		}
		state := "off"
		if flag.Load() {
			state = "on"
		}
		r.out.printf("%s %s\n", strings.TrimPrefix(name, "."), state)
	case ".wait":
		d := 5 * time.Second
		if len(args) > 0 {
			var err error
			if d, err = time.ParseDuration(args[0]); err != nil || d <= 0 {
				errorf("usage: .wait [duration], e.g. .wait 2s")
				return false
			}
		}
		r.wait(d)
	default:
		errorf("unknown command %s; try .help", name)
	}
	return false
}

func (r *repl) generalHelp() string {
	var b strings.Builder
	if r.cat != nil {
		var methods, notes [][3]string
		for _, m := range r.cat.doc.Methods {
			row := [3]string{m.signature(), "", firstLine(firstNonEmpty(m.Summary, m.Description))}
			if m.notification() != "" {
				notes = append(notes, row)
			} else {
				methods = append(methods, row)
			}
		}
		fmt.Fprintln(&b, "methods:")
		writeRows(&b, methods)
		if len(notes) > 0 {
			fmt.Fprintln(&b, "notifications:")
			writeRows(&b, notes)
		}
	}
	fmt.Fprint(&b, `input:
  method                      call with no params
  method {json}               params exactly as typed (may span lines until braces balance)
  method key=value ...        values are JSON where the param is not a string; ids=a,b is an array
  method ARG                  ARG fills the method's first required param (canResume 5e55)
  a session id may be a unique prefix of one, as sessionlocks list prints them
commands:
`)
	var rows [][3]string
	for _, c := range dotCommands {
		rows = append(rows, [3]string{strings.TrimSpace(c.name + " " + c.args), "", c.help})
	}
	writeRows(&b, rows)
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
