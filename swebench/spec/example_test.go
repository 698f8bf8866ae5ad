package spec_test

import (
	"fmt"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

func Example() {
	inst := dataset.Instance{
		InstanceID: "django__django-11099",
		Repo:       "django/django",
		Version:    "3.0",
		BaseCommit: "d26b2424437dabeeca94d7900b37d2df4410da0c",
		TestPatch: "diff --git a/tests/auth_tests/test_validators.py b/tests/auth_tests/test_validators.py\n" +
			"--- a/tests/auth_tests/test_validators.py\n+++ b/tests/auth_tests/test_validators.py\n@@ -1 +1 @@\n",
	}
	s, err := spec.For(inst)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Image)
	fmt.Println(s.TestCommand())
	fmt.Println(s.Parser, s.EvalType, s.Source)
	fmt.Println(s.TestFiles)
	// Output:
	// swebench/sweb.eval.x86_64.django_1776_django-11099:latest
	// ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 auth_tests.test_validators
	// django pass_and_fail official
	// [tests/auth_tests/test_validators.py]
}

func ExamplePatchCommands() {
	cmds, _ := spec.PatchCommands(harness.V4, spec.ContainerPatchPath)
	for _, argv := range cmds {
		fmt.Println(argv)
	}
	// Output:
	// [git apply --verbose /tmp/patch.diff]
	// [git apply --verbose --reject /tmp/patch.diff]
	// [patch --batch --fuzz=5 -p1 -i /tmp/patch.diff]
}
