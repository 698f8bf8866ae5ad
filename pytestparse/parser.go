package pytestparse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// DefaultMaxUnparsed is how many unparsed lines a [Report] keeps by default.
const DefaultMaxUnparsed = 100

const (
	// maxUnparsedLine caps each kept unparsed line, in bytes.
	maxUnparsedLine = 4 << 10
	// maxMessage caps a message grown from continuation lines (pytest on CI
	// prints whole multi-line exception messages in the summary).
	maxMessage = 64 << 10
	// readSize is the read buffer of Parse.
	readSize = 256 << 10
	// keepPartial is the largest line buffer kept for reuse after a long line.
	keepPartial = 1 << 20
)

// ErrInvalidOption is returned by [New] for an option with a bad value.
var ErrInvalidOption = errors.New("invalid option")

// Option configures a [Parser].
type Option func(*config) error

type config struct {
	maxUnparsed int
}

// WithMaxUnparsed sets how many unparsed lines the report keeps; the rest are
// only counted. Zero keeps none. Default: [DefaultMaxUnparsed].
func WithMaxUnparsed(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("max unparsed %d: %w", n, ErrInvalidOption)
		}
		c.maxUnparsed = n
		return nil
	}
}

// region is the part of pytest's output the parser is in; it decides which
// line forms count.
type region uint8

const (
	// regionNone: before any session header, or after a closing line. No
	// structure is known, so every form is accepted (logs of pytest -q have
	// no session header).
	regionNone region = iota
	// regionRun: after "test session starts": verbose and xdist lines count;
	// summary-form lines do not (pytest never prints them here, so they can
	// only be the output of a test run with -s).
	regionRun
	// regionContent: ERRORS, FAILURES, PASSES, warnings and similar sections:
	// tracebacks and captured output, where nothing counts except section
	// headers ("ERROR collecting path").
	regionContent
	// regionSummary: "short test summary info": summary-form lines count.
	regionSummary
)

// Parser reads pytest output incrementally. Write it bytes in any chunks (it
// is an io.Writer, so io.Copy and io.MultiWriter work), Close it at the end
// of input, and call Report. Memory grows with the number of distinct node
// ids and the length of the longest line, not with the size of the log.
// A Parser is not safe for concurrent use.
type Parser struct {
	cfg config

	st     store
	reruns map[int32]*[2]int // per test: RERUN reports seen on verbose and summary lines

	summary          Summary
	collectionErrors []string
	collectionSet    map[string]struct{}
	skipGroups       []SkipGroup
	interrupted      bool
	interruptReason  string
	sessions         int
	collected        int
	lines            int
	unparsed         []string
	unparsedDropped  int

	region  region
	section string // title of the current "=" section
	nested  int    // depth of pytest sessions printed inside captured output
	xdist   bool   // the current session runs pytest-xdist workers
	results int    // test reports seen in the current session
	// pending is index+1 of the test whose start line was printed and whose
	// status has not come yet (its output, with -s, comes in between).
	pending int32
	// last is index+1 of the test whose message the last summary line set;
	// continuation lines extend that message.
	last int32

	// shadow parses a session that starts while a test is pending: it is
	// either output of that test (an inner pytest run printed with -s) or a
	// new run after a killed one. The line after its closing line decides.
	shadow     *Parser
	shadowDone bool

	partial []byte
	scratch []byte
}

// New returns a Parser.
func New(opts ...Option) (*Parser, error) {
	cfg := config{maxUnparsed: DefaultMaxUnparsed}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, fmt.Errorf("new parser: %w", err)
		}
	}
	return newParser(cfg), nil
}

func newParser(cfg config) *Parser {
	return &Parser{cfg: cfg, st: newStore()}
}

