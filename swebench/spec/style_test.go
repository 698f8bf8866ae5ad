package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRegisteredScriptStyle: EvalScript writes a spec whose Script names a
// registered style with that style's function and the run's options, a
// row's own eval_script still first; RegisterScriptStyle refuses the
// built-in styles, the empty one and a second registration.
func TestRegisteredScriptStyle(t *testing.T) {
	const style ScriptStyle = "test-style-registered"
	RegisterScriptStyle(style, func(s TestSpec, o ScriptOptions) string {
		return ScriptShebang + "\n" + s.TestCmd + " " + o.Quote(s.Directives)[0] + "\n"
	})
	s := TestSpec{Script: style, TestCmd: "pytest", Directives: []string{"a b.py"}}
	assert.Equal(t, "#!/bin/bash\npytest a b.py\n", s.EvalScript(ScriptOptions{}))
	assert.Equal(t, "#!/bin/bash\npytest 'a b.py'\n", s.EvalScript(ScriptOptions{QuoteUnsafePaths: true}))
	s.DatasetScript = "echo row"
	assert.NotContains(t, s.EvalScript(ScriptOptions{}), "pytest")

	fn := func(TestSpec, ScriptOptions) string { return "" }
	for _, st := range []ScriptStyle{"", ScriptPython, ScriptCommon, style} {
		assert.Panics(t, func() { RegisterScriptStyle(st, fn) }, "%q", st)
	}
	assert.Panics(t, func() { RegisterScriptStyle("test-style-nil", nil) })
	assert.Equal(t, []string{condaSource, condaActivate}, TestSpec{Conda: true}.CondaLines())
	assert.Empty(t, TestSpec{}.CondaLines())
}
