// Package dataset loads SWE-bench datasets and predictions and decides, as
// the official harness does, which instances a run evaluates.
//
// Datasets come from a JSON array, a JSONL file, a Parquet file
// ([ReadParquet]) or a directory of them ([LoadDataset], [LoadDatasetSplit]);
// rows keep every official field and any extra ones ([Instance]). Package
// hub fetches datasets by their Hugging Face name ([HubAlias], [IsHubName]).
//
// This package holds the row types and reads JSON; it does not link a Parquet
// reader, so that packages which only need an [Instance] stay light. A
// program that reads .parquet files links package dataset/parquet for its
// side effect ([ParquetImport]), as a program links image/png for
// image.Decode; without it, reading one is an error matching
// [ErrUnsupportedFormat] that names the import:
//
//	import _ "github.com/swebox/swebox/swebench/dataset/parquet"
//
// Predictions come from a JSON list, a JSON
// object keyed by instance id, or JSONL ([LoadPredictions]); the dataset's
// own patches give the "gold" predictions ([GoldPredictions]). [Select]
// applies the -i filter and the official checks: unknown ids are errors,
// duplicate predictions (the later wins), missing predictions and empty
// patches are warnings.
//
// Every problem with an input file is an [*InputError] naming the file, the
// line and the field:
//
//	data.jsonl:17: field "FAIL_TO_PASS": want a list of strings or a JSON-encoded list, got number
//
// Instance ids, model names and run ids end up in file paths; the loaders
// reject values that are unsafe there ([SafePathComponent]) and datasets
// whose ids differ only in letter case ([CheckUniqueIDs]).
//
// Usage:
//
//	ds, err := dataset.LoadDatasetSplit("swe-bench-lite", "test") // dir holding test.jsonl
//	if err != nil {
//		return err
//	}
//	preds, err := dataset.LoadPredictions("preds.jsonl")
//	if err != nil {
//		return err
//	}
//	sel, err := dataset.Select(ds, preds, instanceIDs)
//	if err != nil {
//		return err // unknown ids, as the official harness's ValueError
//	}
//	for _, w := range sel.Warnings {
//		log.Print(w)
//	}
//	for _, id := range sel.Run {
//		inst, _ := sel.Instance(id)
//		evaluate(inst, sel.Predictions[id])
//	}
package dataset
