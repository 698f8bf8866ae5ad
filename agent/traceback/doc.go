// Package traceback reads Python exceptions from a program's standard
// error: the standard traceback format, chained exceptions (the last one
// wins), exception groups and syntax errors reported without a traceback.
// It imports nothing but the standard library.
//
//	e := traceback.Parse(stderr)
//	if e != nil {
//		f, _ := e.UserFrame() // innermost frame outside the standard library and packages
//		fmt.Println(e.Type, e.Message, f.File, f.Line)
//	}
package traceback
