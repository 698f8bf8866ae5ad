// Command parquetgen writes the Parquet fixtures of swebox's dataset tests
// with Apache Arrow's Go Parquet writer (a port of the C++ writer behind
// pyarrow, which writes the Hugging Face Hub's Parquet export), so the
// reader under test (parquet-go) reads files written by another
// implementation. Run from this directory:
//
//	go run .
//
// It rewrites:
//   - ../parquet/rows.parquet from ../parquet/rows.jsonl (rows shaped like
//     SWE-bench's, plus columns of other types);
//   - ../../../../examples/eval/testdata/hub/demo/test/000{0,1}.parquet, the
//     eval demo's dataset split in two files, its test lists stored as
//     JSON-encoded strings as on the Hub.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func str(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true}
}

// swebenchFields are the official columns, all strings, in the Hub's order.
var swebenchFields = []arrow.Field{
	str("repo"), str("instance_id"), str("base_commit"), str("patch"), str("test_patch"),
	str("problem_statement"), str("hints_text"), str("created_at"), str("version"),
	str("FAIL_TO_PASS"), str("PASS_TO_PASS"), str("environment_setup_commit"),
}

func main() {
	rowsSchema := arrow.NewSchema(append(append([]arrow.Field{}, swebenchFields...),
		str("difficulty"),
		arrow.Field{Name: "stars", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		arrow.Field{Name: "archived", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		arrow.Field{Name: "meta", Type: arrow.StructOf(
			arrow.Field{Name: "lang", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "files", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		), Nullable: true},
		str("image"), str("eval_script"), str("log_parser"), str("eval_type"), str("image_assets"),
	), nil)
	rows := readJSONL("../parquet/rows.jsonl", false)
	write("../parquet/rows.parquet", rowsSchema, rows, 2)

	demo := readJSONL("../../../../examples/eval/demo/dataset.jsonl", true)
	demoSchema := arrow.NewSchema(swebenchFields, nil)
	half := (len(demo) + 1) / 2
	dir := "../../../../examples/eval/testdata/hub/demo/test"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	write(filepath.Join(dir, "0000.parquet"), demoSchema, demo[:half], 1000)
	write(filepath.Join(dir, "0001.parquet"), demoSchema, demo[half:], 1000)
}

// readJSONL reads rows; hubLists re-encodes FAIL_TO_PASS and PASS_TO_PASS
// lists as the JSON strings the Hub stores (Python's json.dumps spacing).
func readJSONL(path string, hubLists bool) []map[string]any {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			log.Fatalf("%s: %v", path, err)
		}
		if hubLists {
			for _, k := range []string{"FAIL_TO_PASS", "PASS_TO_PASS"} {
				if l, ok := m[k].([]any); ok {
					m[k] = pyDumps(l)
				}
			}
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	return out
}

// pyDumps is Python's json.dumps of a list of strings.
func pyDumps(l []any) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, s := range l {
		if i > 0 {
			b.WriteString(", ")
		}
		enc, _ := json.Marshal(s)
		b.Write(enc)
	}
	b.WriteByte(']')
	return b.String()
}

// write stores rows in a Snappy-compressed, dictionary-encoded Parquet file
// with the Arrow schema embedded, as pyarrow writes by default, in row
// groups of rowGroup rows.
func write(path string, schema *arrow.Schema, rows []map[string]any, rowGroup int64) {
	js, err := json.Marshal(rows)
	if err != nil {
		log.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, bytes.NewReader(js))
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	defer rec.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDictionaryDefault(true),
		parquet.WithMaxRowGroupLength(rowGroup),
		parquet.WithCreatedBy("parquet-cpp-arrow (arrow-go) via swebox parquetgen"),
	)
	w, err := pqarrow.NewFileWriter(schema, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote %s: %d rows, %d bytes\n", path, len(rows), buf.Len())
}
