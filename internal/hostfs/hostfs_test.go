package hostfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadBounds(t *testing.T) {
	dir := t.TempDir()
	data := strings.Repeat("a", 50) + strings.Repeat("m", 100) + strings.Repeat("z", 50)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte(data), 0o600))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()

	_, err = ReadFile(root, "f", 199)
	assert.True(t, errors.Is(err, ErrTooLarge), "%v", err)
	b, err := ReadFile(root, "f", 200)
	require.NoError(t, err)
	assert.Equal(t, data, string(b))
}
