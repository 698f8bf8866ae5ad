package parquet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/swebox/swebox/swebench/dataset"
)

// benchRow is a SWE-bench row as the Hub stores it: every column a string.
type benchRow struct {
	Repo             string `parquet:"repo" json:"repo"`
	InstanceID       string `parquet:"instance_id" json:"instance_id"`
	BaseCommit       string `parquet:"base_commit" json:"base_commit"`
	Patch            string `parquet:"patch" json:"patch"`
	TestPatch        string `parquet:"test_patch" json:"test_patch"`
	ProblemStatement string `parquet:"problem_statement" json:"problem_statement"`
	Version          string `parquet:"version" json:"version"`
	FailToPass       string `parquet:"FAIL_TO_PASS" json:"FAIL_TO_PASS"`
	PassToPass       string `parquet:"PASS_TO_PASS" json:"PASS_TO_PASS"`
}

// BenchmarkLoadDatasetParquet loads the rows of BenchmarkLoadDataset
// (2,294 rows, a 20 KB patch and a 20 KB problem statement each) from
// JSONL and from Snappy-compressed Parquet, the Hub's format.
func BenchmarkLoadDatasetParquet(b *testing.B) {
	dir := b.TempDir()
	rows := make([]benchRow, 2294)
	var jl strings.Builder
	for i := range rows {
		rows[i] = benchRow{
			Repo: "django/django", InstanceID: fmt.Sprintf("django__django-%d", i), BaseCommit: strings.Repeat("a", 40),
			Patch: strings.Repeat("+ x = 'diff <b>'\n", 20000/17), TestPatch: "diff --git a/tests/t.py b/tests/t.py\n",
			ProblemStatement: strings.Repeat("word \"quoted\" ", 20000/15), Version: "3.0",
			FailToPass: `["test_a (x.Y)"]`, PassToPass: `["test_b (x.Y)", "test_c (x.Y)"]`,
		}
		raw, _ := json.Marshal(rows[i])
		jl.Write(raw)
		jl.WriteByte('\n')
	}
	jsonl := filepath.Join(dir, "d.jsonl")
	file := filepath.Join(dir, "d.parquet")
	if err := os.WriteFile(jsonl, []byte(jl.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := pq.WriteFile(file, rows, pq.Compression(&pq.Snappy)); err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{jsonl, file} {
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(p), func(b *testing.B) {
			b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ds, err := dataset.LoadDataset(p)
				if err != nil || len(ds) != len(rows) {
					b.Fatal(err, len(ds))
				}
			}
		})
	}
}
