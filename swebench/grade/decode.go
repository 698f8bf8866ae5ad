package grade

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/swebox/swebox/swebench/harness"
)

// ErrInvalidUTF8 is test output that is not valid UTF-8 under v4 rules:
// v4.1.0 decodes strictly and the instance errors (#635).
var ErrInvalidUTF8 = errors.New("test output is not valid UTF-8")

// DecodeOutput turns the raw bytes of a test run into the text the official
// harness writes to test_output.txt. Under v4 invalid UTF-8 is an error;
// under v5 each maximal invalid subsequence becomes U+FFFD, as Python's
// decode(errors="replace") does.
func DecodeOutput(raw []byte, rules harness.Rules) (string, error) {
	if utf8.Valid(raw) {
		return string(raw), nil
	}
	if rules.OrDefault() == harness.V4 {
		return "", ErrInvalidUTF8
	}
	var b strings.Builder
	b.Grow(len(raw) + 16)
	for len(raw) > 0 {
		r, size := utf8.DecodeRune(raw)
		if r != utf8.RuneError || size > 1 {
			b.Write(raw[:size])
			raw = raw[size:]
			continue
		}
		b.WriteRune(utf8.RuneError)
		raw = raw[maximalSubpart(raw):]
	}
	return b.String(), nil
}

// maximalSubpart is the length of the longest prefix of b (at least 1) that
// starts a well-formed UTF-8 sequence without completing it: the bytes one
// U+FFFD replaces (Unicode's "maximal subpart" practice, which CPython
// follows).
func maximalSubpart(b []byte) int {
	lead := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xbf)
	switch {
	case lead >= 0xc2 && lead <= 0xdf:
		need = 1
	case lead == 0xe0:
		need, lo = 2, 0xa0
	case lead >= 0xe1 && lead <= 0xec, lead == 0xee, lead == 0xef:
		need = 2
	case lead == 0xed:
		need, hi = 2, 0x9f
	case lead == 0xf0:
		need, lo = 3, 0x90
	case lead >= 0xf1 && lead <= 0xf3:
		need = 3
	case lead == 0xf4:
		need, hi = 3, 0x8f
	default:
		return 1
	}
	n := 1
	for i := 1; i <= need && i < len(b); i++ {
		if b[i] < lo || b[i] > hi {
			break
		}
		n++
		lo, hi = 0x80, 0xbf
	}
	return n
}
