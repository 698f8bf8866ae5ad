package dataset_test

import (
	"fmt"

	"github.com/swebox/swebox/swebench/dataset"
)

func Example() {
	ds, err := dataset.LoadDataset("testdata/example.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	preds, err := dataset.LoadPredictions("testdata/example-preds.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	sel, err := dataset.Select(ds, preds, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, in := range sel.Instances {
		fmt.Println(in.InstanceID, in.Version, in.FailToPass)
	}
	fmt.Println("run:", sel.Run)
	for _, w := range sel.Warnings {
		fmt.Println("warning:", w)
	}
	dir, _ := dataset.SafePathComponent(dataset.KindModel, sel.Model)
	fmt.Println("log dir:", dir)
	// Output:
	// psf__requests-2317 2.4 [test_requests.py::RequestsTestCase::test_HTTP_200_OK_GET_ALTERNATIVE]
	// pallets__flask-4045 2.0 [tests/test_blueprints.py::test_dotted_name_not_allowed]
	// run: [psf__requests-2317]
	// warning: no prediction for pallets__flask-4045
	// log dir: org__model
}

func ExampleGoldPredictions() {
	ds, _ := dataset.LoadDataset("testdata/example.jsonl")
	sel, _ := dataset.Select(ds, dataset.GoldPredictions(ds), nil)
	fmt.Println(sel.Model, sel.Run, sel.EmptyPatch)
	// Output:
	// gold [psf__requests-2317] [pallets__flask-4045]
}
