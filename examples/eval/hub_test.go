package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/dataset/hub"
	"github.com/swebox/swebox/swebench/dataset/hub/hubtest"
	"github.com/swebox/swebox/swebench/grade"
)

// demoHubName is the name the demo dataset is served under.
const demoHubName = "swebox/demo"

// demoParquetFiles are the demo split as Parquet files written by Apache
// Arrow's writer (swebench/dataset/testdata/parquetgen), with the test
// lists stored as JSON strings as on the Hub.
func demoParquetFiles(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	for _, n := range []string{"0000.parquet", "0001.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata", "hub", "demo", "test", n))
		require.NoError(t, err)
		out = append(out, b)
	}
	return out
}

// serveDemo starts a local Hub serving the demo split and points the
// environment at it, with an empty cache.
func serveDemo(t *testing.T) *hubtest.Server {
	t.Helper()
	srv := hubtest.NewServer(t)
	srv.SetSplit(demoHubName, "test", demoParquetFiles(t)...)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("SWEBOX_CACHE", t.TempDir())
	return srv
}

// rowFacts drops what only says how a row was stored (file, line, lists
// as strings or arrays).
func rowFacts(rows []dataset.Instance) []dataset.Instance {
	out := make([]dataset.Instance, len(rows))
	for i, r := range rows {
		out[i] = dataset.Instance{
			Repo: r.Repo, InstanceID: r.InstanceID, BaseCommit: r.BaseCommit, Patch: r.Patch, TestPatch: r.TestPatch,
			ProblemStatement: r.ProblemStatement, HintsText: r.HintsText, CreatedAt: r.CreatedAt, Version: r.Version,
			FailToPass: r.FailToPass, PassToPass: r.PassToPass, EnvironmentSetupCommit: r.EnvironmentSetupCommit,
			Difficulty: r.Difficulty, Image: r.Image, EvalScript: r.EvalScript, LogParser: r.LogParser, EvalType: r.EvalType,
			ImageAssets: r.ImageAssets, Extra: r.Extra,
		}
	}
	return out
}

// The Parquet fixtures hold the bundled demo dataset, row for row.
func TestDemoParquetIsCurrent(t *testing.T) {
	want := loadEmbeddedDataset(t)
	var got []dataset.Instance
	for i, b := range demoParquetFiles(t) {
		rows, err := dataset.ReadParquet(bytes.NewReader(b), int64(len(b)), "file"+string(rune('0'+i)))
		require.NoError(t, err)
		got = append(got, rows...)
	}
	assert.Equal(t, rowFacts(want), rowFacts(got),
		"testdata/hub/demo is stale: cd swebench/dataset/testdata/parquetgen && go run .")
}

// By name the command reads the same rows as from the JSONL file; a second
// load revalidates; with the Hub gone it reads the cache and says so.
func TestLoadRowsByName(t *testing.T) {
	srv := serveDemo(t)
	want := rowFacts(loadEmbeddedDataset(t))
	var out bytes.Buffer
	rows, err := loadRows(context.Background(), demoHubName, "test", "", &out)
	require.NoError(t, err)
	assert.Equal(t, want, rowFacts(rows))
	assert.Equal(t, "dataset swebox/demo (split test): 7 rows, downloaded 2 of 2 Parquet files\n", out.String(),
		"off a terminal no progress bar is drawn")

	out.Reset()
	rows, err = loadRows(context.Background(), demoHubName, "test", "", &out)
	require.NoError(t, err)
	assert.Equal(t, want, rowFacts(rows))
	assert.Equal(t, "dataset swebox/demo (split test): 7 rows, the cached copy is current\n", out.String())

	srv.Close()
	out.Reset()
	rows, err = loadRows(context.Background(), demoHubName, "test", "", &out)
	require.NoError(t, err)
	assert.Equal(t, want, rowFacts(rows))
	assert.Contains(t, out.String(), "dataset swebox/demo (split test): the Hub is unreachable (")
	assert.Contains(t, out.String(), "using the cached copy downloaded ")
}

// Local Parquet files need no Hub: a file, or <dir>/<split>.parquet.
func TestLoadRowsLocalParquet(t *testing.T) {
	t.Setenv("HF_ENDPOINT", "http://127.0.0.1:1") // nothing listens: any request would fail
	dir := t.TempDir()
	files := demoParquetFiles(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "test.parquet"), files[0], 0o644))
	var out bytes.Buffer
	rows, err := loadRows(context.Background(), dir, "test", "", &out)
	require.NoError(t, err)
	assert.Len(t, rows, 4)
	rows, err = loadRows(context.Background(), filepath.Join(dir, "test.parquet"), "test", "", &out)
	require.NoError(t, err)
	assert.Len(t, rows, 4)
	assert.Empty(t, out.String())
}

