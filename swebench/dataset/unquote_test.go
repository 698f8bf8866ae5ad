package dataset

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzJSONString checks jsonString against encoding/json on every input.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"q\" \\ \/"`, `"\u00e9\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\udc00\ud800"`, `"caf` + "\xe9" + `"`, `"\x"`, `"a`, `"` + "\x01" + `"`, `"é"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		wantErr := json.Unmarshal(raw, &want)
		got, err := jsonString(raw)
		if wantErr != nil {
			// Only validated records reach jsonString; on invalid input it
			// must still not panic, and it falls back to the same error.
			return
		}
		require.NoError(t, err)
		require.Equal(t, want, got)
	})
}
