package family

import (
	"encoding/json"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
)

// PolyBenchDockerfile is a SWE-PolyBench row's own Dockerfile (its
// Dockerfile field), which the harness builds over a checkout of the
// repository at base_commit when no prebuilt image exists
// (run_evaluation.py, DockerManager.docker_build); false for a row that is
// not PolyBench's or carries none.
func PolyBenchDockerfile(inst dataset.Instance) (string, bool) {
	if !isPolyBenchRow(inst) {
		return "", false
	}
	var df string
	if err := json.Unmarshal(inst.Extra["Dockerfile"], &df); err != nil || strings.TrimSpace(df) == "" {
		return "", false
	}
	return df, true
}

// PolyBenchLocalImage is the name the harness gives the image it builds
// from a row's Dockerfile: polybench_<language>_<instance id>, lower case
// (run_evaluation.py's image_id).
func PolyBenchLocalImage(inst dataset.Instance) string {
	var lang string
	_ = json.Unmarshal(inst.Extra["language"], &lang)
	return strings.ToLower("polybench_" + lang + "_" + inst.InstanceID)
}
