package pytestparse

import (
	"bytes"
	"strconv"
)

// word is a status word at the start of a short test summary line.
type word uint8

const (
	wordNone word = iota
	wordPassed
	wordFailed
	wordError
	wordSkipped
	wordXFail
	wordXPass
	wordFail  // pytest 3: "FAIL id"
	wordSkip  // pytest before 5.4: "SKIP [1] path:line: reason"
	wordRerun // pytest-rerunfailures
)

func (w word) outcome() Outcome {
	switch w {
	case wordPassed:
		return Passed
	case wordFailed, wordFail:
		return Failed
	case wordError:
		return Error
	case wordSkipped, wordSkip:
		return Skipped
	case wordXFail:
		return XFailed
	case wordXPass:
		return XPassed
	}
	return 0
}

// summaryWord splits "WORD rest" for the words of a short test summary.
func summaryWord(b []byte) (word, []byte, bool) {
	i := bytes.IndexByte(b, ' ')
	if i < 4 || i > 7 {
		return wordNone, nil, false
	}
	var w word
	switch string(b[:i]) {
	case "PASSED":
		w = wordPassed
	case "FAILED":
		w = wordFailed
	case "ERROR":
		w = wordError
	case "SKIPPED":
		w = wordSkipped
	case "XFAIL":
		w = wordXFail
	case "XPASS":
		w = wordXPass
	case "FAIL":
		w = wordFail
	case "SKIP":
		w = wordSkip
	case "RERUN":
		w = wordRerun
	default:
		return wordNone, nil, false
	}
	return w, b[i+1:], true
}

// suffixWord finds a status word of a verbose line at the end of b. It
// returns the word's length (0 when there is none) and its outcome, which is
// zero for RERUN.
func suffixWord(b []byte) (Outcome, int) {
	n := len(b)
	if n < 5 {
		return 0, 0
	}
	switch b[n-1] {
	case 'D':
		switch {
		case bytes.HasSuffix(b, []byte("PASSED")):
			return Passed, 6
		case bytes.HasSuffix(b, []byte("FAILED")):
			return Failed, 6
		case bytes.HasSuffix(b, []byte("SKIPPED")):
			return Skipped, 7
		}
	case 'R':
		if bytes.HasSuffix(b, []byte("ERROR")) {
			return Error, 5
		}
	case 'L':
		if bytes.HasSuffix(b, []byte("XFAIL")) {
			return XFailed, 5
		}
	case 'l':
		// pytest 3 and 4 printed "xfail" in lower case on verbose lines.
		if bytes.HasSuffix(b, []byte("xfail")) {
			return XFailed, 5
		}
	case 'S':
		if bytes.HasSuffix(b, []byte("XPASS")) {
			return XPassed, 5
		}
	case 'N':
		if bytes.HasSuffix(b, []byte("RERUN")) {
			return 0, 5
		}
	}
	return 0, 0
}

// prefixWord is suffixWord at the start of b.
func prefixWord(b []byte) (Outcome, int) {
	if len(b) < 5 {
		return 0, 0
	}
	switch b[0] {
	case 'P':
		if bytes.HasPrefix(b, []byte("PASSED")) {
			return Passed, 6
		}
	case 'F':
		if bytes.HasPrefix(b, []byte("FAILED")) {
			return Failed, 6
		}
	case 'S':
		if bytes.HasPrefix(b, []byte("SKIPPED")) {
			return Skipped, 7
		}
	case 'E':
		if bytes.HasPrefix(b, []byte("ERROR")) {
			return Error, 5
		}
	case 'X':
		if bytes.HasPrefix(b, []byte("XFAIL")) {
			return XFailed, 5
		}
		if bytes.HasPrefix(b, []byte("XPASS")) {
			return XPassed, 5
		}
	case 'x':
		if bytes.HasPrefix(b, []byte("xfail")) {
			return XFailed, 5
		}
	case 'R':
		if bytes.HasPrefix(b, []byte("RERUN")) {
			return 0, 5
		}
	}
	return 0, 0
}

