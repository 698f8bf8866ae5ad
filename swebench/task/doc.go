// Package task turns SWE-bench dataset rows into environments for agents:
// start a task's sandbox, let the agent work in /testbed, take its diff,
// grade it exactly as the evaluator grades a prediction, and reset the
// sandbox for the next rollout.
//
//	tasks, err := task.New(ctx, task.Config{Eval: swebench.Config{
//		Dataset: rows, RepoSources: []string{"/data/repos"},
//	}})
//	if err != nil {
//		return err
//	}
//	defer tasks.Close()
//	env, err := tasks.Start(ctx, "astropy__astropy-12907")
//	if err != nil {
//		return err
//	}
//	defer env.Close()
//	fmt.Println(env.Instance.ProblemStatement)
//	_, err = env.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "grep -rn separable ."}})
//	...
//	sub, err := env.Submit(ctx, nil) // env.Diff graded by swebench.Evaluate
//	fmt.Println(sub.Result.Outcome, sub.Report.Resolved)
//	_, err = env.Reset(ctx) // a new sandbox, made as Start made the first
//
// [Tasks.Start] makes the sandbox from swebench.Plan.Testbed, the evaluator's
// own description of an instance's sandbox before the model patch: the same
// image and hardening (no network, read-only root, capabilities dropped,
// limits), /testbed prepared the same way (a checkout at base_commit
// bind-mounted or copied in, or the official image's /testbed), but every
// command admitted. A client with sandbox.WithPool serves it from the warm
// pool. [Config].Spec can open egress.
//
// [Env.Diff] is the model patch (see [DiffCommand]). [Env.Submit] and
// [Tasks.Grade] grade a patch by calling swebench.Evaluate on that one
// prediction with the tasks' evaluator configuration, so report.json, the
// typed outcome and the logs are the evaluator's. [Env.Reset] never
// restores a used sandbox: it removes it and hands over a new one, made by
// Start's own code from inputs the agent cannot write, started ahead while
// the agent worked (Config.NoSpare turns that off). So nothing of one
// rollout reaches the next.
//
// [Env.Diff] runs git with a throwaway git directory and no configuration
// but its own, so the agent's hooks, fsmonitor, drivers and redirections in
// .git or HOME neither run nor steer it (see [DiffCommand]).
package task
