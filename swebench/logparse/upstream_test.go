//go:build upstream

package logparse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// TestUpstreamParsers runs the official harness's own parsers, from
// checkouts of SWE-bench/SWE-bench named by SWEBOX_SWEBENCH_V4 (v4.1.0) and
// SWEBOX_SWEBENCH_V5 (5.0.2), on every runner log under testdata and on
// generated logs, and compares each map with this package's under the
// matching rules:
//
//	git -C SWE-bench archive v4.1.0 swebench | tar -x -C /tmp/swebench-4.1.0
//	git -C SWE-bench archive v5.0.2 swebench | tar -x -C /tmp/swebench-5.0.2
//	SWEBOX_SWEBENCH_V4=/tmp/swebench-4.1.0 SWEBOX_SWEBENCH_V5=/tmp/swebench-5.0.2 \
//	  go test ./swebench/logparse/ -run TestUpstreamParsers
//
// It is built only with -tags upstream, because the checkouts are not part
// of this repository (so CI, which runs every test it builds, cannot run it); the
// differential test against testdata/official.py always runs.
func TestUpstreamParsers(t *testing.T) {
	releases := map[harness.Rules]string{harness.V4: os.Getenv("SWEBOX_SWEBENCH_V4"), harness.V5: os.Getenv("SWEBOX_SWEBENCH_V5")}
	if releases[harness.V4] == "" && releases[harness.V5] == "" {
		t.Fatal("set SWEBOX_SWEBENCH_V4 and/or SWEBOX_SWEBENCH_V5 to checkouts of the official harness to compare with its own parsers")
	}
	python, err := exec.LookPath("python3")
	require.NoError(t, err, "python3 runs the official parsers")
	var logs []string
	for _, pattern := range []string{"testdata/captures/*.log", "testdata/js/*.log", "testdata/java/*.log"} {
		paths, err := filepath.Glob(pattern)
		require.NoError(t, err)
		logs = append(logs, paths...)
	}
	type upstreamCase struct {
		Parser     string `json:"parser"`
		Log        string `json:"log"`
		InstanceID string `json:"instance_id"`
		Version    string `json:"version"`
	}
	var texts []string
	for _, path := range logs {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		texts = append(texts, string(raw))
	}
	r := rand.New(rand.NewSource(5))
	for range 300 {
		texts = append(texts, randomLog(r))
	}
	var cases []upstreamCase
	for _, text := range texts {
		for _, name := range logparse.Names() {
			targets := dispatchTargets[name]
			if len(targets) == 0 {
				targets = []diffTarget{{}}
			}
			for _, target := range targets {
				cases = append(cases, upstreamCase{name, text, target.InstanceID, target.Version})
			}
		}
	}
	in, err := json.Marshal(cases)
	require.NoError(t, err)
	for rules, dir := range releases {
		if dir == "" {
			continue
		}
		t.Run(string(rules), func(t *testing.T) {
			cmd := exec.Command(python, "testdata/upstream.py", dir)
			cmd.Stdin = bytes.NewReader(in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, stderr.String())
			var want []struct {
				Map     map[string]string `json:"map"`
				Error   string            `json:"error"`
				Missing bool              `json:"missing"`
			}
			require.NoError(t, json.Unmarshal(out, &want))
			require.Len(t, want, len(cases))
			compared, mismatches := 0, 0
			for i, c := range cases {
				if want[i].Missing {
					continue
				}
				got, err := logparse.ParseTarget(c.Parser, c.Log, rules, logparse.Target{InstanceID: c.InstanceID, Version: c.Version})
				if want[i].Error != "" {
					assert.True(t, errors.Is(err, logparse.ErrParserRaised), "%s %+v: upstream raised %s, got %v", c.Parser, c, want[i].Error, err)
					continue
				}
				require.NoError(t, err, c.Parser)
				gotMap := map[string]string{}
				for k, v := range got {
					gotMap[k] = string(v)
				}
				if !assert.Equal(t, want[i].Map, gotMap, "%s (%s, %s) on %q", c.Parser, c.InstanceID, c.Version, c.Log) {
					mismatches++
				}
				if mismatches > 10 {
					t.Fatal("too many mismatches")
				}
				compared++
			}
			t.Logf("%d parser runs compared with the official code", compared)
		})
	}
}