// bareStatus recognises a status alone on a line, "PASSED   [ 50%]" or
// "SKIPPED (reason)": what pytest -v -s prints after a test's output.
func bareStatus(b []byte) (Outcome, []byte, bool) {
	b = trimSpace(b)
	o, wl := prefixWord(b)
	if wl == 0 {
		return 0, nil, false
	}
	rest := b[wl:]
	if len(rest) == 0 {
		return o, nil, true
	}
	if rest[0] != ' ' {
		return 0, nil, false
	}
	rest = trimLeftSpace(rest)
	if rest[0] == '(' && (o == Skipped || o == XFailed || o == XPassed) {
		if i := progressStart(rest); i >= 0 {
			rest = trimRightSpace(rest[:i])
		}
		if len(rest) >= 2 && rest[len(rest)-1] == ')' {
			return o, rest[1 : len(rest)-1], true
		}
		return 0, nil, false
	}
	if isProgress(rest) {
		return o, nil, true
	}
	return 0, nil, false
}

// gluedStatus recognises a status word at the end of a line of output that
// did not end with a newline, "done.PASSED   [ 50%]". It insists on the
// progress indicator, and rejects lines that start with a node id: those are
// verbose lines printed by the test itself.
func gluedStatus(b []byte) (Outcome, bool) {
	body := trimRightSpace(b)
	if len(body) == 0 || body[len(body)-1] != ']' {
		return 0, false
	}
	i := progressStart(body)
	if i < 0 {
		return 0, false
	}
	body = trimRightSpace(body[:i])
	o, wl := suffixWord(body)
	if wl == 0 || o == 0 {
		return 0, false
	}
	if n := len(body); n > wl && body[n-wl-1] == ' ' {
		if _, _, ok := leadingID(body); ok {
			return 0, false
		}
	}
	return o, true
}

// progressStart returns where the progress indicator at the end of b starts
// ("[ 50%]" or, with console_output_style=count, "[ 3/54]"), or -1.
func progressStart(b []byte) int {
	i := bytes.LastIndexByte(b, '[')
	if i < 0 || (i > 0 && b[i-1] != ' ') || !isProgress(b[i:]) {
		return -1
	}
	return i
}

func isProgress(b []byte) bool {
	n := len(b)
	if n < 4 || b[0] != '[' || b[n-1] != ']' {
		return false
	}
	b = trimLeftSpace(b[1 : n-1])
	i := 0
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i == 0 || i == len(b) {
		return false
	}
	if b[i] == '%' {
		return i == len(b)-1
	}
	if b[i] != '/' {
		return false
	}
	j := i + 1
	for j < len(b) && isDigit(b[j]) {
		j++
	}
	return j > i+1 && j == len(b)
}

// wellFormed reports whether b has the shape of a pytest node id: a path,
// "::", names without spaces joined by "::", then optionally parameters in
// brackets that end the id. The parameters may hold anything.
func wellFormed(b []byte) bool { return scanShape(b).fits(b) }

// shape holds where the first "::" of a text is and where the names after it
// end, so that every prefix of the text can be checked in constant time.
type shape struct {
	colons  int // index of the first "::", or -1
	nameEnd int // index of the first space, tab or '[' after it, or len
}

func scanShape(b []byte) shape {
	i := bytes.Index(b, []byte("::"))
	if i < 0 {
		return shape{colons: -1}
	}
	j := i + 2
	for j < len(b) && b[j] != ' ' && b[j] != '\t' && b[j] != '[' {
		j++
	}
	return shape{colons: i, nameEnd: j}
}

// fits reports whether b, the text scanned or a prefix of it, is wellFormed.
func (s shape) fits(b []byte) bool {
	n := len(b)
	if s.colons <= 0 || n < s.colons+3 || b[0] == ' ' || b[0] == '\t' {
		return false
	}
	if s.nameEnd >= n {
		return b[n-1] != ':'
	}
	return b[s.nameEnd] == '[' && s.nameEnd > s.colons+2 && b[n-1] == ']'
}