// Parse reads r to the end and returns what it says. On a read error it
// returns the report of everything read so far along with the error.
func Parse(r io.Reader, opts ...Option) (*Report, error) {
	p, err := New(opts...)
	if err != nil {
		return nil, err
	}
	bp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bp)
	buf := *bp
	for {
		n, rerr := r.Read(buf)
		p.Write(buf[:n])
		if rerr != nil {
			if rerr != io.EOF {
				err = rerr
			}
			break
		}
	}
	p.Close()
	if err != nil {
		return p.Report(), fmt.Errorf("read pytest output: %w", err)
	}
	return p.Report(), nil
}

var readBuffers = sync.Pool{New: func() any {
	b := make([]byte, readSize)
	return &b
}}

// ParseBytes parses a whole log held in memory.
func ParseBytes(b []byte) *Report {
	p := newParser(config{maxUnparsed: DefaultMaxUnparsed})
	p.Write(b)
	p.Close()
	return p.Report()
}

// ParseString parses a whole log held in a string.
func ParseString(s string) *Report {
	p := newParser(config{maxUnparsed: DefaultMaxUnparsed})
	buf := make([]byte, 0, min(len(s), 64<<10))
	for len(s) > 0 {
		n := min(len(s), cap(buf))
		buf = append(buf[:0], s[:n]...)
		p.Write(buf)
		s = s[n:]
	}
	p.Close()
	return p.Report()
}

// Write parses the complete lines in b and keeps an unterminated last line
// for the next Write or Close. It never fails.
func (p *Parser) Write(b []byte) (int, error) {
	n := len(b)
	if len(p.partial) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.partial = append(p.partial, b...)
			return n, nil
		}
		p.partial = append(p.partial, b[:i]...)
		p.line(p.partial)
		p.resetPartial()
		b = b[i+1:]
	}
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		p.line(b[:i])
		b = b[i+1:]
	}
	p.partial = append(p.partial, b...)
	return n, nil
}

// Close parses an unterminated last line (a log cut off in the middle of a
// line). It always returns nil; Write may be called again afterwards.
func (p *Parser) Close() error {
	if len(p.partial) > 0 {
		p.line(p.partial)
		p.resetPartial()
	}
	return nil
}

func (p *Parser) resetPartial() {
	if cap(p.partial) > keepPartial {
		p.partial = nil
		return
	}
	p.partial = p.partial[:0]
}

// Report returns what the lines parsed so far say. It does not include an
// unterminated last line until Close. The report shares nothing with the
// parser, which can go on reading.
func (p *Parser) Report() *Report {
	if p.shadow != nil {
		// A session that began while a test was pending and never proved
		// to be that test's output: the log ends inside it, so it is the
		// run that replaced a killed one.
		q := p.clone()
		q.adoptShadow()
		return q.report()
	}
	return p.report()
}

func (p *Parser) report() *Report {
	r := &Report{
		Tests:            make([]Test, 0, p.st.len()),
		Summary:          p.summary,
		CollectionErrors: append([]string(nil), p.collectionErrors...),
		SkipGroups:       append([]SkipGroup(nil), p.skipGroups...),
		Interrupted:      p.interrupted,
		InterruptReason:  p.interruptReason,
		Sessions:         p.sessions,
		Collected:        p.collected,
		Lines:            p.lines,
		Unparsed:         append([]string(nil), p.unparsed...),
		UnparsedDropped:  p.unparsedDropped,
	}
	if p.summary.Other != nil {
		r.Summary.Other = make(map[string]int, len(p.summary.Other))
		for k, v := range p.summary.Other {
			r.Summary.Other[k] = v
		}
	}
	for i := range p.st.len() {
		rc := p.st.rec(int32(i))
		id := p.st.idString(int32(i))
		if rc.outcome == 0 {
			r.Unfinished = append(r.Unfinished, id)
			continue
		}
		t := Test{ID: id, Outcome: rc.outcome, Message: p.st.message(int32(i)), Line: rc.line, Source: rc.source, Reported: rc.reported}
		if rr := p.reruns[int32(i)]; rr != nil {
			t.Reruns = max(rr[0], rr[1])
		}
		r.Tests = append(r.Tests, t)
	}
	return r
}

