package dataset

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLoadDataset loads a SWE-bench-sized file: 2,294 rows with a
// 20 KB patch and a 20 KB problem statement each (about 92 MB).
func BenchmarkLoadDataset(b *testing.B) {
	dir := b.TempDir()
	var jl strings.Builder
	rows := make([]json.RawMessage, 0, 2294)
	for i := 0; i < 2294; i++ {
		r := map[string]any{
			"repo": "django/django", "instance_id": fmt.Sprintf("django__django-%d", i), "base_commit": strings.Repeat("a", 40),
			"patch": strings.Repeat("+ x = 'diff <b>'\n", 20000/17), "test_patch": "diff --git a/tests/t.py b/tests/t.py\n",
			"problem_statement": strings.Repeat("word \"quoted\" ", 20000/15), "version": "3.0",
			"FAIL_TO_PASS": `["test_a (x.Y)"]`, "PASS_TO_PASS": `["test_b (x.Y)", "test_c (x.Y)"]`,
		}
		raw, _ := json.Marshal(r)
		jl.Write(raw)
		jl.WriteByte('\n')
		rows = append(rows, raw)
	}
	arr, _ := json.Marshal(rows)
	files := map[string][]byte{"d.jsonl": []byte(jl.String()), "d.json": arr}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				ds, err := LoadDataset(p)
				if err != nil || len(ds) != 2294 {
					b.Fatal(err, len(ds))
				}
			}
		})
	}
}
