package grade_test

import (
	"fmt"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

func Example() {
	testOutput := "+ : '>>>>> Start Test Output'\n" +
		"+ pytest -rA tests/test_a.py\n" +
		"PASSED tests/test_a.py::test_fixed\n" +
		"PASSED tests/test_a.py::test_old\n" +
		"============================== 2 passed in 0.02s ===============================\n" +
		"+ : '>>>>> End Test Output'\n"
	rep, err := grade.Grade(grade.Input{
		InstanceID: "owner__repo-1",
		Log:        testOutput,
		Repo:       "owner/repo", // in no table: the pytest parser
		FailToPass: []string{"tests/test_a.py::test_fixed"},
		PassToPass: []string{"tests/test_a.py::test_old"},
		Rules:      harness.V4,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.TestsStatus.Resolution())
	fmt.Println(string(rep.Encode()))
	// Output:
	// RESOLVED_FULL
	// {
	//     "owner__repo-1": {
	//         "patch_is_None": false,
	//         "patch_exists": true,
	//         "patch_successfully_applied": true,
	//         "resolved": true,
	//         "tests_status": {
	//             "FAIL_TO_PASS": {
	//                 "success": [
	//                     "tests/test_a.py::test_fixed"
	//                 ],
	//                 "failure": []
	//             },
	//             "PASS_TO_PASS": {
	//                 "success": [
	//                     "tests/test_a.py::test_old"
	//                 ],
	//                 "failure": []
	//             },
	//             "FAIL_TO_FAIL": {
	//                 "success": [],
	//                 "failure": []
	//             },
	//             "PASS_TO_FAIL": {
	//                 "success": [],
	//                 "failure": []
	//             }
	//         }
	//     }
	// }
}

func ExampleBuildRunReport() {
	report := grade.BuildRunReport(grade.RunInput{
		Rules:       harness.V4,
		Dataset:     []string{"a__b-1", "a__b-2", "a__b-3"},
		Predictions: map[string]grade.Prediction{"a__b-1": {}, "a__b-2": {EmptyPatch: true}},
		Reports:     map[string][]byte{"a__b-1": []byte(`{"a__b-1": {"resolved": true}}`)},
	})
	fmt.Println(grade.RunReportFileName("org/model", "run1"), report.ResolvedIDs, report.EmptyPatchIDs, report.IncompleteIDs)
	// Output:
	// org__model.run1.json [a__b-1] [a__b-2] [a__b-3]
}