// clone copies the state Report reads, so that adopting a shadow session
// for a snapshot leaves p untouched.
func (p *Parser) clone() *Parser {
	q := *p
	q.st = p.st.clone()
	q.reruns = make(map[int32]*[2]int, len(p.reruns))
	for k, v := range p.reruns {
		c := *v
		q.reruns[k] = &c
	}
	q.collectionErrors = append([]string(nil), p.collectionErrors...)
	q.collectionSet = make(map[string]struct{}, len(p.collectionSet))
	for k := range p.collectionSet {
		q.collectionSet[k] = struct{}{}
	}
	q.skipGroups = append([]SkipGroup(nil), p.skipGroups...)
	q.unparsed = append([]string(nil), p.unparsed...)
	if p.summary.Other != nil {
		q.summary.Other = make(map[string]int, len(p.summary.Other))
		for k, v := range p.summary.Other {
			q.summary.Other[k] = v
		}
	}
	return &q
}

// line handles one line without its "\n".
func (p *Parser) line(b []byte) {
	p.lines++
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if bytes.IndexByte(b, '\r') < 0 {
		p.segment(b)
		return
	}
	// A carriage return rewrites the terminal line (collection progress on
	// a tty); like Python's splitlines, each piece is a line of its own.
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\r')
		if i < 0 {
			p.segment(b)
			return
		}
		if i > 0 {
			p.segment(b[:i])
		}
		b = b[i+1:]
	}
}

func (p *Parser) segment(b []byte) {
	if bytes.IndexByte(b, 0x1b) >= 0 {
		p.scratch = stripANSI(p.scratch[:0], b)
		b = p.scratch
	}
	if p.shadow != nil {
		p.shadowLine(b)
		return
	}
	p.classify(b)
}

// shadowLine feeds a line to the session that started while a test was
// pending, until the line after its closing line shows what it was.
func (p *Parser) shadowLine(b []byte) {
	if !p.shadowDone {
		p.shadow.lines = p.lines
		p.shadow.classify(b)
		if p.shadow.summary.Seen {
			p.shadowDone = true
		}
		return
	}
	if len(trimSpace(b)) == 0 {
		return
	}
	if _, _, ok := bareStatus(b); ok {
		// The pending test finishes now: the session was its output.
		p.shadow = nil
		p.shadowDone = false
		p.classify(b)
		return
	}
	p.adoptShadow()
	p.classify(b)
}

// adoptShadow makes the shadow session part of the report: the pending test
// never finished and a new run followed.
func (p *Parser) adoptShadow() {
	s := p.shadow
	if s.shadow != nil {
		// Report may call this on a clone: leave the shared shadow alone.
		s = s.clone()
		s.adoptShadow()
	}
	p.shadow = nil
	p.shadowDone = false
	p.pending = 0
	for i := range s.st.len() {
		t := s.st.rec(int32(i))
		idx := p.st.intern(s.st.id(int32(i)))
		for _, o := range t.reported.Outcomes() {
			p.mergeOutcome(idx, o, "", t.line, t.source)
		}
		if t.outcome != 0 {
			p.mergeOutcome(idx, t.outcome, s.st.message(int32(i)), t.line, t.source)
		}
		if rr := s.reruns[int32(i)]; rr != nil {
			p.addRerun(idx, 0, rr[0])
			p.addRerun(idx, 1, rr[1])
		}
	}
	for _, id := range s.collectionErrors {
		p.markCollectionError(id)
	}
	p.skipGroups = append(p.skipGroups, s.skipGroups...)
	if s.summary.Seen {
		p.summary = s.summary
	}
	if s.interrupted {
		p.interrupted, p.interruptReason = true, s.interruptReason
	}
	if s.collected > 0 {
		p.collected = s.collected
	}
	p.sessions += s.sessions
	for _, u := range s.unparsed {
		p.addUnparsed([]byte(u))
	}
	p.unparsedDropped += s.unparsedDropped
	p.region, p.section, p.nested, p.xdist, p.results = s.region, s.section, s.nested, s.xdist, s.results
	p.pending, p.last = 0, 0
	if s.pending != 0 {
		idx, _ := p.st.find(s.st.id(s.pending - 1))
		p.pending = idx + 1
	}
}

