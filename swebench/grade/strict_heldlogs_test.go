package grade_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
	"github.com/swebox/swebox/swebench/strict"
)

// TestStrictRulesOnCapturedLogs runs strict grading's log rules (package
// strict, a log judged on its own) over every scenario of TestGoldenReports
// under both releases' rules: strict grading never resolves what official
// grading does not, and it turns no official resolved into unresolved
// without a refusing finding that names its rule. On these real captures
// it turns none around.
func TestStrictRulesOnCapturedLogs(t *testing.T) {
	graded, unchanged := 0, 0
	for i, sc := range scenarios {
		for _, rules := range []harness.Rules{harness.V4, harness.V5} {
			t.Run(fmt.Sprintf("%02d-%s.%s.%s", i, sc.log, sc.parser, rules), func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join("testdata", "logs", sc.log+"."+string(rules)+".txt"))
				require.NoError(t, err)
				rep, err := grade.Grade(grade.Input{InstanceID: fmt.Sprintf("swebox__stub-%d", i+1), Log: string(raw), Parser: sc.parser,
					FailToPass: sc.f2p, PassToPass: sc.p2p, Rules: rules})
				require.NoError(t, err)
				official := rep.Resolved
				parse, ok := logparse.Bind(sc.parser, logparse.Target{})
				require.True(t, ok, sc.parser)
				strict.Judge(strict.Input{Report: &rep, Log: string(raw), Parser: parse, Rules: rules, FailToPass: sc.f2p, PassToPass: sc.p2p})
				require.NotNil(t, rep.Notes.Strict)
				assert.Equal(t, official, rep.Notes.Strict.OfficialResolved)
				assert.Equal(t, strict.ChannelLog, rep.Notes.Strict.Channel)
				assert.Equal(t, official, rep.Resolved, "%v", rep.Notes.Strict.Findings)
				graded++
				if official == rep.Resolved {
					unchanged++
				}
			})
		}
	}
	t.Logf("strict log rules: %d of %d captured logs keep their official verdict", unchanged, graded)
}
