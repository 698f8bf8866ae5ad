package family_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/dataset/hub"
	"github.com/swebox/swebox/swebench/dataset/hub/hubtest"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// hubRow is the columns every family's Hub rows share, stored as the Hub's
// Parquet export stores them (test lists as JSON-encoded strings).
type hubRow struct {
	Repo       string `parquet:"repo"`
	InstanceID string `parquet:"instance_id"`
	BaseCommit string `parquet:"base_commit"`
	Patch      string `parquet:"patch"`
	TestPatch  string `parquet:"test_patch"`
	Problem    string `parquet:"problem_statement"`
	Hints      string `parquet:"hints_text"`
	CreatedAt  string `parquet:"created_at"`
	Version    string `parquet:"version"`
	FailToPass string `parquet:"FAIL_TO_PASS"`
	PassToPass string `parquet:"PASS_TO_PASS"`
	EnvCommit  string `parquet:"environment_setup_commit"`
}

func hubRowOf(t *testing.T, in dataset.Instance) hubRow {
	f2p, err := json.Marshal(in.FailToPass)
	require.NoError(t, err)
	p2p, err := json.Marshal(in.PassToPass)
	require.NoError(t, err)
	return hubRow{in.Repo, in.InstanceID, in.BaseCommit, in.Patch, in.TestPatch, in.ProblemStatement, in.HintsText,
		in.CreatedAt, in.Version, string(f2p), string(p2p), in.EnvironmentSetupCommit}
}

// rebenchInstallConfig is install_config as a Parquet struct column, the
// Hub's form of SWE-rebench's rows (a value the recipe lacks is null).
type rebenchInstallConfig struct {
	Python       *string  `parquet:"python,optional"`
	Install      *string  `parquet:"install,optional"`
	PreInstall   []string `parquet:"pre_install,list"`
	EvalCommands []string `parquet:"eval_commands,list"`
	PipPackages  []string `parquet:"pip_packages,list"`
	Packages     *string  `parquet:"packages,optional"`
	TestCmd      *string  `parquet:"test_cmd,optional"`
	LogParser    *string  `parquet:"log_parser,optional"`
}

type rebenchHubRow struct {
	hubRow
	InstallConfig rebenchInstallConfig `parquet:"install_config"`
}

type liveHubRow struct {
	hubRow
	TestCmds    []string `parquet:"test_cmds,list"`
	RebuildCmds []string `parquet:"rebuild_cmds,list"`
	PrintCmds   []string `parquet:"print_cmds,list"`
	LogParser   string   `parquet:"log_parser"`
	DockerImage string   `parquet:"docker_image"`
}

func parquetBytes[T any](t *testing.T, rows []T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// loadByName serves files as split of name on a local Hub and loads it by
// name, as eval --dataset_name does.
func loadByName(t *testing.T, name, split string, file []byte) []dataset.Instance {
	t.Helper()
	srv := hubtest.NewServer(t)
	srv.SetSplit(name, split, file)
	c, err := hub.New(hub.WithEndpoint(srv.URL), hub.WithCacheDir(t.TempDir()), hub.WithToken(""))
	require.NoError(t, err)
	res, err := c.Load(context.Background(), hub.Request{Name: name, Split: split})
	require.NoError(t, err)
	require.NotEmpty(t, res.Instances)
	return res.Instances
}

// SWE-rebench's rows, read by the name of its dataset or of a monthly
// leaderboard split from the Hub's Parquet form (install_config a struct
// column), give the fork's eval scripts as the JSONL fixtures do.
func TestRebenchLoadsByHubName(t *testing.T) {
	rows := loadRows(t, "testdata/rebench/rows.jsonl")
	var pq []rebenchHubRow
	for _, in := range rows {
		var ic struct {
			Python, Install, Packages *string
			TestCmd                   *string  `json:"test_cmd"`
			LogParser                 *string  `json:"log_parser"`
			PreInstall                []string `json:"pre_install"`
			EvalCommands              []string `json:"eval_commands"`
			PipPackages               []string `json:"pip_packages"`
		}
		require.NoError(t, json.Unmarshal(in.Extra["install_config"], &ic))
		pq = append(pq, rebenchHubRow{hubRowOf(t, in), rebenchInstallConfig{ic.Python, ic.Install, ic.PreInstall,
			ic.EvalCommands, ic.PipPackages, ic.Packages, ic.TestCmd, ic.LogParser}})
	}
	file := parquetBytes(t, pq)
	for _, c := range []struct{ name, split string }{
		{"nebius/SWE-rebench", "test"},
		{"nebius/SWE-rebench-leaderboard", family.RebenchLeaderboardSplits[0]},
		{"nebius/SWE-rebench-leaderboard", "2026_03"},
	} {
		t.Run(c.name+":"+c.split, func(t *testing.T) {
			loaded := loadByName(t, c.name, c.split, file)
			require.Len(t, loaded, len(rows))
			fam, ok := family.ForDataset(c.name)
			require.True(t, ok)
			assert.Equal(t, "swe-rebench", fam.Name)
			for _, in := range loaded {
				f, _, err := family.Resolve(in, family.Hint{Dataset: c.name})
				require.NoError(t, err)
				require.Equal(t, fam, f)
				ts, err := f.TestSpec(in, spec.WithNamespace(f.Namespace))
				require.NoError(t, err)
				want, err := os.ReadFile(filepath.Join("testdata/rebench/expected", in.InstanceID+".eval.sh"))
				require.NoError(t, err)
				assert.Equal(t, string(want), ts.EvalScript(spec.ScriptOptions{NoExitCode: true}), in.InstanceID)
				assert.Equal(t, harness.V4, ts.Rules)
			}
		})
	}
}

// SWE-bench-Live's rows, read by name from each split with their command
// lists as Parquet lists, give the same spec as the JSONL fixtures.
func TestLiveLoadsByHubName(t *testing.T) {
	rows := loadLiveRows(t)
	var pq []liveHubRow
	for _, in := range rows {
		var r liveHubRow
		r.hubRow = hubRowOf(t, in)
		for field, dst := range map[string]*[]string{"test_cmds": &r.TestCmds, "rebuild_cmds": &r.RebuildCmds, "print_cmds": &r.PrintCmds} {
			require.NoError(t, json.Unmarshal(in.Extra[field], dst))
		}
		r.LogParser = in.LogParser
		require.NoError(t, json.Unmarshal(in.Extra["docker_image"], &r.DockerImage))
		pq = append(pq, r)
	}
	file := parquetBytes(t, pq)
	for _, split := range []string{"full", "lite", "verified"} {
		t.Run(split, func(t *testing.T) {
			loaded := loadByName(t, "SWE-bench-Live/SWE-bench-Live", split, file)
			require.Len(t, loaded, len(rows))
			for i, in := range loaded {
				f, _, err := family.Resolve(in, family.Hint{Dataset: "SWE-bench-Live/SWE-bench-Live"})
				require.NoError(t, err)
				require.NotNil(t, f)
				require.Equal(t, "swe-bench-live", f.Name)
				got, err := f.TestSpec(in)
				require.NoError(t, err)
				want, err := f.TestSpec(rows[i])
				require.NoError(t, err)
				assert.Equal(t, want.EvalScript(spec.ScriptOptions{}), got.EvalScript(spec.ScriptOptions{}))
				assert.Equal(t, want.Image, got.Image)
				assert.Equal(t, family.GradingLive, got.Grading)
			}
		})
	}
}
