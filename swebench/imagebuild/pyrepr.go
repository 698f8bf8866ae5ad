package imagebuild

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Upstream's image keys are sha256 prefixes of Python's str() of a list of
// strings and of a dict; these helpers write that text.

// pyDict is a Python dict literal in insertion order.
type pyDict []pyItem

type pyItem struct {
	key   string
	value any
}

// lookup is d[key] and whether the key is present.
func (d pyDict) lookup(key string) (any, bool) {
	for _, it := range d {
		if it.key == key {
			return it.value, true
		}
	}
	return nil, false
}

// merged is {**d, **over}: the keys of d in order with values replaced by
// over's, then over's other keys.
func (d pyDict) merged(over pyDict) pyDict {
	out := append(pyDict(nil), d...)
	for _, it := range over {
		replaced := false
		for i := range out {
			if out[i].key == it.key {
				out[i].value, replaced = it.value, true
				break
			}
		}
		if !replaced {
			out = append(out, it)
		}
	}
	return out
}

// pyRepr is Python's repr() of a str, int, list or dict value.
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		writeStrRepr(b, v)
	case int:
		b.WriteString(strconv.Itoa(v))
	case bool:
		if v {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case []string:
		b.WriteByte('[')
		for i, s := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writeStrRepr(b, s)
		}
		b.WriteByte(']')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, x)
		}
		b.WriteByte(']')
	case pyDict:
		b.WriteByte('{')
		for i, it := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writeStrRepr(b, it.key)
			b.WriteString(": ")
			writeRepr(b, it.value)
		}
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("imagebuild: no Python repr for %T", v))
	}
}

// writeStrRepr is Python 3's repr of a str: single quotes unless the text
// holds a single quote and no double quote; backslash, the quote, \t, \n
// and \r escaped; other characters that str.isprintable rejects as \xhh,
// \uhhhh or \Uhhhhhhhh.
func writeStrRepr(b *strings.Builder, s string) {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	b.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == quote || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case unicode.IsPrint(r):
			// Go's IsPrint and Python's isprintable agree: letters,
			// marks, numbers, punctuation and symbols.
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	}
	b.WriteRune(quote)
}

// pyStr is Python's str() of a format argument.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyFormat is Python's str.format with keyword arguments only, as the
// Dockerfile templates use it: "{name}" is replaced, "{{" and "}}" are
// literal braces, and a missing name is an error (Python's KeyError).
func pyFormat(tmpl string, kwargs pyDict) (string, error) {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		switch {
		case c == '{' && i+1 < len(tmpl) && tmpl[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(tmpl) && tmpl[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(tmpl[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("template: unmatched '{' at byte %d", i)
			}
			name := tmpl[i+1 : i+end]
			v, ok := kwargs.lookup(name)
			if !ok {
				return "", fmt.Errorf("template: no value for {%s}", name)
			}
			b.WriteString(pyStr(v))
			i += end
		case c == '}':
			return "", fmt.Errorf("template: single '}' at byte %d", i)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
