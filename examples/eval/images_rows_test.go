package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench/family"
)

// eval images build -d FILE builds a SWE-PolyBench row's image from the
// row's own Dockerfile (FROM a local image, no network), over the
// repository from --repos, under the name eval gives the row's image and
// the harness's local name; a row whose Dockerfile fails is reported with
// its step, and the command fails. --dry_run writes the Dockerfiles only.
func TestImagesBuildFromRowDockerfile(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	sources := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(p.Sources, "swebox-test__calc"), filepath.Join(sources, "yt-dlp__yt-dlp")))
	suffix := strings.ToLower(strings.NewReplacer(".", "", "_", "-").Replace(c.Session()[len(c.Session())-8:]))
	goodID, badID := "yt-dlp__yt-dlp-"+suffix+"-1", "yt-dlp__yt-dlp-"+suffix+"-2"
	row := func(id, dockerfile string) string {
		b, err := json.Marshal(map[string]any{
			"instance_id": id, "repo": "yt-dlp/yt-dlp", "base_commit": p.Base, "patch": swebenchtest.Gold, "test_patch": swebenchtest.TestPatch,
			"language": "Python", "Dockerfile": dockerfile, "test_command": "python3 -m pytest -rA tests",
			"F2P": "['tests/test_add.py:None:test_add']", "P2P": "[]",
		})
		require.NoError(t, err)
		return string(b) + "\n"
	}
	dir := t.TempDir()
	ds := filepath.Join(dir, "polybench.jsonl")
	require.NoError(t, os.WriteFile(ds, []byte(
		row(goodID, "FROM "+testenv.Image()+"\nWORKDIR /srv/calc\nCOPY . .\nRUN test -f calc.py\n")+
			row(badID, "FROM "+testenv.Image()+"\nRUN exit 7\n")), 0o644))
	image := family.PolyBenchImage(goodID, "ghcr.io/timesler", "latest")
	local := "polybench_python_" + goodID
	t.Cleanup(func() {
		for _, img := range []string{image, local} {
			_ = c.RemoveImage(context.Background(), img)
		}
	})

	t.Run("dry run", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"images", "build", "-d", ds, "--dry_run", "--dir", dir}, nil, &stdout, &stderr)
		require.Equal(t, exitOK, code, stderr.String())
		df, err := os.ReadFile(filepath.Join(dir, "logs/build_images/rows", badID, "Dockerfile"))
		require.NoError(t, err)
		assert.Equal(t, "FROM "+testenv.Image()+"\nRUN exit 7\n", string(df))
		has, err := c.HasImage(context.Background(), image)
		require.NoError(t, err)
		assert.False(t, has, "a dry run builds nothing")
	})

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"images", "build", "-d", ds, "--repos", sources, "--dir", dir}, nil, &stdout, &stderr)
	assert.Equal(t, exitFailure, code, stderr.String())
	assert.Contains(t, stdout.String(), goodID+"\t"+image+"\n")
	assert.Contains(t, stdout.String(), badID+"\timage_build_failed\trow "+badID)
	assert.Contains(t, stdout.String(), "RUN exit 7")
	assert.Contains(t, stderr.String(), "1 of 2 rows' own Dockerfiles did not build")
	for _, img := range []string{image, local} {
		has, err := c.HasImage(context.Background(), img)
		require.NoError(t, err)
		assert.True(t, has, img)
	}
	assert.FileExists(t, filepath.Join(dir, "logs/build_images/rows", goodID, "build.log"))
}
