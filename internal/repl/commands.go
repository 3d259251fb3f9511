package repl

// The REPL's own commands: .help, .trace, .notifications, .wait, .clear and
// .quit (clear, help, quit and exit also without the dot, as a shell takes
// them: no method has those names).

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

var commands = []struct{ name, args, help string }{
	{".help", "[method]", "list methods, or show one method's params and result"},
	{".trace", "on|off", "show the raw frames on the wire, both ways"},
	{".notifications", "on|off", "show notifications (sessionsChanged) as they arrive"},
	{".wait", "[5s]", "wait for a notification, if none came since the last call (for scripts)"},
	{".clear", "", "clear the screen (so does clear)"},
	{".quit", "", "leave (so does Ctrl-D)"},
}

// command runs text if it is one of the REPL's commands, and says whether
// it was, and whether the REPL should quit.
func (r *repl) command(text string) (done, quit bool) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return false, false
	}
	switch name, args := fields[0], fields[1:]; name {
	case ".quit", ".exit", ".q", "quit", "exit":
		return true, true
	case ".help", ".h", ".?", "help":
		r.help(args)
	case ".trace":
		r.toggle("trace", &r.trace, args)
	case ".notifications":
		r.toggle("notifications", &r.notes, args)
	case ".wait":
		r.wait(args)
	case ".clear", "clear":
		if r.o.Interactive {
			r.out.print("\x1b[H\x1b[2J")
		}
	default:
		if !strings.HasPrefix(name, ".") {
			return false, false
		}
		r.fail("error: unknown command " + name + "; try .help")
	}
	return true, false
}

func (r *repl) help(args []string) {
	if len(args) == 0 {
		r.out.print(r.generalHelp())
		return
	}
	if m := r.cat.method(args[0]); m != nil {
		r.out.print(r.cat.help(m))
		return
	}
	r.fail(fmt.Sprintf("error: no method %q; methods: %s", args[0], strings.Join(r.cat.names(), ", ")))
}

func (r *repl) toggle(name string, flag *atomic.Bool, args []string) {
	switch {
	case len(args) == 1 && (args[0] == "on" || args[0] == "off"):
		flag.Store(args[0] == "on")
	case len(args) != 0:
		r.fail("error: usage: ." + name + " on|off")
		return
	}
	r.out.print(name + " " + map[bool]string{true: "on", false: "off"}[flag.Load()] + "\n")
}

// wait returns once a notification has arrived since the last request was
// sent, or after a while, saying so.
func (r *repl) wait(args []string) {
	d := 5 * time.Second
	if len(args) > 0 {
		var err error
		if d, err = time.ParseDuration(args[0]); err != nil || d <= 0 {
			r.fail("error: usage: .wait [duration], e.g. .wait 2s")
			return
		}
	}
	select {
	case <-r.notified:
	case <-time.After(d):
		r.out.print(r.out.line(sgrDim, fmt.Sprintf("(no notification within %s)", d)))
	}
}

func (r *repl) generalHelp() string {
	var b strings.Builder
	var methods, notes [][3]string
	for _, m := range r.cat.Methods {
		summary, _, _ := strings.Cut(m.Summary+"\n", "\n")
		row := [3]string{m.signature(), "", summary}
		if m.Notification {
			notes = append(notes, row)
		} else {
			methods = append(methods, row)
		}
	}
	fmt.Fprintln(&b, "methods:")
	writeRows(&b, methods)
	fmt.Fprintln(&b, "notifications:")
	writeRows(&b, notes)
	fmt.Fprint(&b, `input:
  method                      call with no params
  method {json}               params exactly as typed (may span lines until braces balance)
  method key=value ...        values are JSON where the param is not a string; ids=a,b is an array
  method ARG                  ARG fills the method's first required param (canResume 5e55)
  a session id may be a unique prefix of one, as sessionlocks list prints them
  $token, $last as a value    the last token an answer gave, the last answer ($last.sessionId: a member of it)
                              (forceResume 5e55 terminate=true expect=$token acts only on what canResume showed)
commands:
`)
	var rows [][3]string
	for _, c := range commands {
		rows = append(rows, [3]string{strings.TrimSpace(c.name + " " + c.args), "", c.help})
	}
	writeRows(&b, rows)
	return b.String()
}