// verboseID cleans the id part of a verbose line: it drops the
// " <- path/of/definition.py" pytest -vv adds for inherited tests, and
// checks the shape of what is left.
func verboseID(b []byte) ([]byte, bool) {
	b = stripArrow(trimRightSpace(b))
	return b, wellFormed(b)
}

func stripArrow(b []byte) []byte {
	if bytes.IndexByte(b, '<') < 0 {
		return b
	}
	k := bytes.LastIndex(b, []byte(" <- "))
	if k <= 0 {
		return b
	}
	tail := b[k+4:]
	if len(tail) == 0 || bytes.ContainsAny(tail, "[]") {
		return b
	}
	if bytes.IndexByte(tail, ' ') >= 0 && !bytes.HasSuffix(tail, []byte(".py")) {
		return b
	}
	if !wellFormed(b[:k]) {
		return b
	}
	return b[:k]
}

// leadingID splits "path::test[params] rest" where rest is output printed
// after the start of a test. The path may not hold spaces here, and the
// parameters end at the first "] ".
func leadingID(b []byte) (id, rest []byte, ok bool) {
	i := bytes.Index(b, []byte("::"))
	if i <= 0 || bytes.IndexByte(b[:i], ' ') >= 0 {
		return nil, nil, false
	}
	j := i + 2
	for j < len(b) && b[j] != ' ' && b[j] != '[' {
		j++
	}
	if j < len(b) && b[j] == '[' {
		k := bytes.Index(b[j:], []byte("] "))
		if k < 0 {
			return nil, nil, false
		}
		j += k + 1
	}
	if j >= len(b) || !wellFormed(b[:j]) {
		return nil, nil, false
	}
	return b[:j], b[j+1:], true
}

// splitID separates the node id from the message on a summary line,
// "path::test[a - b] - AssertionError: ...". The id may itself contain the
// separator, so every split is a candidate, chosen in this order:
//  1. the longest one that is a node id seen earlier in the log;
//  2. the leftmost one shaped like a node id (see wellFormed) whose message
//     starts like an exception ("ValueError: ...", "assert ...");
//  3. the leftmost one shaped like a node id;
//  4. the leftmost one.
func (p *Parser) splitID(rest []byte, sep string) (id, msg []byte) {
	var first, formed, excepted, known, firstMsg, formedMsg, exceptedMsg, knownMsg []byte
	haveFirst, haveFormed, haveExcepted, haveKnown := false, false, false, false
	lookups := 0
	sh := scanShape(rest)
	pos := 0
	for {
		k := bytes.Index(rest[pos:], []byte(sep))
		cand, m := rest, []byte(nil)
		if k >= 0 {
			cand, m = rest[:pos+k], rest[pos+k+len(sep):]
		}
		if len(cand) > 0 {
			formedCand := sh.fits(cand)
			if formedCand && !haveFormed {
				formed, formedMsg, haveFormed = cand, m, true
			}
			if formedCand && !haveExcepted && looksLikeException(m) {
				excepted, exceptedMsg, haveExcepted = cand, m, true
			}
			// A lookup hashes the whole candidate: bound them, so that a
			// line with many separators stays linear.
			if (formedCand || !haveFirst) && lookups < maxLookups {
				lookups++
				if _, ok := p.st.find(cand); ok {
					known, knownMsg, haveKnown = cand, m, true
				}
			}
			if !haveFirst {
				first, firstMsg, haveFirst = cand, m, true
			}
		}
		if k < 0 {
			break
		}
		pos += k + 1
	}
	switch {
	case haveKnown:
		return known, knownMsg
	case haveExcepted:
		return excepted, exceptedMsg
	case haveFormed:
		return formed, formedMsg
	case haveFirst:
		return first, firstMsg
	}
	return rest, nil
}

// maxLookups bounds the candidate ids looked up per line.
const maxLookups = 16

