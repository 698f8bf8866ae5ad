package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/swebox/swebox/pytestparse"
)

// parseUsage is the help text of `eval parse`.
const parseUsage = `usage: eval parse [--format json|summary] [FILE]

Parses pytest output (FILE, or standard input when FILE is absent or "-")
and prints what it says as one line of JSON:

  --format json (default):
    {"tests": [{"id": "<full node id>", "outcome": "passed", "message": "..."}, ...],
     "summary": {"passed": N, "failed": N, "error": N, "skipped": N, "xfailed": N, "xpassed": N, ...}}
  --format summary:
    {"passed": N, "failed": N, "error": N, "skipped": N, "xfailed": N, "xpassed": N}

"tests" lists every node id in the order first seen, with its verdict and
message (see package pytestparse for the rules). "summary" holds the counts of
pytest's closing line when the log has one: always the six outcomes, then
"warnings", "deselected" and "rerun" when pytest printed them, then any other
count it printed under its own name ("tests collected"). Without a closing line
(a run cut off), "summary" counts the parsed tests instead and a note goes to
standard error. --format summary always counts the parsed tests.
`

// runParse implements `eval parse`: it prints what pytestparse reads in a
// pytest log. It returns the exit status.
func runParse(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval parse", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { fmt.Fprint(fs.Output(), parseUsage) }
	format := fs.String("format", "json", "output: json (tests and summary) or summary (outcome counts only)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagFailure("parse", err, fs, stdout, stderr)
	}
	if *format != "json" && *format != "summary" {
		fmt.Fprintf(stderr, "eval parse: --format %q: want json or summary\n", *format)
		return exitUsage
	}
	if len(pos) > 1 {
		fmt.Fprintf(stderr, "eval parse: one log at most, got %d\n", len(pos))
		return exitUsage
	}
	in := stdin
	if len(pos) == 1 && pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			fmt.Fprintf(stderr, "eval parse: %v\n", err)
			return exitFailure
		}
		defer f.Close()
		in = f
	}
	if in == nil {
		in = eofReader{}
	}
	report, err := pytestparse.Parse(in)
	if err != nil {
		fmt.Fprintf(stderr, "eval parse: %v\n", err)
		return exitFailure
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	if *format == "summary" {
		writeCounts(w, report.Counts(), nil)
	} else {
		writeParseJSON(w, report)
		if !report.Summary.Seen {
			fmt.Fprintln(stderr, "eval parse: no closing line (the run was cut off?): summary counts the parsed tests")
		}
	}
	w.WriteByte('\n')
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "eval parse: write output: %v\n", err)
		return exitFailure
	}
	return exitOK
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// writeParseJSON writes the report in the shape documented in parseUsage,
// with the separators of Python's json.dumps.
func writeParseJSON(w *bufio.Writer, r *pytestparse.Report) {
	w.WriteString(`{"tests": [`)
	for i, t := range r.Tests {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(`{"id": `)
		writeJSONString(w, t.ID)
		w.WriteString(`, "outcome": "`)
		w.WriteString(t.Outcome.String())
		w.WriteString(`", "message": `)
		writeJSONString(w, t.Message)
		w.WriteByte('}')
	}
	w.WriteString(`], "summary": `)
	if !r.Summary.Seen {
		writeCounts(w, r.Counts(), nil)
	} else {
		s := r.Summary
		var extra []keyCount
		for _, kc := range []keyCount{{"warnings", s.Warnings}, {"deselected", s.Deselected}, {"rerun", s.Rerun}} {
			if kc.n != 0 {
				extra = append(extra, kc)
			}
		}
		names := make([]string, 0, len(s.Other))
		for name := range s.Other {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			extra = append(extra, keyCount{name, s.Other[name]})
		}
		writeCounts(w, s.Counts(), extra)
	}
	w.WriteByte('}')
}

type keyCount struct {
	key string
	n   int
}

// writeCounts writes {"passed": N, ...} for the six outcomes in canonical
// order, then the extra counts.
func writeCounts(w *bufio.Writer, counts map[pytestparse.Outcome]int, extra []keyCount) {
	w.WriteByte('{')
	for i, o := range pytestparse.Outcomes() {
		if i > 0 {
			w.WriteString(", ")
		}
		writeJSONString(w, o.String())
		w.WriteString(": ")
		w.WriteString(strconv.Itoa(counts[o]))
	}
	for _, kc := range extra {
		w.WriteString(", ")
		writeJSONString(w, kc.key)
		w.WriteString(": ")
		w.WriteString(strconv.Itoa(kc.n))
	}
	w.WriteByte('}')
}

// writeJSONString writes s as a JSON string. Unlike encoding/json it leaves
// <, > and & alone, which node ids often contain; invalid UTF-8 becomes
// U+FFFD.
func writeJSONString(w *bufio.Writer, s string) {
	const hex = "0123456789abcdef"
	w.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				w.WriteByte('\\')
				w.WriteByte(c)
			case c == '\n':
				w.WriteString(`\n`)
			case c == '\r':
				w.WriteString(`\r`)
			case c == '\t':
				w.WriteString(`\t`)
			case c < 0x20 || c == 0x7f:
				w.WriteString(`\u00`)
				w.WriteByte(hex[c>>4])
				w.WriteByte(hex[c&0xf])
			default:
				w.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			w.WriteString(`\ufffd`)
		} else {
			w.WriteString(s[i : i+size])
		}
		i += size
	}
	w.WriteByte('"')
}
