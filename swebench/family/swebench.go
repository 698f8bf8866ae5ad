package family

import (
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-bench, Lite and Verified: the official Python tables, the official
// images, the official rule. A SWE-bench 5 row that names its image is
// SWE-bench's too, whatever its repository.
func init() {
	Register(&Family{
		Name:    "swe-bench",
		Aliases: []string{"swebench"},
		Title:   "SWE-bench (full, Lite, Verified)",
		Datasets: []Dataset{
			{ID: "SWE-bench/SWE-bench", Aliases: []string{"swe-bench", "swebench", "swe_bench", "full"}, Splits: []string{"dev", "test"}},
			{ID: "princeton-nlp/SWE-bench", Splits: []string{"dev", "test", "train"}},
			{ID: "SWE-bench/SWE-bench_Lite", Aliases: []string{"lite", "swe-bench-lite", "swebench-lite", "swe_bench_lite", "swe-bench_lite"}, Splits: []string{"dev", "test"}},
			{ID: "princeton-nlp/SWE-bench_Lite", Splits: []string{"dev", "test"}},
			{ID: "SWE-bench/SWE-bench_Verified", Aliases: []string{"verified"}, Splits: []string{"test"}},
			{ID: "princeton-nlp/SWE-bench_Verified", Splits: []string{"test"}},
		},
		Upstream: Upstream{Repository: "SWE-bench/SWE-bench", Commit: "v4.1.0, 490635b (5.0.2)"},
		Claim: func(inst dataset.Instance) Claim {
			switch {
			case inst.Image != "":
				return ClaimRow
			case spec.TableOf(inst.Repo) == spec.TablePython:
				return ClaimRepo
			}
			return ClaimNone
		},
	})
}