// classify dispatches a clean line (no line end, no colour codes).
func (p *Parser) classify(b []byte) {
	if p.nested > 0 {
		p.nestedLine(b)
		return
	}
	if p.pending != 0 && p.pendingLine(b) {
		return
	}
	if len(b) == 0 {
		return
	}
	switch b[0] {
	case '=', '_', '-', '!', '+':
		if ch, title, ok := sepTitle(b); ok {
			p.sep(ch, title)
			return
		}
	}
	if isDigit(b[0]) || b[0] == 'n' {
		// pytest -q prints the closing line without "=" around it.
		if s, ok := parseClosing(b); ok {
			p.setSummary(s)
			return
		}
	}
	switch p.region {
	case regionContent:
		return
	case regionSummary:
		p.summaryLine(b)
		return
	}
	p.runLine(b)
}

// nestedLine skips the lines of a pytest session printed inside captured
// output (pytester), counting inner session starts and ends.
func (p *Parser) nestedLine(b []byte) {
	if len(b) == 0 || b[0] != '=' {
		return
	}
	ch, title, ok := sepTitle(b)
	if !ok || ch != '=' {
		return
	}
	if string(title) == "test session starts" {
		p.nested++
		return
	}
	if _, ok := parseClosing(title); ok {
		p.nested--
	}
}

// pendingLine handles a line printed while a test is pending: its output
// (with -s) until a bare status line finishes it. It reports whether the
// line was consumed; if not, the test never finished and the line is
// handled as usual.
func (p *Parser) pendingLine(b []byte) bool {
	// The pending test's id again at the start of a line is pytest printing
	// its line anew (after a newline from the test, or live logging): read
	// the line as a verbose line.
	if id := p.st.id(p.pending - 1); len(b) > len(id) && b[len(id)] == ' ' && bytes.HasPrefix(b, id) {
		p.pending = 0
		return false
	}
	if o, msg, ok := bareStatus(b); ok {
		p.finishPending(o, msg)
		return true
	}
	if o, ok := gluedStatus(b); ok {
		p.finishPending(o, nil)
		return true
	}
	if len(b) == 0 {
		return true
	}
	switch b[0] {
	case '=':
		ch, title, ok := sepTitle(b)
		if !ok || ch != '=' {
			return true
		}
		if string(title) == "test session starts" {
			p.startShadow(b)
			return true
		}
		if _, ok := parseClosing(title); ok || titleKind(title) != titleOther {
			p.pending = 0
			return false
		}
	case '!':
		if _, title, ok := sepTitle(b); ok && isInterruptTitle(title) {
			p.pending = 0
			return false
		}
	case '+':
		// pytest-timeout dumps the stacks of the hung test and exits; the
		// test stays unfinished.
		if _, title, ok := sepTitle(b); ok && string(title) == "Timeout" {
			p.interrupted, p.interruptReason = true, "Timeout"
		}
	}
	return true
}

func (p *Parser) startShadow(b []byte) {
	p.shadow = newParser(p.cfg)
	p.shadowDone = false
	p.shadow.lines = p.lines
	p.shadow.classify(b)
}

func (p *Parser) finishPending(o Outcome, msg []byte) {
	idx := p.pending - 1
	p.pending = 0
	p.results++
	if o == 0 {
		p.addRerun(idx, 0, 1)
		return
	}
	p.mergeOutcome(idx, o, string(msg), p.lines, SourceVerbose)
}