// looksLikeException reports whether a message starts the way pytest's
// crash messages do: "assert ...", or a dotted name and a colon
// ("AssertionError: ...", "django.db.utils.OperationalError: ...",
// "Failed: ...", "reason: ...").
func looksLikeException(m []byte) bool {
	if bytes.HasPrefix(m, []byte("assert")) || bytes.HasPrefix(m, []byte("[XPASS(strict)]")) {
		return true
	}
	i := 0
	for i < len(m) {
		c := m[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.' || (i > 0 && isDigit(c)) {
			i++
			continue
		}
		break
	}
	return i > 0 && i < len(m) && m[i] == ':'
}

// parseSkipGroup parses "[2] path:line: reason" after SKIPPED.
func parseSkipGroup(b []byte) (SkipGroup, bool) {
	j := bytes.IndexByte(b, ']')
	if j < 2 {
		return SkipGroup{}, false
	}
	n, err := strconv.Atoi(string(b[1:j]))
	if err != nil || n < 0 {
		return SkipGroup{}, false
	}
	after := trimLeftSpace(b[j+1:])
	g := SkipGroup{Count: n}
	if k := bytes.Index(after, []byte(": ")); k >= 0 {
		g.Location, g.Reason = string(after[:k]), string(after[k+2:])
	} else {
		g.Location = string(bytes.TrimSuffix(after, []byte(":")))
	}
	return g, true
}

// sepTitle recognises a separator line, "==== title ====" or a line of one
// repeated character, as pytest's write_sep prints them.
func sepTitle(b []byte) (byte, []byte, bool) {
	ch := b[0]
	i := 0
	for i < len(b) && b[i] == ch {
		i++
	}
	if i == len(b) {
		return ch, nil, i >= 3
	}
	if b[i] != ' ' {
		return 0, nil, false
	}
	j := len(b)
	for j > i && b[j-1] == ch {
		j--
	}
	if j == len(b) || j <= i+1 || b[j-1] != ' ' {
		return 0, nil, false
	}
	return ch, b[i+1 : j-1], true
}

type titleKindT uint8

const (
	titleOther titleKindT = iota
	titleSummary
	titleContent
)

func titleKind(title []byte) titleKindT {
	switch string(title) {
	case "short test summary info", "rerun test summary info":
		return titleSummary
	case "ERRORS", "FAILURES", "PASSES", "XFAILURES", "XPASSES":
		return titleContent
	}
	if bytes.HasPrefix(title, []byte("warnings summary")) || bytes.HasPrefix(title, []byte("slowest ")) ||
		bytes.HasPrefix(title, []byte("Captured ")) {
		return titleContent
	}
	return titleOther
}

func isInterruptTitle(title []byte) bool {
	for _, prefix := range []string{"Interrupted: ", "KeyboardInterrupt", "stopping after ", "_pytest.outcomes.Exit", "Exit: "} {
		if bytes.HasPrefix(title, []byte(prefix)) {
			return true
		}
	}
	return false
}

// parseClosing parses the text of pytest's closing line,
// "3 failed, 10 passed, 1 warning in 2.31s" or "no tests ran in 0.01s".
func parseClosing(b []byte) (Summary, bool) {
	b = trimSpace(b)
	i := bytes.LastIndex(b, []byte(" in "))
	if i <= 0 || !validDuration(b[i+4:]) {
		return Summary{}, false
	}
	s := Summary{Seen: true, Duration: string(b[i+4:])}
	counts := b[:i]
	if string(counts) == "no tests ran" {
		return s, true
	}
	for len(counts) > 0 {
		part := counts
		if k := bytes.Index(counts, []byte(", ")); k >= 0 {
			part, counts = counts[:k], counts[k+2:]
		} else {
			counts = nil
		}
		sp := bytes.IndexByte(part, ' ')
		if sp <= 0 {
			return Summary{}, false
		}
		n, err := strconv.Atoi(string(part[:sp]))
		noun := part[sp+1:]
		if err != nil || n < 0 || !isNoun(noun) {
			return Summary{}, false
		}
		switch string(noun) {
		case "passed":
			s.Passed += n
		case "failed":
			s.Failed += n
		case "error", "errors":
			s.Errors += n
		case "skipped":
			s.Skipped += n
		case "xfailed":
			s.XFailed += n
		case "xpassed":
			s.XPassed += n
		case "warning", "warnings", "pytest-warnings":
			s.Warnings += n
		case "deselected":
			s.Deselected += n
		case "rerun", "reruns":
			s.Rerun += n
		default:
			if s.Other == nil {
				s.Other = make(map[string]int)
			}
			s.Other[string(noun)] += n
		}
	}
	return s, true
}

