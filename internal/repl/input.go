package repl

// Reading what the person types: liner at a terminal (line editing, Tab
// completion from the schema and the ids seen, history), plain lines from
// a script; a request typed over several lines is joined until its JSON
// braces balance.

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/peterh/liner"
)

// reader delivers input lines, joined while JSON braces stay open. The
// caller sends on next when it wants the following line, so that the prompt
// never shows while a call's output is being printed.
func (r *repl) reader() (<-chan string, chan<- struct{}) {
	lines, next := make(chan string), make(chan struct{})
	sc := bufio.NewScanner(r.o.In)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	read := func(bool) (string, error) {
		if !sc.Scan() {
			return "", io.EOF
		}
		return sc.Text(), nil
	}
	if r.o.Interactive {
		r.line = liner.NewLiner()
		r.line.SetCtrlCAborts(true)
		r.line.SetTabCompletionStyle(liner.TabPrints)
		r.line.SetWordCompleter(r.complete)
		if f, err := os.Open(r.o.HistoryFile); err == nil {
			r.line.ReadHistory(f)
			f.Close()
		}
		read = r.terminalLine
	}
	go func() {
		defer close(lines)
		var pending []string // lines of an input whose braces are open
		for {
			l, err := read(len(pending) > 0)
			switch {
			case errors.Is(err, liner.ErrPromptAborted): // Ctrl-C drops the line
				pending = nil
				continue
			case err != nil: // the end of the script, or Ctrl-D
				if len(pending) > 0 {
					r.echo(pending)
					r.fail("error: input ended inside JSON: unbalanced { or [")
				}
				return
			case len(pending) == 0 && (strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#")):
				continue // blank lines and # comments between inputs
			}
			pending = append(pending, l)
			text := strings.Join(pending, "\n")
			if _, depth, _ := split(text); depth > 0 {
				continue
			}
			if r.line != nil {
				r.line.AppendHistory(strings.Join(strings.Fields(text), " "))
			} else {
				r.echo(pending)
			}
			pending = nil
			lines <- text
			<-next
		}
	}()
	return lines, next
}

// echo shows an input read from a script after the prompt, as if typed.
func (r *repl) echo(lines []string) {
	for i, l := range lines {
		r.out.print(r.out.line("", promptFor(i > 0)+l))
	}
}

// promptFor is the prompt for a line, or for one more of an input whose
// JSON braces are still open.
func promptFor(more bool) string { return map[bool]string{false: prompt, true: continuePrompt}[more] }

func (r *repl) terminalLine(more bool) (string, error) {
	r.out.setPrompting(true)
	l, err := r.line.Prompt(promptFor(more))
	r.out.setPrompting(false)
	if errors.Is(err, io.EOF) {
		r.out.print("\n")
	}
	return l, err
}

func (r *repl) closeLine() {
	if r.line == nil {
		return
	}
	defer r.line.Close()
	if r.o.HistoryFile == "" {
		return
	}
	os.MkdirAll(filepath.Dir(r.o.HistoryFile), 0o700) // the error is OpenFile's to say
	f, err := os.OpenFile(r.o.HistoryFile, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		warn(r.o.Err, "sessionlocks repl: history:", err)
		return
	}
	defer f.Close()
	r.line.WriteHistory(f)
}

// complete is liner's word completer: method names first, then parameter
// names (key=) and session ids, all from what the server said.
func (r *repl) complete(line string, pos int) (head string, completions []string, tail string) {
	before, tail := line[:pos], line[pos:]
	start := strings.LastIndexAny(before, " \t") + 1
	head, word := before[:start], before[start:]
	fields := strings.Fields(head)
	if len(fields) == 0 {
		names := r.cat.names()
		if strings.HasPrefix(word, ".") {
			names = nil
			for _, c := range commands {
				names = append(names, c.name)
			}
		}
		return head, withPrefix(names, word, ""), tail
	}
	switch fields[0] {
	case ".help", ".h", ".?":
		return head, withPrefix(r.cat.names(), word, ""), tail
	case ".trace", ".notifications":
		return head, withPrefix([]string{"on", "off"}, word, ""), tail
	}
	m := r.cat.method(fields[0])
	if m == nil {
		return head, nil, tail
	}
	if key, value, ok := strings.Cut(word, "="); ok {
		if !isSessionParam(key) {
			return head, nil, tail
		}
		// ids=a,b,<Tab>: complete the last element.
		i := strings.LastIndex(value, ",") + 1
		return head, withPrefix(r.answers.knownIDs(), value[i:], key+"="+value[:i]), tail
	}
	used := map[string]bool{}
	for _, f := range fields[1:] {
		if k, _, ok := strings.Cut(f, "="); ok {
			used[k] = true
		}
	}
	var params []string
	for _, p := range m.Params {
		if !used[p.Name] {
			params = append(params, p.Name+"=")
		}
	}
	out := withPrefix(params, word, "")
	if p := m.positional(); p != nil && isSessionParam(p.Name) && !used[p.Name] && len(fields) == 1 {
		out = append(out, withPrefix(r.answers.knownIDs(), word, "")...)
	}
	return head, out, tail
}

func withPrefix(candidates []string, prefix, add string) []string {
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(c, prefix) {
			out = append(out, add+c)
		}
	}
	slices.Sort(out)
	return out
}
