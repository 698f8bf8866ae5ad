// Package taskrepo reads a SWE-bench 5.0.2 task repository, the layout
// `swebench images build <task-repo>` and `swebench eval --task-repo` read:
//
//	sweb.yaml               datasets: [...] the repository publishes; splits: [...] (default [test])
//	tasks/<instance_id>/
//	    task.yaml           the row's metadata (repo, base_commit, version, split, datasets, image, ...)
//	    tests.json          FAIL_TO_PASS and PASS_TO_PASS
//	    gold.patch, test.patch, eval.sh, problem_statement.md, hints.md (optional)
//	    Dockerfile          the instance image, built with the task directory as its context
//
// A task becomes a [dataset.Instance] as upstream's load_task makes its row.
// A malformed sweb.yaml or task.yaml is a *dataset.InputError naming the
// file, line and field; [Repo.Check] reports what upstream's `swebench
// task check` calls errors, which its image build refuses to go past.
//
// Usage:
//
//	r, err := taskrepo.Open("swe-bench-tasks")
//	if err != nil {
//		return err
//	}
//	if err := r.Check(); err != nil {
//		return err
//	}
//	tasks, err := r.Select(nil, nil) // what images build builds by default
package taskrepo
