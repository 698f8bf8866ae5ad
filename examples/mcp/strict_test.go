package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/swebox/swebox/swebench"
)

// --strict gives every evaluation and task of the server the library's
// strict grading; without it grading is the official one.
func TestStrictFlag(t *testing.T) {
	for _, strict := range []bool{false, true} {
		e, err := newEvaluator(config{Images: []string{"img"}, Strict: strict}, nil)
		assert.NoError(t, err)
		want := swebench.GradingOfficial
		if strict {
			want = swebench.GradingStrict
		}
		assert.Equal(t, want, e.grading)
		assert.Equal(t, want, evalConfig(config{Images: []string{"img"}, Strict: strict}, e, nil, "").GradingMode)
	}
}
