package swebench_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

// TestGradeLog grades the real logs of testdata/gradelogs (see its
// generate.py) and checks the pinned verdicts, and the rules a log is read
// by: the regrade rule for logs without markers, the row's version choosing
// the parser, decoding by release.
func TestGradeLog(t *testing.T) {
	dir := filepath.Join("testdata", "gradelogs")
	rows, err := dataset.LoadDataset(filepath.Join(dir, "dataset.jsonl"))
	require.NoError(t, err)
	var expected map[string]bool
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &expected))
	byID := map[string]dataset.Instance{}
	for _, r := range rows {
		byID[r.InstanceID] = r
		log, err := os.ReadFile(filepath.Join(dir, "logs", r.InstanceID+".txt"))
		require.NoError(t, err)
		rep, err := swebench.GradeLog(swebench.GradeRequest{Instance: r, Log: log})
		require.NoError(t, err, r.InstanceID)
		assert.Equal(t, expected[r.InstanceID], rep.Resolved, r.InstanceID)
		assert.True(t, rep.PatchSuccessfullyApplied, r.InstanceID)
	}

	t.Run("a fresh log without markers is unusable", func(t *testing.T) {
		r := byID["django__django-900021"]
		log, err := os.ReadFile(filepath.Join(dir, "logs", r.InstanceID+".txt"))
		require.NoError(t, err)
		rep, err := swebench.GradeLog(swebench.GradeRequest{Instance: r, Log: log, Fresh: true})
		require.NoError(t, err)
		assert.False(t, rep.PatchSuccessfullyApplied)
		assert.Equal(t, grade.ReasonMissingMarkers, rep.Evaluation.Reason)
	})
	t.Run("next 1.27 reads Cypress, 1.26 Karma", func(t *testing.T) {
		r := byID["alibaba-fusion__next-90007"]
		log, err := os.ReadFile(filepath.Join(dir, "logs", r.InstanceID+".txt"))
		require.NoError(t, err)
		r.Version = "1.26"
		rep, err := swebench.GradeLog(swebench.GradeRequest{Instance: r, Log: log})
		require.NoError(t, err)
		assert.False(t, rep.Resolved)
	})
	t.Run("invalid UTF-8", func(t *testing.T) {
		r := byID["psf__requests-90004"]
		log, err := os.ReadFile(filepath.Join(dir, "logs", r.InstanceID+".txt"))
		require.NoError(t, err)
		log = append(log, 0xff, '\n')
		_, err = swebench.GradeLog(swebench.GradeRequest{Instance: r, Log: log, Rules: harness.V4})
		assert.ErrorIs(t, err, grade.ErrInvalidUTF8)
		rep, err := swebench.GradeLog(swebench.GradeRequest{Instance: r, Log: log, Rules: harness.V5})
		require.NoError(t, err)
		assert.True(t, rep.Resolved)
	})
	t.Run("unknown rules", func(t *testing.T) {
		_, err := swebench.GradeLog(swebench.GradeRequest{Instance: byID["psf__requests-90004"], Rules: "v3"})
		var ce *swebench.ConfigError
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, "Rules", ce.Field)
		assert.ErrorIs(t, err, swebench.ErrConfig)
	})
}
