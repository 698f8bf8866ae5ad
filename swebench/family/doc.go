// Package family is the registry of SWE task families: one file per family
// holds all of it — its names and published datasets, how its rows are
// recognised ([Claim]), how its prebuilt images are named, where its test
// commands and parser come from, its grading rule and what its containers
// need. Adding a family is one new file that calls [Register] from init,
// plus its tests.
//
// The facts the families share (parser names, markers, grading rule names,
// the official image naming) stay in swebench/harness; the official tables
// stay in swebench/spec, which the SWE-bench families name.
//
// Usage:
//
//	f, looksLike, err := family.Resolve(inst, family.Hint{Dataset: "SWE-bench/SWE-bench_Lite"})
//	if err != nil { ... }       // an unknown Hint.Family
//	if f == nil { ... }         // no family claims the row; looksLike may name some
//	ts, err := f.TestSpec(inst, spec.WithMode(harness.ModePrebuilt))
package family
