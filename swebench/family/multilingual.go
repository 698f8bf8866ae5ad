package family

import (
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-bench Multilingual: tables keyed by pull request number (C, C++, Go,
// Java, JavaScript, TypeScript, PHP, Ruby, Rust), the official images, the
// official rule.
func init() {
	Register(&Family{
		Name:    "swe-bench-multilingual",
		Aliases: []string{"multilingual"},
		Title:   "SWE-bench Multilingual",
		Datasets: []Dataset{
			{ID: "SWE-bench/SWE-bench_Multilingual", Aliases: []string{"multilingual"}, Splits: []string{"test"}},
		},
		Upstream: Upstream{Repository: "SWE-bench/SWE-bench", Commit: "v4.0.1, v4.1.0, 490635b (5.0.2)"},
		Claim: func(inst dataset.Instance) Claim {
			if spec.TableOf(inst.Repo) == spec.TablePulls {
				return ClaimRepo
			}
			return ClaimNone
		},
	})
}
