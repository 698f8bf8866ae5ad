package swebenchtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
)

// moduleRoot is the repository root: the nearest directory above the
// test's working directory (its package's, under go test) that holds
// go.mod. A test binary run elsewhere (a copy of the tree that its user can
// read, .ci/run's rootless Podman steps) finds the copy's.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the working directory")
		dir = parent
	}
}

// EvalBinEnv names a prebuilt eval command (the default build) that
// [BuildEval] returns instead of building one: where the tests run as a
// user without a Go toolchain (.ci/run's rootless Podman steps, as the
// engine's user).
const EvalBinEnv = "SWEBOX_TEST_EVAL_BIN"

// BuildEval builds the eval command into a temporary directory and returns
// its path, or returns $SWEBOX_TEST_EVAL_BIN when set. The default build has
// no Kubernetes backend: see [BuildEvalKube].
func BuildEval(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(EvalBinEnv); bin != "" {
		return bin
	}
	return buildEval(t)
}

// BuildEvalKube builds the eval command with the Kubernetes backend (the
// kube build tag), which --kubeconfig needs, and returns its path.
func BuildEvalKube(t testing.TB) string {
	t.Helper()
	return buildEval(t, "-tags", "kube")
}

func buildEval(t testing.TB, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "eval")
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, "./examples/eval")...)
	cmd.Dir = moduleRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "build the eval command: %s", out)
	return bin
}

// DemoRow is one line of the demo's dataset and predictions, kept as raw
// JSON so that replicating it changes nothing but the id.
type DemoRow struct {
	ID         string
	Instance   map[string]any
	Prediction map[string]any
	// Expected is the status the demo documents for its prediction, and
	// Shows what the instance demonstrates.
	Expected swebench.Status
	Shows    string
}

// Demo is the eval command's bundled demo, exported to files.
type Demo struct {
	Dir, Repos string
	Rows       []DemoRow
}

// ExportDemo runs `eval demo --export` and reads what it wrote, with each
// row's expected status from examples/eval/demo/instances/<id>/instance.json.
func ExportDemo(t testing.TB, bin string) Demo {
	t.Helper()
	d := Demo{Dir: filepath.Join(t.TempDir(), "demo")}
	out, err := exec.Command(bin, "demo", "--export", d.Dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	d.Repos = filepath.Join(d.Dir, "repos")
	preds := map[string]map[string]any{}
	for _, p := range readJSONL(t, filepath.Join(d.Dir, "predictions.jsonl")) {
		preds[p["instance_id"].(string)] = p
	}
	for _, inst := range readJSONL(t, filepath.Join(d.Dir, "dataset.jsonl")) {
		id := inst["instance_id"].(string)
		var meta struct {
			Expected swebench.Status `json:"expected"`
			Shows    string          `json:"shows"`
		}
		b, err := os.ReadFile(filepath.Join(moduleRoot(t), "examples", "eval", "demo", "instances", id, "instance.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &meta))
		require.NotEmpty(t, meta.Expected, "%s documents its expected status", id)
		d.Rows = append(d.Rows, DemoRow{ID: id, Instance: inst, Prediction: preds[id], Expected: meta.Expected, Shows: meta.Shows})
	}
	require.NotEmpty(t, d.Rows)
	return d
}

// Replicate writes n rows cycling through rows, each under a new id
// "<id>x<k>", as dataset.jsonl and predictions.jsonl in dir. It returns the
// paths and the expected status of every new id.
func Replicate(t testing.TB, dir string, rows []DemoRow, n int) (datasetPath, predsPath string, expected map[string]swebench.Status) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	datasetPath, predsPath = filepath.Join(dir, "dataset.jsonl"), filepath.Join(dir, "predictions.jsonl")
	var ds, ps strings.Builder
	expected = map[string]swebench.Status{}
	for k := range n {
		r := rows[k%len(rows)]
		id := fmt.Sprintf("%sx%d", r.ID, k)
		ds.WriteString(jsonWith(t, r.Instance, id) + "\n")
		ps.WriteString(jsonWith(t, r.Prediction, id) + "\n")
		expected[id] = r.Expected
	}
	require.NoError(t, os.WriteFile(datasetPath, []byte(ds.String()), 0o644))
	require.NoError(t, os.WriteFile(predsPath, []byte(ps.String()), 0o644))
	return datasetPath, predsPath, expected
}

func jsonWith(t testing.TB, m map[string]any, id string) string {
	t.Helper()
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	c["instance_id"] = id
	b, err := json.Marshal(c)
	require.NoError(t, err)
	return string(b)
}

func readJSONL(t testing.TB, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

// RunReport reads a run report <report_dir>/<model>.<run_id>.json.
func RunReport(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// IDs is a list of ids of a run report.
func IDs(rep map[string]any, key string) []string {
	var ids []string
	list, _ := rep[key].([]any)
	for _, v := range list {
		ids = append(ids, v.(string))
	}
	return ids
}
