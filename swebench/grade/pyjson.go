package grade

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The official reports are written with Python's json.dumps(obj, indent=4):
// separators "," and ": ", four-space indentation, empty containers as
// [] and {}, and ensure_ascii, which escapes every character outside
// printable ASCII as \uXXXX (lowercase hex, UTF-16 surrogate pairs). Go's
// encoding/json differs on all of the escaping (it keeps UTF-8 and escapes
// <, > and &), so reports are written by this small ordered writer.

// pyValue is a JSON value written by pyWriter.
type pyValue interface{ writePy(w *pyWriter, depth int) }

type (
	pyString string
	pyBool   bool
	pyInt    int
	pyList   []string
	// pyObject keeps its keys in insertion order, like a Python dict.
	pyObject []pyMember
	// pyObjects is a list of objects.
	pyObjects []pyObject
)

type pyMember struct {
	key   string
	value pyValue
}

func (o *pyObject) add(key string, v pyValue) { *o = append(*o, pyMember{key, v}) }

type pyWriter struct{ strings.Builder }

// pyDumps is json.dumps(v, indent=4).
func pyDumps(v pyValue) []byte {
	var w pyWriter
	v.writePy(&w, 0)
	return []byte(w.String())
}

func (w *pyWriter) newline(depth int) {
	w.WriteByte('\n')
	w.WriteString(strings.Repeat("    ", depth))
}

func (s pyString) writePy(w *pyWriter, _ int) { w.writeString(string(s)) }

func (b pyBool) writePy(w *pyWriter, _ int) {
	if b {
		w.WriteString("true")
	} else {
		w.WriteString("false")
	}
}

func (n pyInt) writePy(w *pyWriter, _ int) { w.WriteString(strconv.Itoa(int(n))) }

func (l pyList) writePy(w *pyWriter, depth int) {
	w.container('[', ']', len(l), depth, func(i int) { w.writeString(l[i]) })
}

func (l pyObjects) writePy(w *pyWriter, depth int) {
	w.container('[', ']', len(l), depth, func(i int) { l[i].writePy(w, depth+1) })
}

func (o pyObject) writePy(w *pyWriter, depth int) {
	w.container('{', '}', len(o), depth, func(i int) {
		w.writeString(o[i].key)
		w.WriteString(": ")
		o[i].value.writePy(w, depth+1)
	})
}

// container writes n items between open and close, one per line, indented
// one level deeper than depth; empty containers stay on one line.
func (w *pyWriter) container(open, close byte, n, depth int, item func(i int)) {
	w.WriteByte(open)
	for i := range n {
		if i > 0 {
			w.WriteByte(',')
		}
		w.newline(depth + 1)
		item(i)
	}
	if n > 0 {
		w.newline(depth)
	}
	w.WriteByte(close)
}

const hexDigits = "0123456789abcdef"

// writeString is Python's ensure_ascii string encoding. Invalid UTF-8
// (which a Python str cannot hold) is written as U+FFFD.
func (w *pyWriter) writeString(s string) {
	w.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			w.WriteString(`\"`)
		case r == '\\':
			w.WriteString(`\\`)
		case r == '\n':
			w.WriteString(`\n`)
		case r == '\r':
			w.WriteString(`\r`)
		case r == '\t':
			w.WriteString(`\t`)
		case r == '\b':
			w.WriteString(`\b`)
		case r == '\f':
			w.WriteString(`\f`)
		case r >= 0x20 && r < 0x7f:
			w.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			w.writeU(0xd800 + (r>>10)&0x3ff)
			w.writeU(0xdc00 + r&0x3ff)
		default:
			w.writeU(r)
		}
	}
	w.WriteByte('"')
}

func (w *pyWriter) writeU(r rune) {
	w.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		w.WriteByte(hexDigits[(r>>shift)&0xf])
	}
}

// PyQuote is json.dumps(s) for one string: Python's quoting, with every
// character outside printable ASCII escaped.
func PyQuote(s string) string {
	var w pyWriter
	w.writeString(s)
	return w.String()
}
