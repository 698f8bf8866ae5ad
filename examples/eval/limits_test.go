package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
)

// --memory, --cpus and --pids_limit set every sandbox's limits, and
// --grant_capabilities the families' capabilities, in the library's
// configuration; bad values are refused by name.
func TestLimitFlags(t *testing.T) {
	base := []string{"-p", "gold", "--run_id", "r"}
	o, err := parseRunFlags(defaultRunOptions(), append([]string{"--memory", "4g", "--cpus", "1.5", "--pids_limit", "256", "--grant_capabilities"}, base...))
	require.NoError(t, err)
	cfg := runConfig(o)
	assert.Equal(t, sandbox.Limits{Memory: 4 << 30, NanoCPUs: 1_500_000_000, PidsLimit: 256}, cfg.Limits)
	assert.True(t, cfg.GrantCapabilities)

	o, err = parseRunFlags(defaultRunOptions(), base)
	require.NoError(t, err)
	cfg = runConfig(o)
	assert.Equal(t, sandbox.Limits{}, cfg.Limits, "the sandbox defaults")
	assert.False(t, cfg.GrantCapabilities)

	for _, bad := range [][]string{{"--memory", "lots"}, {"--memory", "0"}, {"--cpus", "-1"}, {"--cpus", "x"}, {"--pids_limit", "0"}} {
		_, err := parseRunFlags(defaultRunOptions(), append(bad, base...))
		require.Error(t, err, "%v", bad)
		assert.Contains(t, err.Error(), bad[0][2:], "the error names the flag")
	}
}

// --dataset_config loads that config of a Hugging Face dataset, and is
// refused beside a local dataset.
func TestDatasetConfigFlag(t *testing.T) {
	srv := serveDemo(t)
	srv.SetConfigSplit(demoHubName, "other", "test", demoParquetFiles(t)[0])
	var out bytes.Buffer
	all, err := loadRows(context.Background(), demoHubName, "test", "", &out)
	require.NoError(t, err)
	some, err := loadRows(context.Background(), demoHubName, "test", "other", &out)
	require.NoError(t, err)
	require.NotEmpty(t, some)
	assert.Less(t, len(some), len(all), "config other holds the first file's rows only")
	_, err = loadRows(context.Background(), demoHubName, "test", "missing", &out)
	require.Error(t, err)

	o, err := parseRunFlags(defaultRunOptions(), []string{"--dataset_config", "other", "-p", "gold", "--run_id", "r"})
	require.NoError(t, err)
	assert.Equal(t, "other", o.DatasetConfig)
	_, err = loadRows(context.Background(), t.TempDir(), "test", "other", &out)
	require.ErrorContains(t, err, "--dataset_config other names a config of a Hugging Face dataset")
}
