package agent_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
)

func TestNewOptionErrors(t *testing.T) {
	type testCase struct {
		name  string
		opt   agent.Option
		field string
	}
	for _, tc := range []testCase{
		{name: "empty image", opt: agent.WithImage(""), field: "WithImage"},
		{name: "relative state directory", opt: agent.WithStateDir("state"), field: "WithStateDir"},
		{name: "relative env cache", opt: agent.WithEnvCache("envs"), field: "WithEnvCache"},
		{name: "nil logger", opt: agent.WithLogger(nil), field: "WithLogger"},
		{name: "zero idle timeout", opt: agent.WithIdleTimeout(0), field: "WithIdleTimeout"},
		{name: "zero reap interval", opt: agent.WithReapInterval(0), field: "WithReapInterval"},
		{name: "nil resolver", opt: agent.WithSecretResolver(nil), field: "WithSecretResolver"},
		{name: "nil HTTP client", opt: agent.WithHTTPClient(nil), field: "WithHTTPClient"},
		{name: "negative fetch limit", opt: agent.WithFetchLimit(-1), field: "WithFetchLimit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := agent.New(nil, tc.opt)
			require.ErrorIs(t, err, agent.ErrInvalidOption)
			assert.Nil(t, m)
			var oe *agent.OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tc.field, oe.Field)
		})
	}
}
