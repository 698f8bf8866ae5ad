// Package spec turns a SWE-bench instance into a test spec: the image, the
// test command with its directives, the log parser name, the eval type and
// the eval script, as the official harness derives them.
//
// The official per-repository, per-version tables of the SWE-bench Python
// repositories are built in ([Repos], [Versions]), and so are those of the
// Go, Rust, JavaScript, Java, PHP, Ruby and C/C++ repositories of SWE-bench
// Multilingual and Multimodal (test and build commands, [ScriptCommon], no
// directives; a version missing from a table keyed by pull request is
// [ErrUnknownVersion]); a repository in no table gets "pytest -rA <test
// files>" and the pytest parser; rows that carry their own eval_script and
// log_parser (v5 datasets) use them; an override file adjusts any of it for
// custom datasets ([LoadOverrides]).
//
// [TestSpec.EvalScript] writes eval.sh. For Python repositories it is the
// official v4.1.0 script byte for byte (with [ScriptOptions].NoExitCode;
// by default the test command's exit status is recorded as v5 records it),
// and for the others the official common script likewise.
// [PatchCommands] lists the official patch-apply fallbacks.
//
// Usage:
//
//	images, err := spec.LoadImageMap("images.json")
//	if err != nil {
//		return err
//	}
//	s, err := spec.For(inst, spec.WithMode(harness.ModeWorkspace), spec.WithImages(images))
//	if err != nil {
//		return err
//	}
//	script := s.EvalScript(spec.ScriptOptions{})
//	attempts, _ := spec.PatchCommands(harness.V5, spec.ContainerPatchPath)
//	// run attempts in s.Image at harness.RepoDir, then script; parse the log
//	// with the parser named s.Parser.
package spec
