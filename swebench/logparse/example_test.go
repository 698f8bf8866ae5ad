package logparse_test

import (
	"fmt"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

func Example() {
	log := "PASSED tests/test_a.py::test_one\n" +
		"FAILED tests/test_a.py::test_two - AssertionError: 1 - 2\n" +
		"SKIPPED [1] tests/test_a.py:12: no network\n"
	for _, rules := range []harness.Rules{harness.V4, harness.V5} {
		m, err := logparse.Parse(harness.ParserForRepo("pytest-dev/pytest"), log, rules)
		if err != nil {
			panic(err)
		}
		fmt.Println(rules, len(m), m["tests/test_a.py::test_two"], m["[1]"])
	}
	// Output:
	// v4 3 FAILED SKIPPED
	// v5 2 FAILED
}
