package spec

import "fmt"

// ScriptFunc writes eval.sh for a test spec in a script style of a
// family's own.
type ScriptFunc func(TestSpec, ScriptOptions) string

// styles holds the styles families register; it is written only from
// init functions, before any script is written.
var styles = map[ScriptStyle]ScriptFunc{}

// RegisterScriptStyle makes style a script style that [TestSpec.EvalScript]
// writes with fn (a row's own eval_script still comes first). A family
// whose harness writes eval.sh its own way calls it from the init function
// of its file in swebench/family and sets TestSpec.Script to style. It
// panics on an empty style or function, on [ScriptPython] or
// [ScriptCommon], and on a style registered before: the registry is built
// from init functions, where such a mistake is the program's.
func RegisterScriptStyle(style ScriptStyle, fn ScriptFunc) {
	if style == "" || fn == nil || style == ScriptPython || style == ScriptCommon || styles[style] != nil {
		panic(fmt.Sprintf("spec: script style %q is empty, built in or registered twice", style))
	}
	styles[style] = fn
}

// The pieces of the official scripts that a registered style reuses.
const (
	// ScriptShebang is the first line of every eval.sh.
	ScriptShebang = scriptShebang
	// ExitCodeEcho prints the test command's exit status (v5):
	// ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE".
	ExitCodeEcho = exitCodeEcho
)

// CondaLines are the lines that activate the testbed environment, none
// when the spec has no conda environment.
func (s TestSpec) CondaLines() []string {
	if !s.Conda {
		return nil
	}
	return []string{condaSource, condaActivate}
}

// Quote is words as the script writes them: as they are, or with the
// shell-unsafe ones single-quoted when o.QuoteUnsafePaths.
func (o ScriptOptions) Quote(words []string) []string {
	if o.QuoteUnsafePaths {
		return quoteUnsafe(words)
	}
	return words
}
