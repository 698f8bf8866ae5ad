package jsonenc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarshalKeepsHTMLCharacters(t *testing.T) {
	b, err := Marshal(map[string]string{"patch": "a < b && c > d"})
	require.NoError(t, err)
	assert.Equal(t, `{"patch":"a < b && c > d"}`, string(b))
}
