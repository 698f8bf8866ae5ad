package agent

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLiveOutputRefusedWithSecrets(t *testing.T) {
	type testCase struct {
		name           string
		opts           ExecOptions
		sessionSecrets bool
		refused        bool
	}
	for _, tc := range []testCase{
		{name: "live output alone", opts: ExecOptions{Stdout: io.Discard, Stderr: io.Discard}},
		{name: "secrets alone", opts: ExecOptions{Secrets: map[string]string{"TOKEN": "token"}}, sessionSecrets: true},
		{name: "live output with call secrets", opts: ExecOptions{Stdout: io.Discard, Secrets: map[string]string{"TOKEN": "token"}}, refused: true},
		{name: "live stderr with session secrets", opts: ExecOptions{Stderr: io.Discard}, sessionSecrets: true, refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.validate()
			if err == nil {
				err = tc.opts.validateLive(tc.sessionSecrets)
			}
			if !tc.refused {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidOption)
			var oe *OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "Stdout", oe.Field)
		})
	}
}
