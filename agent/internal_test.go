package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/swebox/swebox/sandbox"
)

func TestMasker(t *testing.T) {
	mk := newMasker(map[string]string{"A": "secret-one", "B": "secret-one-longer", "C": ""})
	assert.Equal(t, "x *** y *** z", mk.string("x secret-one-longer y secret-one z"), "the longer secret is masked whole")
	assert.Equal(t, "no secrets", mk.string("no secrets"))

	type testCase struct {
		name string
		in   sandbox.Output
		want sandbox.Output
	}
	for _, tc := range []testCase{
		{name: "whole", in: sandbox.Output{Head: []byte("a secret-one b"), Total: 14}, want: sandbox.Output{Head: []byte("a *** b"), Total: 14}},
		{name: "cut in the middle", in: sandbox.Output{Head: []byte("abc secr"), Tail: []byte("et-one-longer z"), Truncated: true, Dropped: 5, Total: 30},
			want: sandbox.Output{Head: []byte("abc ***"), Tail: []byte("*** z"), Truncated: true, Dropped: 5, Total: 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, mk.output(tc.in))
		})
	}
	assert.Equal(t, sandbox.Output{Head: []byte("x")}, masker{}.output(sandbox.Output{Head: []byte("x")}))
}

func TestRequirementsMerge(t *testing.T) {
	base := Requirements{Packages: []string{"a", "b"}, WheelDir: "/w1"}
	got := base.merge(Requirements{Packages: []string{"b", "c"}})
	assert.Equal(t, []string{"a", "b", "c"}, got.Packages)
	assert.Equal(t, "/w1", got.WheelDir, "no new source keeps the old one")
	got = base.merge(Requirements{Packages: []string{"d"}, WheelDir: "/w2"})
	assert.Equal(t, "/w2", got.WheelDir)
	assert.Equal(t, []string{"a", "b"}, base.Packages, "merge does not change its receiver")
}
