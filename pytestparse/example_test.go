package pytestparse_test

import (
	"fmt"

	"github.com/swebox/swebox/pytestparse"
)

func ExampleParseString() {
	log := `============================= test session starts ==============================
collected 4 items

tests/test_x.py::test_ok PASSED                                          [ 25%]
tests/test_x.py::test_param[a - b] FAILED                                [ 50%]
tests/test_x.py::test_fixture PASSED                                     [ 75%]
tests/test_x.py::test_fixture ERROR                                      [ 75%]
tests/test_x.py::test_later SKIPPED (needs network)                      [100%]

=========================== short test summary info ============================
FAILED tests/test_x.py::test_param[a - b] - AssertionError: assert 1 == 2
ERROR tests/test_x.py::test_fixture - RuntimeError: teardown exploded
============== 1 failed, 2 passed, 1 skipped, 1 error in 0.12s ===============
`
	report := pytestparse.ParseString(log)
	for _, t := range report.Tests {
		fmt.Printf("%-7s %s %q\n", t.Outcome, t.ID, t.Message)
	}
	fmt.Println("closing line:", report.Summary.Passed, "passed,", report.Summary.Errors, "error")
	fmt.Println("reported passes:", report.ReportedCounts()[pytestparse.Passed])
	// Output:
	// passed  tests/test_x.py::test_ok ""
	// failed  tests/test_x.py::test_param[a - b] "AssertionError: assert 1 == 2"
	// error   tests/test_x.py::test_fixture "RuntimeError: teardown exploded"
	// skipped tests/test_x.py::test_later "needs network"
	// closing line: 2 passed, 1 error
	// reported passes: 2
}

func ExampleParser() {
	p, err := pytestparse.New()
	if err != nil {
		panic(err)
	}
	// Feed output as it arrives, in any chunks.
	for _, chunk := range []string{"[gw0] [ 50%] PASSED tests/test_a.py::te", "st_one\n[gw1] [100%] FAIL", "ED tests/test_a.py::test_two\n"} {
		p.Write([]byte(chunk))
	}
	p.Close()
	fmt.Println(p.Report().Counts()[pytestparse.Failed], "failed of", len(p.Report().Tests))
	// Output:
	// 1 failed of 2
}
