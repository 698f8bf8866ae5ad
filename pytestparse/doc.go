// Package pytestparse turns pytest's console output into a typed report: one
// record per node id with its outcome, message and the line it came from, the
// counts of pytest's closing line, collection errors and interruptions.
//
// It reads the output as a stream (memory grows with the number of distinct
// tests, not with the size of the log) and understands what pytest 4 to 8
// print: verbose progress lines with and without percentages (-v, -vv,
// console_output_style=classic or count), short test summary lines (-rA,
// -ra), pytest-xdist worker lines, collection errors, errors at setup and
// teardown, the closing line, colour codes, CRLF line ends, carriage-return
// rewrites and logs cut off in the middle. Lines it does not understand are
// kept in [Report.Unparsed]; none is fatal.
//
// Usage:
//
//	f, err := os.Open("test_output.txt")
//	if err != nil {
//		return err
//	}
//	defer f.Close()
//	report, err := pytestparse.Parse(f)
//	if err != nil {
//		return err // a read error; report still holds what was read
//	}
//	for _, t := range report.Tests {
//		fmt.Println(t.ID, t.Outcome, t.Message)
//	}
//	if report.Summary.Seen {
//		fmt.Println("pytest counted", report.Summary.Failed, "failures")
//	}
//
// A [Parser] is an io.Writer, so a running process can be parsed as it
// writes: io.Copy(parser, stdout), then [Parser.Close] and [Parser.Report].
// [ParseString] and [ParseBytes] parse a log held in memory.
//
// # Reading a log as a person would
//
// The same characters mean different things in different parts of pytest's
// output, so the parser follows its structure:
//
//   - After "=== test session starts ===" a line counts as a result only in
//     the forms pytest prints while tests run: "path::test WORD [ nn%]"
//     (WORD at the end of the line, optionally followed by a "(reason)" for
//     skips and xfails and by the progress indicator) and xdist's
//     "[gw0] [ nn%] WORD path::test". A line that starts with a status word
//     is not a result here: pytest prints those only in the summary, so it
//     is a test's own output (-s).
//   - Inside ERRORS, FAILURES, PASSES and warnings sections nothing is a
//     result: tracebacks and captured output ("--- Captured stdout call ---")
//     may print anything, including whole inner pytest sessions (pytester),
//     which are skipped up to their own closing line. Only the headers
//     "___ ERROR collecting path ___" are read.
//   - In "=== short test summary info ===" lines start with the status word:
//     "FAILED path::test - message", "XPASS path::test reason",
//     "SKIPPED [2] path:12: reason" (folded skips have no node id and are
//     kept as [SkipGroup]s). Lines that do not start with a status word
//     continue the previous message (multi-line messages on CI, the
//     indented xfail reason of pytest before 7.2).
//   - Before any session header (pytest -q prints none) all forms count.
//   - The last closing line outside captured output is the [Summary].
//
// # Ambiguous lines
//
// Parameter ids may contain anything: spaces, " - ", "::", brackets, status
// words, "[100%]". A node id is taken to be a path, "::", names without
// spaces, then optionally "[parameters]" that end the id. On a verbose line
// the status word must be followed by nothing, the progress indicator or a
// "(reason)" that ends the line, which leaves one reading for real pytest
// output; among several readings the longest id already seen in the log
// wins, then the leftmost. On a summary line every " - " is a possible end
// of the id: an id seen earlier wins (so -v -rA logs are exact), then the
// leftmost id-shaped split whose message starts like an exception
// ("ValueError: ...", "assert ..."), then the leftmost id-shaped split.
// Only a log without verbose lines, with a parameter id containing "] - "
// and a message that does not look like an exception, can be split wrongly.
//
// With -s, a test's output comes between its node id and its status word.
// The parser then treats everything up to a line holding only the status
// ("PASSED   [ 50%]") as output, so printed status lines do not count. A
// session that starts inside that output is parsed on the side: if the
// pending test's status follows its closing line, it was the test's output;
// otherwise it was a new run after a killed one, and it counts.
//
// # Several reports for one test
//
// pytest reports a test once per phase that has something to say, so a test
// that passes and then fails in teardown appears as PASSED and as ERROR. The
// verdict ([Test.Outcome]) is the most severe outcome reported:
// failed > error > xpassed > passed > xfailed > skipped. [Test.Reported]
// keeps them all, and [Report.ReportedCounts] counts them the way pytest's
// closing line does. The same rule applies across several sessions in one
// log: a test that failed once stays failed.
//
// Node ids are kept whole. The official SWE-bench harness truncates them at
// the first space; deriving those names is the caller's job.
package pytestparse
