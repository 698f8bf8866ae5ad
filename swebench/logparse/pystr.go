package logparse

import (
	"strings"
	"unicode"
)

// The official parsers are Python. These helpers reproduce the Python str
// and re behaviour they rely on, where Go's differs.

// pySpaceClass is the body of a regexp character class matching exactly
// what Python's str.isspace() and re's \s match: Go's unicode.IsSpace plus
// the separators U+001C..U+001F.
const pySpaceClass = `\t-\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`

// Regexp fragments for Python's \s, \S, \d and \w on str patterns.
const (
	reSpace    = `[` + pySpaceClass + `]`
	reNonSpace = `[^` + pySpaceClass + `]`
	reDigit    = `\p{Nd}`
	reWord     = `[\p{L}\p{N}_]`
)

// isSpace is Python's str.isspace for one rune.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// fields is Python's str.split() without arguments.
func fields(s string) []string { return strings.FieldsFunc(s, isSpace) }

// strip is Python's str.strip() without arguments.
func strip(s string) string { return strings.TrimFunc(s, isSpace) }

// lstrip is Python's str.lstrip() without arguments.
func lstrip(s string) string { return strings.TrimLeftFunc(s, isSpace) }

// before is s.split(sep)[0] in Python: the text before the first sep.
func before(s, sep string) string {
	if i := strings.Index(s, sep); i >= 0 {
		return s[:i]
	}
	return s
}

// lines is Python's log.split("\n").
func lines(log string) []string { return strings.Split(log, "\n") }
