package grade_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// FuzzGrade grades arbitrary logs: no panic; the only error is the one the
// official parser raises (logparse.ErrParserRaised), where the official
// harness writes no report; and the counts add up: every expected test
// lands in at most one list, a usable log has tests_status, and report.json
// is valid JSON that reads back the same.
func FuzzGrade(f *testing.F) {
	logs, _ := filepath.Glob("testdata/logs/*.txt")
	for i, path := range logs {
		if raw, err := os.ReadFile(path); err == nil {
			f.Add(uint8(i), string(raw), "tests/test_stub.py::test_pass\ntests/test_stub.py::test_param[a", i%2 == 0)
		}
	}
	f.Add(uint8(0), traceStart+"PASSED a\nFAILED\n"+traceEnd, "a\nb[", true)
	names := logparse.Names()
	// Logs on which the official parser raises.
	for _, seed := range []struct{ parser, log string }{
		{harness.ParserDjango, "FAIL:\n"},
		{harness.ParserSeaborn, "PASSED\n"},
	} {
		f.Add(uint8(slices.Index(names, seed.parser)), traceStart+seed.log+traceEnd, "a", false)
	}
	f.Fuzz(func(t *testing.T, which uint8, log, expected string, v5 bool) {
		rules := harness.V4
		if v5 {
			rules = harness.V5
		}
		tests := strings.Split(expected, "\n")
		half := len(tests) / 2
		in := grade.Input{InstanceID: "fuzz__x-1", Log: log, Parser: names[int(which)%len(names)],
			FailToPass: tests[:half], PassToPass: tests[half:], FailOnly: which%7 == 0, Rules: rules, Regrade: which%5 == 0}
		rep, err := grade.Grade(in)
		if err != nil {
			if !errors.Is(err, logparse.ErrParserRaised) {
				t.Fatalf("%s/%s: an error the official parser does not raise: %v", in.Parser, rules, err)
			}
			return // the official parser raises: no report
		}
		if rep.PatchSuccessfullyApplied != (rep.TestsStatus != nil) {
			t.Fatal("tests_status present exactly when the log is usable")
		}
		if ts := rep.TestsStatus; ts != nil {
			if len(ts.FailToPass.Success)+len(ts.FailToPass.Failure) > len(in.FailToPass) ||
				len(ts.PassToPass.Success)+len(ts.PassToPass.Failure) > len(in.PassToPass) {
				t.Fatal("more results than expected tests")
			}
			if rep.Resolved != (ts.Resolution() == grade.ResolvedFull) {
				t.Fatal("resolved is RESOLVED_FULL")
			}
		}
		doc := rep.Encode()
		if !json.Valid(doc) {
			t.Fatalf("invalid JSON: %s", doc)
		}
		var back grade.InstanceReport
		if err := json.Unmarshal(doc, &back); err != nil {
			t.Fatal(err)
		}
		if string(back.Encode()) != string(doc) {
			t.Fatalf("round trip changed the report:\n%s\n%s", doc, back.Encode())
		}
	})
}
