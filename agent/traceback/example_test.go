package traceback_test

import (
	"fmt"

	"github.com/swebox/swebox/agent/traceback"
)

func ExampleParse() {
	stderr := `Traceback (most recent call last):
  File "/workspace/main.py", line 4, in <module>
    total = parse(row)
  File "/workspace/main.py", line 2, in parse
    return int(s)
ValueError: invalid literal for int() with base 10: 'x'
`
	e := traceback.Parse(stderr)
	f, _ := e.UserFrame()
	fmt.Println(e.Type)
	fmt.Println(e.Message)
	fmt.Println(f.Line, f.Func, f.Code)
	// Output:
	// ValueError
	// invalid literal for int() with base 10: 'x'
	// 2 parse return int(s)
}
