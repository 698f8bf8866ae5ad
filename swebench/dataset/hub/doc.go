// Package hub loads SWE-bench datasets by their Hugging Face name, as the
// official harness's -d flag does, from the Hub's Parquet export.
//
// [Client.Load] asks {endpoint}/api/datasets/{name}/parquet/{config}/{split}
// for the split's Parquet files, downloads them into a cache and reads them
// with [dataset.ReadParquet], so the rows are those a JSONL export of the
// same split gives. Official aliases ("lite", "verified", "full",
// "multilingual", "multimodal" and v4's swe-bench spellings) name their
// datasets ([Resolve]). HF_ENDPOINT and HF_TOKEN are honoured.
//
// Every request after the first is conditional on the cached copy's ETag,
// so an unchanged split costs a few 304 answers. When the Hub cannot be
// reached, a split cached before is read from the cache and
// [Result.Offline] says why the Hub was not asked. Writes to the cache are
// atomic, and runs may share it.
//
// Failures are *[Error] values naming the dataset, the split and the URL,
// matching [ErrNotFound], [ErrAccess], [ErrUnreachable], [ErrBadResponse],
// [ErrBadName] or, for a file that is not Parquet, [dataset.ErrBadParquet].
//
// Usage:
//
//	c, err := hub.New(hub.WithProgress(func(p hub.Progress) { draw(p) }))
//	if err != nil {
//		return err
//	}
//	res, err := c.Load(ctx, hub.Request{Name: "lite", Split: "test"})
//	if err != nil {
//		return err // e.g. errors.Is(err, hub.ErrNotFound)
//	}
//	if res.Offline != nil {
//		log.Printf("using the cached copy: %v", res.Offline)
//	}
//	sel, err := dataset.Select(res.Instances, preds, nil)
//
// Package hubtest serves datasets over the same API from a local server,
// for tests.
package hub
