package diagnose_test

import (
	"fmt"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/diagnose"
	"github.com/swebox/swebox/agent/traceback"
)

func ExampleFeedback() {
	res := agent.Result{
		Kind:  agent.KindException,
		Error: &traceback.Exception{Type: "ModuleNotFoundError", Message: "No module named 'yaml'", Frames: []traceback.Frame{{File: "/workspace/main.py", Line: 1, Func: "<module>"}}},
	}
	for _, s := range diagnose.Feedback(res) {
		fmt.Println(s)
	}
	// Output:
	// Module "yaml" is not installed at line 1: add its package to Requirements, or use the standard library.
}