func (p *Parser) sep(ch byte, title []byte) {
	switch ch {
	case '=':
		if string(title) == "test session starts" {
			if p.region == regionContent {
				p.nested++
				return
			}
			p.region, p.section = regionRun, ""
			p.sessions++
			p.xdist, p.results, p.pending, p.last = false, 0, 0, 0
			return
		}
		if s, ok := parseClosing(title); ok {
			p.setSummary(s)
			return
		}
		switch titleKind(title) {
		case titleSummary:
			p.region, p.last = regionSummary, 0
		case titleContent:
			p.region = regionContent
		default:
			// A plugin's section: after the tests ran, it is report text.
			if p.region == regionSummary || (p.region == regionRun && p.results > 0) {
				p.region = regionContent
			}
		}
		p.section = string(title)
	case '!':
		if p.region == regionContent && !isInterruptTitle(title) {
			return // printed by a test
		}
		p.interrupted, p.interruptReason = true, string(title)
	case '+':
		if p.region != regionContent && string(title) == "Timeout" {
			p.interrupted, p.interruptReason = true, "Timeout"
		}
	case '_', '-':
		if p.region == regionSummary {
			// A test section or a captured-output header: the "short
			// test summary info" line was printed by a test.
			p.region = regionContent
		}
		if ch == '_' && p.region == regionContent && p.section == "ERRORS" {
			if id, ok := bytes.CutPrefix(title, []byte("ERROR collecting ")); ok && len(id) > 0 {
				p.record(id, Error, nil, SourceHeader)
				p.markCollectionError(string(id))
			}
		}
	}
}

func (p *Parser) setSummary(s Summary) {
	s.Line = p.lines
	p.summary = s
	p.region, p.section, p.pending, p.last = regionNone, "", 0, 0
}

func (p *Parser) markCollectionError(id string) {
	if p.collectionSet == nil {
		p.collectionSet = make(map[string]struct{})
	}
	if _, ok := p.collectionSet[id]; ok {
		return
	}
	p.collectionSet[id] = struct{}{}
	p.collectionErrors = append(p.collectionErrors, id)
}

// summaryLine handles a line of the short test summary.
func (p *Parser) summaryLine(b []byte) {
	w, rest, ok := summaryWord(b)
	if !ok {
		p.continuation(b)
		return
	}
	p.summaryRecord(b, w, rest)
}

// summaryRecord handles line, "WORD rest", from a short test summary or
// from a log without structure.
func (p *Parser) summaryRecord(line []byte, w word, rest []byte) {
	p.last = 0
	rest = trimRightSpace(rest)
	if len(rest) == 0 {
		p.addUnparsed(line)
		return
	}
	if (w == wordSkipped || w == wordSkip) && rest[0] == '[' {
		if g, ok := parseSkipGroup(rest); ok {
			g.Line = p.lines
			p.skipGroups = append(p.skipGroups, g)
			return
		}
	}
	var id, msg []byte
	switch w {
	case wordPassed:
		id = rest // pytest prints no message after PASSED
	case wordXPass:
		// pytest 8: "XPASS id - reason"; before: "XPASS id reason".
		id, msg = p.splitID(rest, " ")
		msg = bytes.TrimPrefix(msg, []byte("- "))
	default:
		id, msg = p.splitID(rest, " - ")
	}
	if p.region == regionNone && !bytes.Contains(id, []byte("::")) && !bytes.Contains(id, []byte(".py")) {
		// Outside pytest's summary, "ERROR Could not install" is not a test.
		p.addUnparsed(line)
		return
	}
	p.results++
	o := w.outcome()
	if o == 0 {
		idx := p.record(id, 0, nil, SourceSummary)
		p.addRerun(idx, 1, 1)
		return
	}
	idx := p.record(id, o, msg, SourceSummary)
	if rc := p.st.rec(idx); rc.outcome == o && rc.line == p.lines {
		p.last = idx + 1
	}
	if o == Error && !bytes.Contains(id, []byte("::")) {
		p.markCollectionError(string(id))
	}
}

// continuation extends the message of the last summary line: the reason
// pytest before 7.2 printed under "XFAIL id", or the further lines of a
// message pytest prints whole when it runs on CI.
func (p *Parser) continuation(b []byte) {
	if p.last == 0 {
		p.addUnparsed(b)
		return
	}
	m := p.st.message(p.last - 1)
	if len(m)+len(b) > maxMessage {
		return
	}
	if m == "" {
		p.st.setMessage(p.last-1, string(trimSpace(b)))
		return
	}
	p.st.setMessage(p.last-1, m+"\n"+string(b))
}

