package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
)

// demoModel names the demo's predictions (and so its run report).
const demoModel = "swebox-demo"

// demoInstanceFile is demo/instances/<id>/instance.json: the parts of a
// dataset row that are not diffs, plus what the demo expects.
type demoInstanceFile struct {
	// Base is the tree directory (demo/repo/<base>) of the base commit.
	Base             string   `json:"base"`
	CreatedAt        string   `json:"created_at"`
	Version          string   `json:"version"`
	ProblemStatement string   `json:"problem_statement"`
	FailToPass       []string `json:"FAIL_TO_PASS"`
	PassToPass       []string `json:"PASS_TO_PASS"`
	// Expected is the status the demo prediction must get.
	Expected swebench.Status `json:"expected"`
	// Shows says what the instance demonstrates.
	Shows string `json:"shows"`
}

// demoCase is one demo instance with its prediction and expectation.
type demoCase struct {
	Instance   dataset.Instance
	Prediction dataset.Prediction
	Expected   swebench.Status
	Shows      string
}

// readDemoCases reads demo/instances/*: each directory holds instance.json,
// patch.diff (the reference fix), test_patch.diff and prediction.diff (the
// "model's" patch; empty for an empty prediction). commits maps tree names
// to commit ids (buildDemoRepo). Cases come in instance id order.
func readDemoCases(fsys fs.FS, repoName string, commits map[string]string) ([]demoCase, error) {
	entries, err := fs.ReadDir(fsys, "instances")
	if err != nil {
		return nil, fmt.Errorf("read demo instances: %w", err)
	}
	var out []demoCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		id := e.Name()
		dir := path.Join("instances", id)
		read := func(name string) (string, error) {
			b, err := fs.ReadFile(fsys, path.Join(dir, name))
			if err != nil {
				return "", fmt.Errorf("read demo instance %s: %w", id, err)
			}
			return string(b), nil
		}
		meta, err := read("instance.json")
		if err != nil {
			return nil, err
		}
		var f demoInstanceFile
		dec := json.NewDecoder(bytes.NewReader([]byte(meta)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("decode demo instance %s: %w", id, err)
		}
		commit, ok := commits[f.Base]
		if !ok {
			return nil, fmt.Errorf("demo instance %s: base %q is not a commit of demo/repo/history.json", id, f.Base)
		}
		patch, err := read("patch.diff")
		if err != nil {
			return nil, err
		}
		testPatch, err := read("test_patch.diff")
		if err != nil {
			return nil, err
		}
		pred, err := read("prediction.diff")
		if err != nil {
			return nil, err
		}
		out = append(out, demoCase{
			Instance: dataset.Instance{
				Repo:                   repoName,
				InstanceID:             id,
				BaseCommit:             commit,
				Patch:                  patch,
				TestPatch:              testPatch,
				ProblemStatement:       f.ProblemStatement,
				CreatedAt:              f.CreatedAt,
				Version:                f.Version,
				FailToPass:             f.FailToPass,
				PassToPass:             f.PassToPass,
				EnvironmentSetupCommit: commit,
			},
			Prediction: dataset.Prediction{InstanceID: id, ModelNameOrPath: demoModel, ModelPatch: &pred},
			Expected:   f.Expected,
			Shows:      f.Shows,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance.InstanceID < out[j].Instance.InstanceID })
	return out, nil
}

// encodeJSONL writes one JSON value per line without escaping <, > and &, so
// patches stay byte for byte.
func encodeJSONL[T any](rows []T) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return nil, fmt.Errorf("encode JSONL: %w", err)
		}
	}
	return buf.Bytes(), nil
}

// demoFiles renders demo/dataset.jsonl and demo/predictions.jsonl from the
// cases.
func demoFiles(cases []demoCase) (datasetJSONL, predictionsJSONL []byte, err error) {
	rows := make([]dataset.Instance, len(cases))
	preds := make([]dataset.Prediction, len(cases))
	for i, c := range cases {
		rows[i], preds[i] = c.Instance, c.Prediction
	}
	if datasetJSONL, err = encodeJSONL(rows); err != nil {
		return nil, nil, err
	}
	if predictionsJSONL, err = encodeJSONL(preds); err != nil {
		return nil, nil, err
	}
	return datasetJSONL, predictionsJSONL, nil
}
