package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// The advice for missing prebuilt images names swebox's own way to build
// them as upstream does, with a command that runs when pasted: the run
// again with --namespace none on Docker, eval images build with --push on
// a cluster (whose nodes do not pull from this machine's engine).
func TestMissingImageAdvice(t *testing.T) {
	type testCase struct {
		name       string
		args       []string
		want, nope []string
	}
	cases := []testCase{
		{name: "docker", args: []string{"-d", "lite", "-p", "preds.jsonl", "--run_id", "r1", "-i", "a__b-1"},
			want: []string{"missing prebuilt images: swebench/sweb.eval.x86_64.a__b-1:latest.", "eval images build",
				"  " + commandLine("-d", "lite", "-p", "preds.jsonl", "--run_id", "r1", "-i", "a__b-1", "--namespace", "none") + "\n",
				"or use workspace mode"}},
		{name: "gold", args: []string{"-p", "gold", "--run_id", "r2"},
			want: []string{commandLine("-p", "gold", "--run_id", "r2", "--namespace", "none") + "\n"}},
		{name: "kubernetes", args: []string{"-d", "verified", "-p", "preds.jsonl", "--run_id", "r1", "-i", "a__b-1", "--kubeconfig", "k"},
			want: []string{"  " + commandLine("images", "build", "-d", "verified", "-i", "a__b-1", "--push", "REGISTRY/NAMESPACE") + "\n",
				"then rerun with --namespace REGISTRY/NAMESPACE"},
			nope: []string{"--namespace none"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseRunFlags(defaultRunOptions(), tc.args)
			assert.NoError(t, err)
			o.words = tc.args
			got := imageAdvice(harness.ModePrebuilt, []string{"swebench/sweb.eval.x86_64.a__b-1:latest"}, o)
			for _, w := range tc.want {
				assert.Contains(t, got, w)
			}
			for _, n := range tc.nope {
				assert.NotContains(t, got, n)
			}
		})
	}
}

// A run that builds images (--namespace none) and cannot download what
// upstream downloads is told the offline route, --repos.
func TestDownloadAdvice(t *testing.T) {
	err := fmt.Errorf("build images: %w", &imagebuild.DownloadError{URL: imagebuild.RawURL + "o/r/c/requirements.txt", Err: errors.New("dial tcp: no route to host")})
	assert.Contains(t, advice(err, defaultRunOptions()), "--repos DIR reads them from local clones")
	assert.Empty(t, advice(errors.New("other"), defaultRunOptions()))
}
