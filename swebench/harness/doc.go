// Package harness is the vocabulary of the official SWE-bench harness: the
// facts that the other swebench packages share, each defined once here.
//
//   - the rule sets reproduced, [V4] (swebench 4.1.0) and [V5] (5.x);
//   - the evaluation modes, [ModeWorkspace] and [ModePrebuilt];
//   - the markers the eval script and the harness write into test_output.txt
//     and run_instance.log ([StartTestOutput], [EndTestOutput], ...);
//   - where the repository lives in the container, [RepoDir];
//   - the repositories graded fail-only ([FailOnly], FAIL_ONLY_REPOS);
//   - the log parser names ([ParserPytest], ...) and the parser of each
//     repository ([ParserForInstance], MAP_REPO_TO_PARSER);
//   - the names of the official instance images ([InstanceImage]).
//
// It imports the standard library only, so that spec, logparse, grade and
// swebench can all import it.
//
// Usage:
//
//	rules := harness.Rules("").OrDefault()          // harness.V5
//	failOnly := harness.FailOnly("eslint/eslint", rules) // true under v5
//	parser := harness.ParserForInstance("django/django", "django__django-11099")
//	image := harness.InstanceImage("django__django-11099", harness.DefaultNamespace, harness.DefaultTag)
//	_, _, _ = failOnly, parser, image
package harness
