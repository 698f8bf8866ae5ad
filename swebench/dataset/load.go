package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// LoadDataset reads instances from a JSON array file, a JSONL file, a
// Parquet file ([ReadParquet]; the program must link the reader, see
// [ParquetImport]), or a directory holding such files (read in
// name order, non-recursively, so the result is deterministic). Rows are
// checked as they are read: every error is an *InputError naming file, line
// (the row, in a Parquet file) and field; up to 20 are reported at once,
// joined with errors.Join.
//
// Hugging Face dataset names are fetched by package hub; here a name or a
// save_to_disk (Arrow) directory gives an error matching
// ErrUnsupportedFormat that says what to do.
//
// Across the whole result, a repeated instance id, or two ids that differ
// only in letter case, is an error matching ErrDuplicateID naming both rows.
func LoadDataset(path string) ([]Instance, error) {
	files, err := datasetFiles(path)
	if err != nil {
		return nil, err
	}
	var (
		out  []Instance
		errs errorList
	)
	for _, file := range files {
		readRecords(file, false, &errs, func(rec record) error {
			in, ferr := decodeInstance(rec.raw)
			if ferr != nil {
				return recordError(file, rec, ferr)
			}
			in.Source = Position{File: file, Line: rec.line}
			out = append(out, in)
			return nil
		})
		if errs.full() {
			break
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	if err := CheckUniqueIDs(out); err != nil {
		return nil, err
	}
	return out, nil
}

// LoadDatasetSplit loads one split. A file is a single split already and is
// read as is (as the official harness does). In a directory it looks for
// <dir>/<split>.jsonl, <dir>/<split>.json, <dir>/<split>.parquet, then a
// <dir>/<split>/ directory of such files; otherwise the error lists the
// splits it can see.
func LoadDatasetSplit(path, split string) ([]Instance, error) {
	if split == "" {
		return LoadDataset(path)
	}
	if strings.ContainsAny(split, `/\`) || split == "." || split == ".." {
		return nil, fmt.Errorf("load split %q: not a split name", split)
	}
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return LoadDataset(path)
	}
	for _, name := range []string{split + ".jsonl", split + ".json", split + ".parquet"} {
		p := filepath.Join(path, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return LoadDataset(p)
		}
	}
	sub := filepath.Join(path, split)
	if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
		return LoadDataset(sub)
	}
	if err := huggingFaceDir(path); err != nil {
		return nil, err
	}
	var seen []string
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		n := e.Name()
		switch {
		case e.IsDir() && !strings.HasPrefix(n, "."):
			seen = append(seen, n)
		case strings.HasSuffix(n, ".jsonl"):
			seen = append(seen, strings.TrimSuffix(n, ".jsonl"))
		case strings.HasSuffix(n, ".json"):
			seen = append(seen, strings.TrimSuffix(n, ".json"))
		case strings.HasSuffix(n, ".parquet"):
			seen = append(seen, strings.TrimSuffix(n, ".parquet"))
		}
	}
	return nil, fmt.Errorf("load split %q from %s: no %s.jsonl, %s.json, %s.parquet or %s/ (found: %s): %w",
		split, path, split, split, split, split, strings.Join(seen, ", "), fs.ErrNotExist)
}

// hfName matches what could be a Hugging Face dataset name such as
// "SWE-bench/SWE-bench_Lite", or one of the official harness's aliases.
var hfName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$`)

var hfAliases = map[string]string{
	"swe-bench":      "SWE-bench/SWE-bench",
	"swebench":       "SWE-bench/SWE-bench",
	"swe_bench":      "SWE-bench/SWE-bench",
	"full":           "SWE-bench/SWE-bench",
	"lite":           "SWE-bench/SWE-bench_Lite",
	"swe-bench-lite": "SWE-bench/SWE-bench_Lite",
	"swebench-lite":  "SWE-bench/SWE-bench_Lite",
	"swe_bench_lite": "SWE-bench/SWE-bench_Lite",
	"swe-bench_lite": "SWE-bench/SWE-bench_Lite",
	"verified":       "SWE-bench/SWE-bench_Verified",
	"multimodal":     "SWE-bench/SWE-bench_Multimodal",
	"multilingual":   "SWE-bench/SWE-bench_Multilingual",
}

func exportHint(name string) string {
	if name == "" {
		name = "SWE-bench/SWE-bench_Lite"
	}
	return fmt.Sprintf("export it once with Python: python -c 'import datasets; "+
		"datasets.load_dataset(\"%s\", split=\"test\").to_json(\"test.jsonl\")' "+
		"(to_json writes JSONL), then pass test.jsonl", name)
}

func hfError(path, what, name string) error {
	return fmt.Errorf("load dataset %s: %s; LoadDataset reads .json, .jsonl and .parquet files (not Arrow) and package hub fetches dataset names: %s: %w",
		path, what, exportHint(name), ErrUnsupportedFormat)
}

// huggingFaceDir reports directories written by datasets' save_to_disk
// (Arrow files plus dataset_info.json/state.json, or dataset_dict.json at the
// top of a DatasetDict) and Parquet dumps.
func huggingFaceDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		n := e.Name()
		switch {
		case n == "dataset_dict.json" || n == "dataset_info.json" || n == "state.json" || strings.HasSuffix(n, ".arrow"):
			return hfError(dir, "this is a Hugging Face save_to_disk directory", "")
		}
	}
	return nil
}

// datasetFiles resolves path to the list of files to read.
func datasetFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if full, ok := hfAliases[strings.ToLower(path)]; ok {
			return nil, hfError(path, "this is an alias of the Hugging Face dataset "+full, full)
		}
		if IsHubName(path) {
			return nil, hfError(path, "no such file; a Hugging Face dataset name is fetched with package hub", path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("load dataset: %w", err)
	}
	if !st.IsDir() {
		switch {
		case strings.HasSuffix(path, ".json"), strings.HasSuffix(path, ".jsonl"), strings.HasSuffix(path, ".parquet"):
			return []string{path}, nil
		case strings.HasSuffix(path, ".arrow"):
			return nil, hfError(path, "Arrow files cannot be read", "")
		}
		return nil, &InputError{File: path, Err: kindf(ErrUnsupportedFormat, "want a .json, .jsonl or .parquet file or a directory of them")}
	}
	if err := huggingFaceDir(path); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("load dataset: %w", err)
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") || !(strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".parquet")) {
			continue
		}
		p := filepath.Join(path, n)
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		files = append(files, p)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("load dataset: no .json, .jsonl or .parquet files in directory %s: %w", path, fs.ErrNotExist)
	}
	return files, nil
}

// CheckUniqueIDs returns an error matching ErrDuplicateID when two
// instances share an id or have ids that differ only in letter case: their
// log directories would collide on case-insensitive file systems, and the
// official image names (instance_id.lower()) collide everywhere.
func CheckUniqueIDs(ds []Instance) error {
	var errs errorList
	seen := make(map[string]int, len(ds))
	for i, in := range ds {
		k := foldKey(in.InstanceID)
		j, dup := seen[k]
		if !dup {
			seen[k] = i
			continue
		}
		prev := ds[j]
		var err error
		if prev.InstanceID == in.InstanceID {
			err = kindf(ErrDuplicateID, "instance id %q appears twice (also at %s)", in.InstanceID, prev.Source)
		} else {
			err = kindf(ErrDuplicateID, "instance ids %q and %q (at %s) differ only in letter case", in.InstanceID, prev.InstanceID, prev.Source)
		}
		errs.add(&InputError{File: in.Source.File, Line: in.Source.Line, Field: "instance_id", Err: err})
	}
	return errs.err()
}
