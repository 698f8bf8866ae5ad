// Package imagebuild writes the images of SWE-bench instances as the
// official harness (v4.1.0, run_evaluation with --namespace none) builds
// them: the base, env and instance tiers with upstream's names (the env
// and base keys are sha256 prefixes of Python's str() of the setup script
// list and docker specs, as upstream computes them), Dockerfiles and
// setup scripts (setup_env.sh, setup_repo.sh) byte for byte, for every
// language upstream has: Python, JavaScript/TypeScript, Go, Rust, Java, PHP,
// Ruby and C/C++.
//
// The tables are generated from upstream's own (testdata/upstream/
// generate.py), and a test compares every file with what upstream's code
// writes for the same rows.
//
// Where upstream downloads a requirements file or an environment.yml at
// environment_setup_commit from raw.githubusercontent.com, a [Files] is
// read instead: [GitHub] is upstream's download, [LocalRepos] reads local
// git repositories, so that planning works offline with the same result.
//
// SWE-bench 5.0.2 builds a task repository's images instead (package
// swebench/taskrepo reads one): [NewTaskImage] is its ImageSpec (the
// task's Dockerfile, its task directory as the context, named
// sweb.eval.x86_64.<id>:<tag> for linux/amd64 on every host),
// [BuildTasks] its build_instance_images, [WriteTaskFiles] its dry run
// under logs/image_builder/, and [BeforeEvalImages] what its
// _build_before_eval builds before an evaluation with --task-repo. A test
// compares them with upstream's own 5.0.2 code run on
// testdata/taskrepo (testdata/upstream/generate_v502.py).
//
// Usage:
//
//	p, err := imagebuild.New(imagebuild.WithFiles(imagebuild.FirstOf(
//		imagebuild.LocalRepos("repos"), imagebuild.GitHub(nil, ""))))
//	if err != nil {
//		return err
//	}
//	s, err := p.For(ctx, inst)
//	if err != nil {
//		return err
//	}
//	for _, tier := range s.Tiers() {
//		// tier.Name, tier.Dockerfile, tier.ScriptName, tier.Script, tier.Dir
//	}
package imagebuild