// runLine handles a line of the test run, or of a log without structure.
func (p *Parser) runLine(b []byte) {
	if b[0] == '[' && p.xdistLine(b) {
		return
	}
	if p.region == regionNone && b[0] >= 'A' && b[0] <= 'Z' {
		if w, rest, ok := summaryWord(b); ok {
			p.summaryRecord(b, w, rest)
			return
		}
	}
	if p.verboseLine(b) || p.startLine(b) || p.noiseLine(b) {
		return
	}
	p.addUnparsed(b)
}

// verboseLine handles "path::test WORD [ (reason)] [ nn%]".
func (p *Parser) verboseLine(b []byte) bool {
	body := trimRightSpace(b)
	if n := len(body); n > 0 && body[n-1] == ']' {
		if i := progressStart(body); i >= 0 {
			body = trimRightSpace(body[:i])
		}
	}
	n := len(body)
	if n == 0 {
		return false
	}
	if o, wl := suffixWord(body); wl > 0 && n > wl && body[n-wl-1] == ' ' {
		if id, ok := verboseID(body[:n-wl-1]); ok {
			p.results++
			idx := p.record(id, o, nil, SourceVerbose)
			if o == 0 {
				p.addRerun(idx, 0, 1)
			}
			return true
		}
		return false
	}
	if body[n-1] != ')' {
		return false
	}
	// A skip, xfail or xpass with its reason: "id SKIPPED (reason)". The
	// reason may hold anything, so try every " WORD (" and prefer a known
	// id, then the leftmost one shaped like a node id.
	bestID, bestMsg, bestO, bestKnown := []byte(nil), []byte(nil), Outcome(0), false
	tried := 0
	for i := 0; i < n && tried < maxLookups; i++ {
		j := bytes.Index(body[i:], []byte(" ("))
		if j < 0 {
			break
		}
		at := i + j
		i = at
		o, wl := suffixWord(body[:at])
		if wl == 0 || (o != Skipped && o != XFailed && o != XPassed) || at-wl-1 < 0 || body[at-wl-1] != ' ' {
			continue
		}
		tried++
		id, ok := verboseID(body[:at-wl-1])
		if !ok {
			continue
		}
		_, known := p.st.find(id)
		if bestID == nil || (known && !bestKnown) || (known && bestKnown && len(id) > len(bestID)) {
			bestID, bestMsg, bestO, bestKnown = id, body[at+2:n-1], o, known
		}
	}
	if bestID == nil {
		return false
	}
	p.results++
	p.record(bestID, bestO, bestMsg, SourceVerbose)
	return true
}

// startLine handles the line pytest -v prints when a test starts: the node
// id and a space, the status following later on the same line. Alone on a
// line it marks a test that has not finished (xdist prints these for every
// test; elsewhere it means the log was cut off). Followed by other text, the
// test printed output (pytest -s).
func (p *Parser) startLine(b []byte) bool {
	body := trimRightSpace(b)
	if len(body) < len(b) {
		if id, ok := verboseID(body); ok {
			idx := p.record(id, 0, nil, SourceVerbose)
			if p.region == regionRun && !p.xdist {
				p.pending = idx + 1
			}
			return true
		}
	}
	if p.region != regionRun || p.xdist {
		return false
	}
	id, rest, ok := leadingID(body)
	if !ok {
		return false
	}
	idx := p.record(id, 0, nil, SourceVerbose)
	p.pending = idx + 1
	p.pendingLine(rest)
	return true
}

