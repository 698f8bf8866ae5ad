package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The dry run writes, for a row of a dataset file, the files upstream's
// own code writes (the golden files of swebench/imagebuild).
func TestImagesBuildDryRunWritesUpstreamsFiles(t *testing.T) {
	golden := "../../swebench/imagebuild/testdata/golden/v410/"
	var blobs map[string]string
	data, err := os.ReadFile(golden + "blobs.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &blobs); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // path under dir → text
	f, err := os.Open(golden + "cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var c map[string]any
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		row := c["row"].(map[string]any)
		if c["kind"] != "dataset" || row["instance_id"] != "psf__requests-2317" {
			continue
		}
		dir := func(kind, key string) string {
			return filepath.Join("logs/build_images", kind, strings.ReplaceAll(c[key].(string), ":", "__"))
		}
		want[filepath.Join(dir("base", "base_key"), "Dockerfile")] = blobs[c["base/Dockerfile"].(string)]
		want[filepath.Join(dir("env", "env_key"), "Dockerfile")] = blobs[c["env/Dockerfile"].(string)]
		want[filepath.Join(dir("env", "env_key"), "setup_env.sh")] = blobs[c["env/setup_env.sh"].(string)]
		want[filepath.Join(dir("instances", "instance_key"), "Dockerfile")] = blobs[c["instances/Dockerfile"].(string)]
		want[filepath.Join(dir("instances", "instance_key"), "setup_repo.sh")] = blobs[c["instances/setup_repo.sh"].(string)]
	}
	if len(want) != 5 {
		t.Fatalf("golden files of the example rows: %d", len(want))
	}

	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"images", "build", "-d", "../../swebench/dataset/testdata/example.jsonl",
		"-i", "psf__requests-2317", "--dry_run", "--dir", out}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got := map[string]string{}
	err = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(out, p)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, text := range want {
		if got[p] != text {
			t.Errorf("%s differs from upstream's (present: %v)", p, got[p] != "")
		}
	}
	if len(got) != len(want) {
		t.Errorf("wrote %d files, upstream %d: %v", len(got), len(want), stdout.String())
	}
}
