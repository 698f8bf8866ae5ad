package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A damaged or hostile Parquet file gives an error, never a panic, and the
// rows it does give pass the loader's checks.
func FuzzReadParquet(f *testing.F) {
	good, err := os.ReadFile(filepath.Join("testdata", "parquet", "rows.parquet"))
	require.NoError(f, err)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[len(good)/3:])
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ReadParquet(bytes.NewReader(data), int64(len(data)), "f.parquet")
		if err != nil {
			require.Nil(t, rows)
			return
		}
		for _, in := range rows {
			require.NotEmpty(t, in.InstanceID)
			require.Nil(t, in.validate())
		}
	})
}
