package pytestparse

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks the invariants that hold for any input: no panic, one
// valid verdict per test, counts that add up, capped keeping of unparsed
// lines, and a report that does not depend on how the input is chunked.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/captures/*.txt", "testdata/handmade/*.log"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, path := range paths {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data, uint16(len(data)/2))
		}
	}
	f.Add([]byte("t.py::a \x1b[32mPASSED\x1b[0m [ 5%]\r\nPASSED t.py::a\r"), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		r := ParseBytes(data)
		sum := 0
		for o, n := range r.Counts() {
			if !o.Valid() {
				t.Fatalf("count for invalid outcome %d", o)
			}
			sum += n
		}
		if sum != len(r.Tests) {
			t.Fatalf("counts add up to %d for %d tests", sum, len(r.Tests))
		}
		reported := r.ReportedCounts()
		seen := make(map[string]bool, len(r.Tests))
		for _, tc := range r.Tests {
			if !tc.Outcome.Valid() || !tc.Reported.Has(tc.Outcome) {
				t.Fatalf("test %q: outcome %v, reported %v", tc.ID, tc.Outcome, tc.Reported)
			}
			if tc.ID == "" || seen[tc.ID] {
				t.Fatalf("empty or repeated id %q", tc.ID)
			}
			seen[tc.ID] = true
			if tc.Line < 1 || tc.Line > r.Lines {
				t.Fatalf("test %q: line %d of %d", tc.ID, tc.Line, r.Lines)
			}
		}
		for _, id := range r.Unfinished {
			if seen[id] {
				t.Fatalf("%q is both finished and unfinished", id)
			}
		}
		for o, n := range r.Counts() {
			if reported[o] < n {
				t.Fatalf("%v: %d reported, %d verdicts", o, reported[o], n)
			}
		}
		if len(r.Unparsed) > DefaultMaxUnparsed {
			t.Fatalf("kept %d unparsed lines", len(r.Unparsed))
		}
		// Two writes split anywhere give the same report as one.
		at := int(cut)
		if at > len(data) {
			at = len(data)
		}
		p, err := New()
		if err != nil {
			t.Fatal(err)
		}
		p.Write(data[:at])
		p.Write(data[at:])
		p.Close()
		if got := p.Report(); !reportsEqual(got, r) {
			t.Fatalf("split at %d changes the report", at)
		}
	})
}

func reportsEqual(a, b *Report) bool {
	if len(a.Tests) != len(b.Tests) || a.Summary.Seen != b.Summary.Seen || a.Summary.Total() != b.Summary.Total() ||
		a.Lines != b.Lines || len(a.Unfinished) != len(b.Unfinished) || a.UnparsedDropped != b.UnparsedDropped {
		return false
	}
	for i := range a.Tests {
		if a.Tests[i] != b.Tests[i] {
			return false
		}
	}
	return true
}

// FuzzShape checks that the constant-time prefix check used to split summary
// lines agrees with scanning each prefix on its own.
func FuzzShape(f *testing.F) {
	for _, s := range []string{"a.py::t[x] - [y] - msg", "a.py::t - m", "a b::c[d", "::x", "a.py::t[]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sh := scanShape(b)
		for k := 0; k <= len(b); k++ {
			if got, want := sh.fits(b[:k]), scanShape(b[:k]).fits(b[:k]); got != want {
				t.Fatalf("prefix %q: %v, alone %v", b[:k], got, want)
			}
		}
	})
}
