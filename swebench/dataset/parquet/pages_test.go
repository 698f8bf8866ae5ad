package parquet_test

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
)

// craftParquet writes a one-row, one-column (instance_id) Parquet file by
// hand, whose only data page declares the sizes and value count given
// (-1: the true ones), whatever it holds.
func craftParquet(t testing.TB, compressed, uncompressed, values int32) []byte {
	t.Helper()
	value := []byte("inst-1")
	data := binary.LittleEndian.AppendUint32(nil, uint32(len(value)))
	data = append(data, value...)
	if compressed < 0 {
		compressed = int32(len(data))
	}
	if uncompressed < 0 {
		uncompressed = int32(len(data))
	}
	if values < 0 {
		values = 1
	}
	proto := new(thrift.CompactProtocol)
	header, err := thrift.Marshal(proto, &format.PageHeader{
		Type: format.DataPage, UncompressedPageSize: uncompressed, CompressedPageSize: compressed,
		DataPageHeader: thrift.New(format.DataPageHeader{NumValues: values, Encoding: format.Plain,
			DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE}),
	})
	require.NoError(t, err)
	chunk := int64(len(header) + len(data))
	meta, err := thrift.Marshal(proto, &format.FileMetaData{
		Version: 1,
		Schema: []format.SchemaElement{
			{Name: "schema", NumChildren: thrift.New(int32(1))},
			{Name: "instance_id", Type: thrift.New(format.ByteArray), RepetitionType: thrift.New(format.Required),
				LogicalType: format.LogicalType{Value: &format.StringType{}}},
		},
		NumRows: int64(values),
		RowGroups: []format.RowGroup{{
			Columns: []format.ColumnChunk{{FileOffset: 4, MetaData: format.ColumnMetaData{
				Type: format.ByteArray, Encoding: []format.Encoding{format.Plain}, PathInSchema: []string{"instance_id"},
				Codec: format.Uncompressed, NumValues: int64(values), TotalUncompressedSize: chunk, TotalCompressedSize: chunk, DataPageOffset: 4,
			}}},
			TotalByteSize: chunk, NumRows: int64(values),
		}},
	})
	require.NoError(t, err)
	var b bytes.Buffer
	b.WriteString("PAR1")
	b.Write(header)
	b.Write(data)
	b.Write(meta)
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(meta))))
	b.WriteString("PAR1")
	return b.Bytes()
}

// A page that declares 2 GiB (compressed or not) or 2^31 values in a file
// of a few hundred bytes is refused before anything of that size is
// allocated.
func TestReadParquetHugePageDeclared(t *testing.T) {
	good := craftParquet(t, -1, -1, -1)
	// The crafted file decodes: its one row reaches the instance decoder,
	// which misses the other fields of an instance.
	_, err := dataset.ReadParquet(bytes.NewReader(good), int64(len(good)), "good.parquet")
	require.Error(t, err)
	assert.NotErrorIs(t, err, dataset.ErrBadParquet, "the crafted file is valid Parquet as written")
	assert.Contains(t, err.Error(), `good.parquet:1: field "repo"`)

	type testCase struct {
		name                             string
		compressed, uncompressed, values int32
		want                             string
	}
	for _, tc := range []testCase{
		{"compressed", 1<<31 - 1, -1, -1, "compressed_page_size"},
		{"uncompressed", -1, 1<<31 - 1, -1, "uncompressed_page_size"},
		{"both", 1<<31 - 1, 1<<31 - 1, -1, "page_size"},
		{"values", -1, -1, 1<<31 - 1, "num_values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := craftParquet(t, tc.compressed, tc.uncompressed, tc.values)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = dataset.ReadParquet(bytes.NewReader(file), int64(len(file)), "huge.parquet")
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			assert.ErrorIs(t, err, dataset.ErrBadParquet)
			assert.Contains(t, err.Error(), "huge.parquet")
			assert.Contains(t, err.Error(), tc.want)
			t.Logf("%d bytes: %v; allocated %d bytes", len(file), err, after.TotalAlloc-before.TotalAlloc)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated for a %d-byte file", len(file))
		})
	}
}
