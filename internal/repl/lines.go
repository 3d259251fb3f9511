package repl

// Reading what the person types: the line reader (liner on a terminal, plain
// lines otherwise), joining a request typed over several lines, and history.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
)

// reader delivers input lines, joined while JSON braces stay open. The
// caller sends on next when it wants the following line, so that the prompt
// never shows while a call's output is being printed.
func (r *repl) reader() (<-chan string, chan<- struct{}) {
	lines := make(chan string)
	next := make(chan struct{})
	if !r.o.Interactive {
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(r.o.In)
			sc.Buffer(make([]byte, 64*1024), 16<<20)
			var j joiner
			for sc.Scan() {
				text, ok := j.add(sc.Text())
				if !ok {
					continue
				}
				r.out.print(prompt + strings.ReplaceAll(text, "\n", "\n"+continuePrompt) + "\n")
				lines <- text
				<-next
			}
			if j.open() {
				r.out.print(prompt + strings.Join(j.pending, "\n") + "\n")
				r.fail("error: input ended inside JSON: unbalanced { or [")
			}
		}()
		return lines, next
	}
	r.line = liner.NewLiner()
	r.line.SetCtrlCAborts(true)
	r.line.SetTabCompletionStyle(liner.TabPrints)
	r.line.SetWordCompleter(r.complete)
	r.loadHistory()
	go func() {
		defer close(lines)
		var j joiner
		for {
			p := prompt
			if j.open() {
				p = continuePrompt
			}
			r.out.setPrompting(true)
			l, err := r.line.Prompt(p)
			r.out.setPrompting(false)
			switch {
			case errors.Is(err, liner.ErrPromptAborted): // Ctrl-C drops the line
				j.pending = nil
				continue
			case err != nil: // io.EOF is Ctrl-D
				if errors.Is(err, io.EOF) {
					r.out.print("\n")
				}
				return
			}
			text, ok := j.add(l)
			if !ok {
				continue
			}
			r.line.AppendHistory(strings.Join(strings.Fields(text), " "))
			lines <- text
			<-next
		}
	}()
	return lines, next
}

// joiner gathers input lines until the JSON braces in them balance.
type joiner struct{ pending []string }

// add takes one line and returns the whole input once it is complete. Blank
// lines and # comments between inputs are dropped.
func (j *joiner) add(l string) (string, bool) {
	if t := strings.TrimSpace(l); !j.open() && (t == "" || strings.HasPrefix(t, "#")) {
		return "", false
	}
	j.pending = append(j.pending, l)
	text := strings.Join(j.pending, "\n")
	if depth(text) > 0 {
		return "", false
	}
	j.pending = nil
	return text, true
}

func (j *joiner) open() bool { return len(j.pending) > 0 }

func (r *repl) closeLine() {
	if r.line == nil {
		return
	}
	r.saveHistory()
	r.line.Close()
}

func (r *repl) loadHistory() {
	if r.o.HistoryFile == "" {
		return
	}
	if f, err := os.Open(r.o.HistoryFile); err == nil {
		r.line.ReadHistory(f)
		f.Close()
	}
}

func (r *repl) saveHistory() {
	if r.o.HistoryFile == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(r.o.HistoryFile), 0o700); err != nil {
		fmt.Fprintln(r.o.Err, "sessionlocks repl: history:", err)
		return
	}
	f, err := os.OpenFile(r.o.HistoryFile, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		fmt.Fprintln(r.o.Err, "sessionlocks repl: history:", err)
		return
	}
	defer f.Close()
	r.line.WriteHistory(f)
}
