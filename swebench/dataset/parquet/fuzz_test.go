package parquet

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
)

// A damaged or hostile Parquet file gives an error, never a panic, and the
// rows it does give pass the loader's checks.
func FuzzReadParquet(f *testing.F) {
	good, err := os.ReadFile(filepath.Join("..", "testdata", "parquet", "rows.parquet"))
	require.NoError(f, err)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[len(good)/3:])
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := dataset.ReadParquet(bytes.NewReader(data), int64(len(data)), "f.parquet")
		if err != nil {
			require.Nil(t, rows)
			return
		}
		for _, in := range rows {
			require.NotEmpty(t, in.InstanceID)
			// Decoding validates: a row that passed the loader's checks
			// passes them again.
			raw, err := json.Marshal(in)
			require.NoError(t, err)
			var again dataset.Instance
			require.NoError(t, json.Unmarshal(raw, &again), string(raw))
		}
	})
}
