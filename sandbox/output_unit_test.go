package sandbox

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadOutputKeepsWhatACommandsOutputKeeps: a file read with ReadOutput
// is kept as the same bytes written as a command's output would be, for
// lengths below, at and above the cap, odd and even caps.
func TestReadOutputKeepsWhatACommandsOutputKeeps(t *testing.T) {
	type testCase struct{ size, limit int }
	var cases []testCase
	for _, limit := range []int{7, 8} {
		for _, size := range []int{0, 3, limit - 1, limit, limit + 1, 3 * limit} {
			cases = append(cases, testCase{size, limit})
		}
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d bytes, cap %d", tc.size, tc.limit), func(t *testing.T) {
			data := make([]byte, tc.size)
			for i := range data {
				data[i] = byte('a' + i%26)
			}
			got, err := ReadOutput(bytes.NewReader(data), int64(len(data)), tc.limit)
			require.NoError(t, err)
			b := newCapBuffer(tc.limit)
			_, _ = b.Write(data)
			assert.Equal(t, b.Output(), got)
		})
	}
}
