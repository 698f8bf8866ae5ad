// Package parquet reads SWE-bench datasets stored as Parquet, as the Hugging
// Face Hub's Parquet export and datasets' to_parquet write them. It is
// imported for its side effect: its init registers the reader with package
// dataset ([dataset.RegisterParquet]), after which [dataset.LoadDataset],
// [dataset.LoadDatasetSplit] and [dataset.ReadParquet] read .parquet files.
//
// It lives apart from package dataset so that what needs only the row types
// (swebench/spec, grade, family, logparse) does not link parquet-go.
//
// Usage:
//
//	import (
//		"github.com/swebox/swebox/swebench/dataset"
//		_ "github.com/swebox/swebox/swebench/dataset/parquet"
//	)
//
//	ds, err := dataset.LoadDataset("test.parquet")
//
// Each row becomes the JSON object a JSONL line would hold (strings stay
// strings, lists and structs their JSON forms) and is decoded by package
// dataset, so a Parquet file and its JSONL export give the same rows. A file
// that does not decode, including a hostile one whose headers declare sizes
// it does not hold, is an error matching [dataset.ErrBadParquet]: the page
// headers are checked before parquet-go allocates what they declare.
package parquet
