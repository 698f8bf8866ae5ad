package main

import (
	"embed"
	"io/fs"
)

// demoEmbed holds the demo project, its instances and the bundled dataset
// (see demo/README.md). "all:" keeps files whose names start with "_", such
// as __init__.py.
//
//go:embed all:demo
var demoEmbed embed.FS

// demoFS is the demo directory.
func demoFS() fs.FS {
	sub, err := fs.Sub(demoEmbed, "demo")
	if err != nil {
		panic(err) // "demo" is a valid path; fs.Sub cannot fail on it
	}
	return sub
}

// Files of the bundled dataset, generated from demo/instances by
// `go test ./examples/eval -run TestDemoDatasetIsCurrent -update`.
const (
	demoDatasetFile     = "dataset.jsonl"
	demoPredictionsFile = "predictions.jsonl"
)
