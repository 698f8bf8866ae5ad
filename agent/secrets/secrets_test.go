package secrets_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent/secrets"
)

func TestResolvers(t *testing.T) {
	errVault := errors.New("vault sealed")
	type testCase struct {
		name    string
		r       secrets.Resolver
		secret  string
		want    string
		wantErr error
	}
	for _, tc := range []testCase{
		{name: "static", r: secrets.Static{"a": "1"}, secret: "a", want: "1"},
		{name: "static, unknown", r: secrets.Static{"a": "1"}, secret: "b", wantErr: secrets.ErrNotFound},
		{name: "func", r: secrets.Func(func(_ context.Context, n string) (string, error) { return "v-" + n, nil }), secret: "x", want: "v-x"},
		{name: "func error", r: secrets.Func(func(context.Context, string) (string, error) { return "", errVault }), secret: "x", wantErr: errVault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.r.Resolve(context.Background(), tc.secret)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