func TestRunByUnknownName(t *testing.T) {
	srv := serveDemo(t)
	type testCase struct {
		name string
		args []string
		want []string
	}
	for _, tc := range []testCase{
		{"unknown dataset", []string{"-d", "nobody/nothing"}, []string{
			"dataset nobody/nothing (split test): " + srv.URL + "/api/datasets/nobody/nothing/parquet/default/test: HTTP 404",
			"aliases: full, lite, verified"}},
		{"unknown split", []string{"-d", demoHubName, "--split", "dev"}, []string{`no split "dev" in config "default" (splits: test)`}},
		{"alias", []string{"-d", "lite"}, []string{"dataset SWE-bench/SWE-bench_Lite (split test): " + srv.URL + "/api/datasets/SWE-bench/SWE-bench_Lite/parquet/default/test: HTTP 404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append(tc.args, "-p", "gold", "--run_id", "r"), nil, &stdout, &stderr)
			assert.Equal(t, exitFailure, code)
			for _, w := range tc.want {
				assert.Contains(t, stderr.String(), w)
			}
		})
	}
}

func TestDownloadBar(t *testing.T) {
	var out bytes.Buffer
	b := &downloadBar{w: &out, tty: true}
	p := hub.Progress{Dataset: "SWE-bench/SWE-bench_Lite", File: 1, Files: 2, Total: 4 << 20}
	for _, done := range []int64{0, 1 << 20, 1 << 20, 4 << 20} {
		p.Done = done
		b.update(p)
	}
	b.finish()
	assert.Equal(t, "\r\033[Kdownloading SWE-bench/SWE-bench_Lite (file 1/2) [                              ] 0.0 MiB / 4.0 MiB"+
		"\r\033[Kdownloading SWE-bench/SWE-bench_Lite (file 1/2) [=======                       ] 1.0 MiB / 4.0 MiB"+
		"\r\033[Kdownloading SWE-bench/SWE-bench_Lite (file 1/2) [==============================] 4.0 MiB / 4.0 MiB"+
		"\r\033[K", out.String(), "an unchanged position is not redrawn; finish clears the line")

	out.Reset()
	quiet := &downloadBar{w: &out}
	quiet.update(p)
	quiet.finish()
	assert.Empty(t, out.String(), "nothing off a terminal")
	assert.Equal(t, "downloading x/y (file 1/1) 2.5 MiB", barLine(hub.Progress{Dataset: "x/y", File: 1, Files: 1, Done: 5 << 19, Total: -1}, 10))
}

// The demo by name, served as Parquet by a local Hub, gets the verdicts it
// gets from the JSONL file, instance for instance.
func TestDemoByNameSameVerdictsAsJSONL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo's containers twice, about a minute")
	}
	skipWithoutEngine(t)
	serveDemo(t)
	in, err := writeDemoInputs(t.TempDir())
	require.NoError(t, err)
	logDir := t.TempDir()
	runWith := func(runID string, datasetArgs ...string) grade.RunReport {
		t.Helper()
		args := append(append([]string{}, datasetArgs...), "-p", in.Predictions, "--repos", in.Repos, "--timeout", "10",
			"--run_id", runID, "--log_dir", logDir, "--report_dir", logDir, "--max_workers", "4")
		var out bytes.Buffer
		code := run(context.Background(), append(args, imageArgs()...), nil, &out, &out)
		t.Log(out.String())
		require.Equal(t, exitOK, code)
		data, err := os.ReadFile(filepath.Join(logDir, demoModel+"."+runID+".json"))
		require.NoError(t, err)
		var rep grade.RunReport
		require.NoError(t, rep.UnmarshalJSON(data))
		return rep
	}
	byFile := runWith("jsonl", "-d", in.Dataset)
	byName := runWith("hub", "-d", demoHubName, "--split", "test")

	assert.Equal(t, byFile.TotalInstances, byName.TotalInstances)
	assert.Equal(t, byFile.ResolvedIDs, byName.ResolvedIDs)
	assert.Equal(t, byFile.UnresolvedIDs, byName.UnresolvedIDs)
	assert.Equal(t, byFile.ErrorIDs, byName.ErrorIDs)
	assert.Equal(t, byFile.EmptyPatchIDs, byName.EmptyPatchIDs)
	assert.Equal(t, byFile.CompletedIDs, byName.CompletedIDs)
	assert.NotEmpty(t, byName.ResolvedIDs)
	assert.NotEmpty(t, byName.UnresolvedIDs)
	for _, id := range byFile.CompletedIDs {
		read := func(runID string) grade.InstanceReport {
			b, err := os.ReadFile(filepath.Join(logDir, "run_evaluation", runID, demoModel, id, "report.json"))
			require.NoError(t, err, id)
			var r grade.InstanceReport
			require.NoError(t, r.UnmarshalJSON(b), id)
			return r
		}
		assert.Equal(t, read("jsonl"), read("hub"), id)
	}
}
