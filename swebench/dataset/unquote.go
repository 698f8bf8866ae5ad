package dataset

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonString decodes a JSON string literal. Records are validated once as
// a whole; decoding each member again with json.Unmarshal would scan
// megabyte patches twice more, so the common escapes are decoded here and
// anything unusual falls back to json.Unmarshal.
func jsonString(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && bytes.IndexByte(body, '"') < 0 && utf8.Valid(body) && !hasControl(body) {
		return string(body), nil
	}
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			if i+1 >= len(body) {
				return slowString(raw)
			}
			switch body[i+1] {
			case '"', '\\', '/':
				b.WriteByte(body[i+1])
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, n := hex4(body[i+2:])
				if n < 0 {
					return slowString(raw)
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, n2 := rune(-1), -1
					if i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
						r2, n2 = hex4(body[i+2:])
					}
					if dec := utf16.DecodeRune(r, r2); n2 >= 0 && dec != utf8.RuneError {
						b.WriteRune(dec)
						i += 6
					} else {
						b.WriteRune(utf8.RuneError)
					}
				} else {
					b.WriteRune(r)
				}
				continue
			default:
				return slowString(raw)
			}
			i += 2
		case c == '"' || c < 0x20:
			return slowString(raw)
		case c < utf8.RuneSelf:
			// Copy the run of plain ASCII up to the next special byte.
			j := i + 1
			for j < len(body) && body[j] >= 0x20 && body[j] < utf8.RuneSelf && body[j] != '\\' && body[j] != '"' {
				j++
			}
			b.Write(body[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				return slowString(raw)
			}
			b.Write(body[i : i+size])
			i += size
		}
	}
	return b.String(), nil
}

func slowString(raw []byte) (string, error) {
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

func hex4(b []byte) (rune, int) {
	if len(b) < 4 {
		return 0, -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, -1
		}
		r = r*16 + rune(c)
	}
	return r, 4
}

// loneSurrogate finds the first \uXXXX escape of the JSON string literal
// raw that is half of a UTF-16 surrogate pair without its other half, and
// returns it and its byte offset in raw.
func loneSurrogate(raw []byte) (esc string, off int, ok bool) {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // an escaped character, maybe a backslash
			continue
		}
		r, n := hex4(raw[i+2:])
		if n < 0 || !utf16.IsSurrogate(r) {
			i += 5
			continue
		}
		if r < 0xDC00 && i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
			if r2, n2 := hex4(raw[i+8:]); n2 >= 0 && r2 >= 0xDC00 && r2 <= 0xDFFF {
				i += 11 // a high surrogate followed by a low one: a pair
				continue
			}
		}
		return string(raw[i : i+6]), i, true
	}
	return "", 0, false
}