// xdistLine handles "[gw0] [ 50%] PASSED path::test" and other lines of
// pytest-xdist workers ("[gw1] linux -- Python 3.11.2 /usr/bin/python3").
func (p *Parser) xdistLine(b []byte) bool {
	if len(b) < 5 || string(b[:3]) != "[gw" {
		return false
	}
	i := 3
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i == 3 || i >= len(b) || b[i] != ']' {
		return false
	}
	p.xdist = true
	rest := trimLeftSpace(b[i+1:])
	if len(rest) > 0 && rest[0] == '[' {
		if j := bytes.IndexByte(rest, ']'); j > 0 && isProgress(rest[:j+1]) {
			rest = trimLeftSpace(rest[j+1:])
		}
	}
	o, wl := prefixWord(rest)
	if wl == 0 || len(rest) <= wl || rest[wl] != ' ' {
		return true // worker noise
	}
	id := stripArrow(trimSpace(rest[wl+1:]))
	if len(id) == 0 {
		return true
	}
	p.results++
	if o == 0 {
		idx := p.record(id, 0, nil, SourceXdist)
		p.addRerun(idx, 0, 1)
		return true
	}
	p.record(id, o, nil, SourceXdist)
	return true
}

// noiseLine recognises the lines of a run that carry no test result.
func (p *Parser) noiseLine(b []byte) bool {
	if n, ok := collectedCount(b); ok {
		p.collected = n
		return true
	}
	if isProgressDots(b) {
		return true
	}
	for _, prefix := range noisePrefixes {
		if bytes.HasPrefix(b, []byte(prefix)) {
			if prefix == "bringing up nodes" || prefix == "created: " || prefix == "scheduling tests via" {
				p.xdist = true
			}
			return true
		}
	}
	if isWorkerList(b) {
		p.xdist = true
		return true
	}
	// A node id alone without the trailing space: pytest --collect-only -q.
	if _, ok := verboseID(b); ok {
		return true
	}
	return false
}

var noisePrefixes = []string{
	"platform ", "cachedir: ", "rootdir: ", "configfile: ", "inifile: ", "testpaths: ",
	"plugins: ", "collecting ", "hypothesis profile", "benchmark: ", "django: ",
	"Using --randomly-seed", "bringing up nodes", "created: ", "scheduling tests via",
	"sensitiveurl: ", "metadata: ", "timeout: ", "timeout method: ", "timeout func_only: ", "asyncio: ",
	"Test order randomisation", "replacing crashed worker ",
	"Required test coverage", "(to show a full traceback", "-- Docs: ",
}

// record adds a report of id; an outcome of zero only notes the id (a test
// that started, or a rerun).
func (p *Parser) record(id []byte, o Outcome, msg []byte, src Source) int32 {
	idx := p.st.intern(id)
	if o != 0 {
		p.mergeOutcome(idx, o, string(msg), p.lines, src)
	}
	return idx
}

// mergeOutcome applies the precedence rule documented on [Test].
func (p *Parser) mergeOutcome(idx int32, o Outcome, msg string, line int, src Source) {
	t := p.st.rec(idx)
	t.reported = t.reported.With(o)
	switch {
	case t.outcome == 0 || severity[o] > severity[t.outcome]:
		t.outcome, t.line, t.source = o, line, src
		p.st.setMessage(idx, msg)
	case o != t.outcome:
	case src == SourceSummary && t.source != SourceSummary:
		t.line, t.source = line, src
		if msg != "" {
			p.st.setMessage(idx, msg)
		}
	case msg != "" && p.st.message(idx) == "":
		p.st.setMessage(idx, msg)
	}
}

func (p *Parser) addRerun(idx int32, kind, n int) {
	if n == 0 {
		return
	}
	if p.reruns == nil {
		p.reruns = make(map[int32]*[2]int)
	}
	rr := p.reruns[idx]
	if rr == nil {
		rr = new([2]int)
		p.reruns[idx] = rr
	}
	rr[kind] += n
}

func (p *Parser) addUnparsed(b []byte) {
	if len(p.unparsed) >= p.cfg.maxUnparsed {
		p.unparsedDropped++
		return
	}
	if len(b) > maxUnparsedLine {
		b = b[:maxUnparsedLine]
		for len(b) > 0 && !utf8.Valid(b[len(b)-min(len(b), utf8.UTFMax):]) {
			b = b[:len(b)-1]
		}
	}
	p.unparsed = append(p.unparsed, string(b))
}
