package repl

import (
	"sort"
	"strings"
)

// complete is liner's word completer: method names first, then parameter
// names (key=) and session ids, all from what the server said.
func (r *repl) complete(line string, pos int) (head string, completions []string, tail string) {
	before, tail := line[:pos], line[pos:]
	start := strings.LastIndexAny(before, " \t") + 1
	head, word := before[:start], before[start:]
	fields := strings.Fields(head)
	if len(fields) == 0 {
		var names []string
		if strings.HasPrefix(word, ".") {
			for _, c := range dotCommands {
				names = append(names, c.name)
			}
		} else {
			names = r.cat.names()
		}
		return head, withPrefix(names, word, ""), tail
	}
	first := fields[0]
	switch first {
	case ".help", ".h", ".?":
		return head, withPrefix(r.cat.names(), word, ""), tail
	case ".trace", ".notifications":
		return head, withPrefix([]string{"on", "off"}, word, ""), tail
	}
	m := r.cat.method(first)
	if m == nil {
		return head, nil, tail
	}
	if key, value, ok := strings.Cut(word, "="); ok {
		if !isSessionParam(key) {
			return head, nil, tail
		}
		// ids=a,b,<Tab>: complete the last element.
		done := ""
		if i := strings.LastIndex(value, ","); i >= 0 {
			done, value = value[:i+1], value[i+1:]
		}
		return head, withPrefix(r.knownIDs(), value, key+"="+done), tail
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
	if pos := m.positional(); pos != nil && isSessionParam(pos.Name) && !used[pos.Name] && len(fields) == 1 {
		out = append(out, withPrefix(r.knownIDs(), word, "")...)
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
	sort.Strings(out)
	return out
}
