package family

import (
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-bench Multimodal: the dev split's JavaScript tables, keyed by release
// line, and wp-calypso, whose commands come from the test patch. The test
// split's rows are SWE-bench 5 rows, which swe-bench claims by their image.
func init() {
	Register(&Family{
		Name:    "swe-bench-multimodal",
		Aliases: []string{"multimodal"},
		Title:   "SWE-bench Multimodal",
		Datasets: []Dataset{
			{ID: "SWE-bench/SWE-bench_Multimodal", Aliases: []string{"multimodal"}, Splits: []string{"dev", "test"}},
			{ID: "princeton-nlp/SWE-bench_Multimodal", Splits: []string{"dev", "test"}},
		},
		Upstream: Upstream{Repository: "SWE-bench/SWE-bench", Commit: "v4.1.0, 490635b (5.0.2)"},
		Claim: func(inst dataset.Instance) Claim {
			if spec.TableOf(inst.Repo) == spec.TableReleases {
				return ClaimRepo
			}
			return ClaimNone
		},
	})
}
