// Package grade grades SWE-bench instances from their test output exactly
// as the official harness does (swebench/harness/grading.py and
// reporting.py), under the v4.1.0 or the v5 rules, and writes the official
// report.json and run report byte for byte.
//
// One instance:
//
//	rep, err := grade.Grade(grade.Input{
//		InstanceID: inst.ID,
//		Log:        testOutput, // test_output.txt
//		Repo:       inst.Repo,  // picks the parser unless Parser is set
//		FailToPass: inst.FailToPass,
//		PassToPass: inst.PassToPass,
//		FailOnly:   harness.FailOnly(inst.Repo, harness.V5),
//		Rules:      harness.V5,
//	})
//	if err != nil {
//		// the official harness writes no report: an error instance
//	}
//	os.WriteFile("report.json", rep.Encode(), 0o644)
//
// [ParseTestOutput] exposes the log reading alone: which text is graded
// (after the first start marker, up to the next start or end marker), why
// a log is unusable ([Reason]), the v5 exit code and forgery notes.
// [GradeTests] applies the per-test rules and [TestsStatus.Resolution] the
// FULL / PARTIAL / NO rule.
//
// The run summary is computed by [BuildRunReport] from the dataset ids,
// the predictions and the report.json files found, written by
// [RunReport.Encode] under [RunReportFileName]; [MergeRunReports] combines
// shards.
//
// Beyond the official harness, and never changing its verdict: [Notes]
// record forged markers (v5) and disagreements found by a [CountCheck]
// under the report key "swebox", omitted when empty.
package grade
