package harness_test

import (
	"fmt"

	"github.com/swebox/swebox/swebench/harness"
)

func ExampleParserForInstance() {
	fmt.Println(harness.ParserForRepo("sympy/sympy"))
	fmt.Println(harness.ParserForRepo("example/unknown"))
	fmt.Println(harness.ParserForInstance("immutable-js/immutable-js", "immutable-js__immutable-js-2005"))
	// Output:
	// sympy
	// pytest
	// jest_json
}

func ExampleInstanceImage() {
	fmt.Println(harness.InstanceImage("django__django-11099", harness.DefaultNamespace, harness.DefaultTag))
	fmt.Println(harness.InstanceImage("django__django-11099", "", "v1"))
	// Output:
	// swebench/sweb.eval.x86_64.django_1776_django-11099:latest
	// sweb.eval.x86_64.django__django-11099:v1
}

func ExampleFailOnly() {
	fmt.Println(harness.FailOnly("markedjs/marked", harness.V4), harness.FailOnly("eslint/eslint", harness.V4))
	fmt.Println(harness.FailOnly("eslint/eslint", harness.V5), harness.FailOnly("eslint/eslint", ""))
	// Output:
	// true false
	// true true
}
