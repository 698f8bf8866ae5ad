package cienv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder captures what Skip asks of a test without ending the real one.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Skip(args ...any)             { r.skipped = true; r.msg = args[0].(string) }
func (r *recorder) Fatalf(f string, args ...any) { r.failed = true; r.msg = f }

func TestSkip(t *testing.T) {
	type testCase struct {
		name       string
		ci         string
		skip, fail bool
	}
	for _, tc := range []testCase{
		{name: "developer machine", ci: "", skip: true},
		{name: "CI", ci: "true", fail: true},
		{name: "CI set to something else", ci: "1", skip: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			r := &recorder{}
			Skip(r, "python3 %s", "not found")
			assert.Equal(t, tc.skip, r.skipped, "skipped")
			assert.Equal(t, tc.fail, r.failed, "failed")
		})
	}
}
