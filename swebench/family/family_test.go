package family_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/spec"
)

// Every alias the dataset loader knows names a dataset of a registered
// family, the family SWE-bench's tables give its repositories.
func TestDatasetAliasesBelongToFamilies(t *testing.T) {
	for _, alias := range []string{"swe-bench", "swebench", "swe_bench", "full", "lite", "swe-bench-lite", "swebench-lite",
		"swe_bench_lite", "swe-bench_lite", "verified", "multimodal", "multilingual"} {
		id, ok := dataset.HubAlias(alias)
		require.True(t, ok, alias)
		f, ok := family.ForDataset(id)
		require.True(t, ok, "%s (%s) has no family", alias, id)
		g, ok := family.ForDataset(alias)
		require.True(t, ok, "alias %s has no family", alias)
		assert.Same(t, f, g, alias)
	}
}

// Each of SWE-bench's repositories is claimed by exactly the family whose
// table knows it, and the family's spec is the official one.
func TestSWEBenchFamiliesClaimTheirTables(t *testing.T) {
	type testCase struct {
		repo, family string
		claim        family.Claim
	}
	for _, tc := range []testCase{
		{"django/django", "swe-bench", family.ClaimRepo},
		{"sympy/sympy", "swe-bench", family.ClaimRepo},
		{"chartjs/Chart.js", "swe-bench-multimodal", family.ClaimRepo},
		{"Automattic/wp-calypso", "swe-bench-multimodal", family.ClaimRepo},
		{"caddyserver/caddy", "swe-bench-multilingual", family.ClaimRepo},
		{"babel/babel", "swe-bench-multilingual", family.ClaimRepo},
	} {
		t.Run(tc.repo, func(t *testing.T) {
			inst := dataset.Instance{InstanceID: "x__y-1", Repo: tc.repo, BaseCommit: "abcd", Version: "1"}
			f, looks := family.Of(inst)
			require.NotNil(t, f)
			assert.Empty(t, looks)
			assert.Equal(t, tc.family, f.Name)
			assert.Equal(t, tc.claim, f.Claim(inst))
		})
	}
	// Every repository of the Python tables: SWE-bench's, with spec.For's spec.
	for _, repo := range spec.Repos() {
		inst := dataset.Instance{InstanceID: "x__y-1", Repo: repo, BaseCommit: "abcd", Version: "0.0-none"}
		f, _ := family.Of(inst)
		require.NotNil(t, f, repo)
		assert.Equal(t, "swe-bench", f.Name, repo)
		want, werr := spec.For(inst)
		got, gerr := f.TestSpec(inst)
		assert.Equal(t, werr, gerr, repo)
		want.Grading = got.Grading
		assert.Equal(t, want, got, repo)
	}
}

// A SWE-bench 5 row claims itself by its image, whatever
// its repository; a row nothing claims resolves to no family.
func TestClaimByRowAndNone(t *testing.T) {
	v5 := dataset.Instance{InstanceID: "acme__widget-1", Repo: "acme/widget", BaseCommit: "abcd", Image: "acme/widget:1", EvalScript: "#!/bin/bash\n"}
	f, _ := family.Of(v5)
	require.NotNil(t, f)
	assert.Equal(t, "swe-bench", f.Name)
	assert.Equal(t, family.ClaimRow, f.Claim(v5))
	assert.Equal(t, "acme/widget:1", f.ImageName(v5, "swebench", "latest"))

	own := dataset.Instance{InstanceID: "acme__widget-2", Repo: "acme/widget", BaseCommit: "abcd"}
	f, looks := family.Of(own)
	assert.Nil(t, f)
	assert.Empty(t, looks)
	f, _, err := family.Resolve(own, family.Hint{Dataset: "my-rows.jsonl"})
	require.NoError(t, err)
	assert.Nil(t, f)
	_, _, err = family.Resolve(own, family.Hint{Family: "no-such-family"})
	assert.ErrorIs(t, err, family.ErrUnknownFamily)
	f, _, err = family.Resolve(own, family.Hint{Family: "SWEBench"})
	require.NoError(t, err)
	assert.Equal(t, "swe-bench", f.Name)
}

// Register refuses a second family under a taken name or dataset.
func TestRegisterRefusesDuplicates(t *testing.T) {
	claim := func(dataset.Instance) family.Claim { return family.ClaimNone }
	assert.Panics(t, func() { family.Register(&family.Family{Name: "swe-bench", Claim: claim}) })
	assert.Panics(t, func() {
		family.Register(&family.Family{Name: "test-dup-dataset", Claim: claim, Datasets: []family.Dataset{{ID: "swe-bench/swe-bench_lite"}}})
	})
	assert.Panics(t, func() { family.Register(&family.Family{Name: "test-no-claim"}) })
}
