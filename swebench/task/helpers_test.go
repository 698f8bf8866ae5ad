package task_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/task"
)

// demo is the eval command's bundled demo, exported once per test binary.
type demo struct {
	dir, repos string
	rows       []dataset.Instance
	preds      map[string]dataset.Prediction
}

var (
	demoMu   sync.Mutex
	demoData demo
)

// loadDemo exports the demo once, and again when the test or benchmark
// whose directory held it has ended (a benchmark runs more than once).
func loadDemo(t testing.TB) demo {
	t.Helper()
	demoMu.Lock()
	defer demoMu.Unlock()
	if _, err := os.Stat(demoData.repos); demoData.repos == "" || err != nil {
		d := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
		rows, err := dataset.LoadDataset(filepath.Join(d.Dir, "dataset.jsonl"))
		require.NoError(t, err)
		preds, err := dataset.LoadPredictions(filepath.Join(d.Dir, "predictions.jsonl"))
		require.NoError(t, err)
		demoData = demo{dir: d.Dir, repos: d.Repos, rows: rows, preds: map[string]dataset.Prediction{}}
		for _, p := range preds {
			demoData.preds[p.InstanceID] = p
		}
	}
	return demoData
}

// demoTimeout bounds each eval script: one demo prediction spins forever.
const demoTimeout = 20 * time.Second

// evalConfig is the evaluator configuration the tests give both `eval`
// (swebench.Evaluate) and the tasks.
func evalConfig(d demo, c *sandbox.Client) swebench.Config {
	return swebench.Config{
		Dataset: d.rows, RepoSources: []string{d.repos}, Timeout: demoTimeout,
		Sandboxes: []*sandbox.Client{c}, MaxWorkers: 2,
	}
}

func newTasks(t testing.TB, d demo, c *sandbox.Client) *task.Tasks {
	t.Helper()
	tasks, err := task.New(context.Background(), task.Config{Eval: evalConfig(d, c), Dir: t.TempDir(), Feedback: task.FeedbackFull})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tasks.Close()) })
	return tasks
}

func stringReader(s string) *strings.Reader { return strings.NewReader(s) }

// taskSandboxes lists the ids of the sandboxes c's session has for task id.
func taskSandboxes(t testing.TB, c *sandbox.Client, id string) []string {
	t.Helper()
	objs, err := c.List(context.Background(), sandbox.ListRequest{Labels: map[string]string{task.LabelTask: id}})
	require.NoError(t, err)
	var ids []string
	for _, o := range objs {
		if o.Kind == sandbox.KindSandbox {
			ids = append(ids, o.ID)
		}
	}
	return ids
}
