package family

import (
	"errors"
	"fmt"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-Gym: SWE-bench-shaped training rows over eleven repositories the
// official tables do not know, run in images its authors published under
// xingyaoww, named as the official ones but with "__" written "_s_".
// Nothing in a row says it is SWE-Gym's, so a row is the family's only by
// the dataset's name or Config.Family; a row of one of its repositories
// alone only looks like one.
func init() {
	Register(&Family{
		Name:  "swe-gym",
		Title: "SWE-Gym",
		Datasets: []Dataset{
			{ID: "SWE-Gym/SWE-Gym", Splits: []string{"train"}},
			{ID: "SWE-Gym/SWE-Gym-Lite", Splits: []string{"train"}},
		},
		Upstream:  Upstream{Repository: "SWE-Gym/SWE-Bench-Fork", Commit: "242429c188fcfd06aad13fce9a54d450470bf0ac"},
		Namespace: "xingyaoww",
		Image:     SWEGymImage,
		Claim: func(inst dataset.Instance) Claim {
			if sweGymRepos[strings.ToLower(inst.Repo)] {
				return ClaimLooksLike
			}
			return ClaimNone
		},
		Spec: func(inst dataset.Instance, opts ...spec.Option) (spec.TestSpec, error) {
			if sweGymRepos[strings.ToLower(inst.Repo)] {
				return spec.TestSpec{}, fmt.Errorf("%w: %s (SWE-Gym/SWE-Bench-Fork's MAP_REPO_VERSION_TO_SPECS)", ErrTableNotPorted, inst.Repo)
			}
			return spec.For(inst, opts...)
		},
	})
}

// SWEGymImage is the name of a SWE-Gym instance image:
// "{namespace}/sweb.eval.x86_64.{id}:{tag}" with "__" written "_s_" and
// the id lower-cased.
func SWEGymImage(instanceID, namespace, tag string) string {
	key := harness.LocalInstanceImage(strings.ReplaceAll(instanceID, "__", "_s_"), "x86_64", tag)
	if namespace == "" {
		return key
	}
	return namespace + "/" + key
}

// What porting SWE-Gym/SWE-Bench-Fork (242429c) takes, read from it: the
// fork is SWE-bench 2.0.13, so its eval.sh is not v4's: "set -xo
// pipefail", "git diff <base>" without -c core.fileMode=false, test files
// from the regex `--- a/(.*)`, and no start or end marker around the test
// command; get_logs_eval parses the whole log, takes the patch as applied
// only where "applied patch" occurs in it, and picks the parser by the
// repository it reads from the log's directory name (parse_log_pytest for
// all but pydantic, parse_log_pytest_pydantic). python/mypy's test command
// is the table's followed by "<case> or <case> ..." quoted, the [case X]
// names of the test patch. The tables are constants.py lines 1621-2020.

// ErrTableNotPorted is a row of a repository whose family's spec table
// swebox does not carry yet: its test command is unknown, so the row is
// not run in a guessed one.
var ErrTableNotPorted = errors.New("the family's spec table for this repository is not ported")

// sweGymRepos are the repositories SWE-Gym/SWE-Bench-Fork adds to
// MAP_REPO_VERSION_TO_SPECS (constants.py at 242429c), lower-cased as the
// fork keys them.
var sweGymRepos = map[string]bool{
	"python/mypy": true, "getmoto/moto": true, "conan-io/conan": true, "dask/dask": true,
	"project-monai/monai": true, "iterative/dvc": true, "bokeh/bokeh": true, "modin-project/modin": true,
	"spyder-ide/spyder": true, "hypothesisworks/hypothesis": true, "pydantic/pydantic": true,
	"pandas-dev/pandas": true, "facebookresearch/hydra": true, "dbt-labs/dbt-core": true,
}
