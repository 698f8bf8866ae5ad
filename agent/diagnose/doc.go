// Package diagnose turns the results of package agent into short,
// actionable suggestions for a coding agent's next attempt: why a run
// failed or nearly failed ([Feedback]), and which function test cases
// failed and how ([TestFeedback]). Both are pure functions of their input.
//
//	res, err := m.RunPython(ctx, code, agent.RunOptions{})
//	if err != nil { ... }
//	for _, hint := range diagnose.Feedback(res) {
//		fmt.Println(hint)
//	}
package diagnose
