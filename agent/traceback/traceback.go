package traceback

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Exception is a Python exception read from a traceback.
type Exception struct {
	// Type is the exception's name as Python printed it, e.g. "ValueError"
	// or "json.decoder.JSONDecodeError".
	Type string
	// Message is the text after "Type: " (with any further lines).
	Message string
	// Traceback is the last traceback: from its header (or, for a syntax
	// error in the program itself, its location line) to the exception.
	Traceback string
	// Frames are the traceback's frames, innermost last.
	Frames []Frame
}

// Frame is one entry of a traceback.
type Frame struct {
	File string
	Line int
	Func string // empty for the location of a syntax error
	Code string // the source line, when Python printed it
}

// UserFrame returns the innermost frame outside the standard library
// (/usr/lib/python*, /usr/local/lib/python*, frozen modules), installed
// packages (site-packages, dist-packages) and the directories in skip (the
// harness's own, say): where the submitted code went wrong.
func (e *Exception) UserFrame(skip ...string) (Frame, bool) {
	if e == nil {
		return Frame{}, false
	}
	for i := len(e.Frames) - 1; i >= 0; i-- {
		f := e.Frames[i]
		if !libraryFile(f.File, skip) {
			return f, true
		}
	}
	return Frame{}, false
}

func libraryFile(p string, skip []string) bool {
	if strings.HasPrefix(p, "/usr/lib/python") || strings.HasPrefix(p, "/usr/local/lib/python") ||
		strings.Contains(p, "/site-packages/") || strings.Contains(p, "/dist-packages/") ||
		strings.HasPrefix(p, "<frozen ") {
		return true
	}
	for _, d := range skip {
		if strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

var (
	frameRe = regexp.MustCompile(`^\s*File "(.*)", line (\d+)(?:, in (.*))?$`)
	excRe   = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?::(?: (.*))?)?$`)
	groupRe = regexp.MustCompile(`^\s*[|+](?: |-|$)`)
)

const (
	tracebackHeader = "Traceback (most recent call last):"
	maxMessage      = 4000
	maxMessageLines = 20
	maxTraceback    = 16 << 10
)

// Parse returns the last Python exception in stderr, or nil when stderr
// holds none. It reads the standard traceback format, chained
// exceptions (the last one wins), exception groups (the group's own line)
// and syntax errors reported without a traceback.
func Parse(stderr string) *Exception {
	lines := strings.Split(strings.ReplaceAll(stderr, "\r\n", "\n"), "\n")
	head := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasSuffix(strings.TrimRight(lines[i], " "), tracebackHeader) {
			head = i
			break
		}
	}
	if head >= 0 {
		body := lines[head+1:]
		if strings.Contains(lines[head], "Exception Group") {
			body = ungroup(body)
		}
		return parseBody(lines[head:head+1], body, false)
	}
	// A syntax error in the program itself has no header: its location
	// line, the source, a caret line, then the exception.
	for i := len(lines) - 1; i >= 0; i-- {
		if m := frameRe.FindStringSubmatch(lines[i]); m != nil && m[3] == "" {
			if e := parseBody(nil, lines[i:], true); e != nil {
				return e
			}
			return nil
		}
	}
	return nil
}

// ungroup strips the "  | " gutter of an exception group's lines and stops
// at its first separator ("+-+---- 1 ----").
func ungroup(body []string) []string {
	out := make([]string, 0, len(body))
	for _, l := range body {
		t := strings.TrimLeft(l, " ")
		if strings.HasPrefix(t, "+-") {
			break
		}
		if groupRe.MatchString(l) {
			l = l[strings.IndexAny(l, "|+")+1:]
			l = strings.TrimPrefix(l, " ")
		}
		out = append(out, l)
	}
	return out
}

// parseBody reads frames, then the exception line, from body. syntaxOnly
// accepts only exception names that end in "Error" (for the header-less
// form, where a stray match would be a guess).
func parseBody(header, body []string, syntaxOnly bool) *Exception {
	e := &Exception{}
	i := 0
	for ; i < len(body); i++ {
		l := body[i]
		if m := frameRe.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[2])
			e.Frames = append(e.Frames, Frame{File: m[1], Line: n, Func: m[3]})
			continue
		}
		if l == "" || l[0] == ' ' || l[0] == '\t' {
			t := strings.TrimSpace(l)
			if t != "" && len(e.Frames) > 0 && e.Frames[len(e.Frames)-1].Code == "" && !caretLine(t) && !strings.HasPrefix(t, "[Previous line repeated") {
				e.Frames[len(e.Frames)-1].Code = t
			}
			continue
		}
		break
	}
	if i >= len(body) {
		return nil
	}
	m := excRe.FindStringSubmatch(body[i])
	if m == nil || syntaxOnly && !strings.HasSuffix(m[1], "Error") {
		return nil
	}
	e.Type = m[1]
	// A multi-line message continues past the exception line, but output
	// printed after a traceback looks the same. The rest of stderr counts
	// as the message only when it is short and has no blank line.
	msg := []string{m[2]}
	rest := body[i+1:]
	for len(rest) > 0 && strings.TrimSpace(rest[len(rest)-1]) == "" {
		rest = rest[:len(rest)-1]
	}
	if len(rest) <= maxMessageLines && !slices.ContainsFunc(rest, func(l string) bool { return strings.TrimSpace(l) == "" }) {
		msg = append(msg, rest...)
	}
	e.Message = capString(strings.TrimRight(strings.Join(msg, "\n"), "\n \t"), maxMessage)
	tb := append(append([]string{}, header...), body[:i+1]...)
	e.Traceback = capString(strings.Join(tb, "\n"), maxTraceback)
	return e
}

func caretLine(t string) bool {
	return strings.Trim(t, "^~ ") == ""
}

// capString cuts s to at most n bytes, keeping the start and the end.
func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	half := n/2 - 8
	return s[:half] + "\n[... cut ...]\n" + s[len(s)-half:]
}
