package grade_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

// bigLog builds test output of about size bytes with n distinct tests in the
// format of the named runner, and the names the dataset would list.
func bigLog(runner string, n int) (string, []string) {
	var b strings.Builder
	names := make([]string, 0, n)
	b.WriteString("+ : '>>>>> Start Test Output'\n")
	switch runner {
	case "django":
		for i := range n {
			name := fmt.Sprintf("test_case_%d (app.tests.ModelTests%d.test_case_%d)", i, i%50, i)
			names = append(names, name)
			fmt.Fprintf(&b, "%s ... ok\n", name)
		}
		fmt.Fprintf(&b, "\n----------------------------------------------------------------------\nRan %d tests in 12.0s\n\nOK\n", n)
	default: // pytest -rA
		b.WriteString("============================= test session starts ==============================\n")
		for i := range n {
			name := fmt.Sprintf("tests/test_mod%d.py::TestClass::test_case_%d[param-%d]", i%50, i, i)
			names = append(names, name)
		}
		b.WriteString("=========================== short test summary info ============================\n")
		for _, name := range names {
			fmt.Fprintf(&b, "PASSED %s\n", name)
		}
		fmt.Fprintf(&b, "============================== %d passed in 12.00s ==============================\n", n)
	}
	b.WriteString("+ : '>>>>> End Test Output'\n")
	return b.String(), names
}

// BenchmarkGrade grades one instance whose log names 20,000 tests, 1,000 of
// them expected (FAIL_TO_PASS + PASS_TO_PASS), parse and cross-check
// included.
func BenchmarkGrade(b *testing.B) {
	for _, c := range []struct {
		runner, parser string
		check          grade.CountCheck
	}{
		{"django", "django", nil},
		{"pytest", "pytest", grade.NoCountCheck},
		{"pytest", "pytest", nil},
		{"pytest", "pytest_v2", grade.NoCountCheck},
	} {
		log, names := bigLog(c.runner, 20000)
		name := c.parser
		if c.check == nil && c.runner == "pytest" {
			name += "+countcheck"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(log)))
			for range b.N {
				rep, err := grade.Grade(grade.Input{InstanceID: "a__b-1", Log: log, Parser: c.parser,
					FailToPass: names[:100], PassToPass: names[100:1000], Rules: harness.V5, CountCheck: c.check})
				if err != nil || !rep.Resolved {
					b.Fatalf("not resolved: %v %+v", err, rep.Notes)
				}
			}
		})
	}
}