func isNoun(b []byte) bool {
	if len(b) == 0 || b[0] == ' ' || b[len(b)-1] == ' ' {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == ' ' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// validDuration accepts "2.31s", "75.20s (0:01:15)" and "2.31 seconds".
func validDuration(b []byte) bool {
	i := 0
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == j {
			return false
		}
	}
	rest := b[i:]
	if string(rest) == " seconds" || string(rest) == "s" {
		return true
	}
	if !bytes.HasPrefix(rest, []byte("s (")) || rest[len(rest)-1] != ')' {
		return false
	}
	for _, c := range rest[3 : len(rest)-1] {
		if !isDigit(c) && c != ':' {
			return false
		}
	}
	return true
}

// collectedCount reads "collected 54 items" (also after "collecting ... ").
func collectedCount(b []byte) (int, bool) {
	i := bytes.Index(b, []byte("collected "))
	if i < 0 || (i > 0 && !bytes.HasPrefix(b, []byte("collecting "))) {
		return 0, false
	}
	rest := b[i+len("collected "):]
	j := 0
	for j < len(rest) && isDigit(rest[j]) {
		j++
	}
	if j == 0 || !bytes.HasPrefix(rest[j:], []byte(" item")) {
		return 0, false
	}
	n, err := strconv.Atoi(string(rest[:j]))
	return n, err == nil
}

// isProgressDots recognises the progress of pytest without -v:
// "..F.sxX  [ 50%]", optionally after the module's path.
func isProgressDots(b []byte) bool {
	body := trimRightSpace(b)
	if i := progressStart(body); i >= 0 {
		body = trimRightSpace(body[:i])
	}
	if k := bytes.LastIndexByte(body, ' '); k >= 0 {
		// "tests/test_x.py ..F": only a module path may come first.
		if !bytes.HasSuffix(trimRightSpace(body[:k]), []byte(".py")) {
			return false
		}
		body = body[k+1:]
	}
	if len(body) == 0 {
		return false
	}
	for _, c := range body {
		switch c {
		case '.', 'F', 'E', 's', 'x', 'X', 'R':
		default:
			return false
		}
	}
	return true
}

// isWorkerList recognises xdist's "gw0 I / gw1 I", "gw0 [54] / gw1 [54]" and
// "2 workers [54 items]".
func isWorkerList(b []byte) bool {
	if len(b) > 2 && b[0] == 'g' && b[1] == 'w' && isDigit(b[2]) {
		return true
	}
	return bytes.Contains(b, []byte(" workers [")) && isDigit(b[0])
}

// stripANSI appends b to dst without terminal escape sequences (colours
// from --color=yes, cursor movement).
func stripANSI(dst, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != 0x1b {
			dst = append(dst, c)
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case '[': // CSI: parameters, intermediates, one final byte
			j := i + 2
			for j < len(b) && b[j] >= 0x20 && b[j] <= 0x3f {
				j++
			}
			if j < len(b) && b[j] >= 0x40 && b[j] <= 0x7e {
				j++
			}
			i = j - 1
		case ']': // OSC: up to BEL or ESC \
			j := i + 2
			for j < len(b) && b[j] != 0x07 && !(b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\') {
				j++
			}
			if j < len(b) && b[j] == 0x1b {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return dst
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func trimRightSpace(b []byte) []byte {
	n := len(b)
	for n > 0 && (b[n-1] == ' ' || b[n-1] == '\t') {
		n--
	}
	return b[:n]
}

func trimLeftSpace(b []byte) []byte {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return b[i:]
}

func trimSpace(b []byte) []byte { return trimLeftSpace(trimRightSpace(b)) }
