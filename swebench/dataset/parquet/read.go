package parquet

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	pq "github.com/parquet-go/parquet-go"

	"github.com/swebox/swebox/internal/jsonenc"
	"github.com/swebox/swebox/internal/kinderr"
	"github.com/swebox/swebox/swebench/dataset"
)

func init() {
	dataset.RegisterParquet(readRows)
}

// readRows is the dataset.RowReader of Parquet files.
func readRows(r io.ReaderAt, size int64, source string, yield func(n int, raw []byte, err error) bool) {
	bad := func(line int, format string, args ...any) error {
		return &dataset.InputError{File: source, Line: line, Err: kinderr.New(dataset.ErrBadParquet, format, args...)}
	}
	f, err := openParquet(r, size)
	if err != nil {
		yield(0, nil, bad(0, "not a readable Parquet file: %v", err))
		return
	}
	schema := f.Schema()
	row := 0
	for _, rg := range f.RowGroups() {
		rows := rg.Rows()
		buf := make([]pq.Row, 64)
		for {
			n, rerr := readBatch(rows, buf)
			for _, pr := range buf[:n] {
				row++
				raw, err := parquetRowJSON(schema, pr)
				if err != nil {
					raw, err = nil, bad(row, "%v", err)
				}
				if !yield(row, raw, err) {
					rows.Close()
					return
				}
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				rows.Close()
				yield(row+1, nil, bad(row+1, "read row group: %v", rerr))
				return
			}
		}
		rows.Close()
	}
}

// openParquet opens a file, turning the library's panics on hostile input
// into errors.
func openParquet(r io.ReaderAt, size int64) (f *pq.File, err error) {
	if err := checkFooter(r, size); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("%v", p)
		}
	}()
	f, err = pq.OpenFile(r, size, pq.SkipBloomFilters(true))
	if err != nil {
		return nil, err
	}
	if err := checkPages(r, size, f); err != nil {
		return nil, err
	}
	return f, nil
}

// checkFooter checks the magic numbers and that the footer length fits in
// the file: parquet-go v0.32.0 allocates the length it reads (up to 4 GiB)
// before comparing it with the file's size.
func checkFooter(r io.ReaderAt, size int64) error {
	const magic = "PAR1"
	if size < 12 {
		return fmt.Errorf("%d bytes is too short for a Parquet file", size)
	}
	head, tail := make([]byte, 4), make([]byte, 8)
	if _, err := r.ReadAt(head, 0); err != nil {
		return fmt.Errorf("read header: %w", err)
	}
	if _, err := r.ReadAt(tail, size-8); err != nil {
		return fmt.Errorf("read footer: %w", err)
	}
	if string(head) != magic || string(tail[4:]) != magic {
		return fmt.Errorf("no Parquet magic number (PAR1) at both ends")
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("footer length %d exceeds the file (%d bytes)", n, size)
	}
	return nil
}

func readBatch(rows pq.Rows, buf []pq.Row) (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			n, err = 0, fmt.Errorf("%v", p)
		}
	}()
	return rows.ReadRows(buf)
}

// parquetRowJSON reconstructs one row as a JSON object.
func parquetRowJSON(schema *pq.Schema, row pq.Row) (raw []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			raw, err = nil, fmt.Errorf("reconstruct row: %v", p)
		}
	}()
	m := map[string]any{}
	if err := schema.Reconstruct(&m, row); err != nil {
		return nil, fmt.Errorf("reconstruct row: %w", err)
	}
	var b bytes.Buffer
	if err := writeJSONValue(&b, m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeJSONValue writes v as JSON the way Python's json module writes the
// value pyarrow gives for it: floats keep a decimal point (3.0, not 3), so a
// numeric version reads as the JSONL export of the same row would.
func writeJSONValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		return writeJSONString(b, x)
	case []byte:
		if utf8.Valid(x) {
			return writeJSONString(b, string(x))
		}
		return writeJSONString(b, base64.StdEncoding.EncodeToString(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int8:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int16:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint8:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint16:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint32:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float32:
		writeFloat(b, float64(x), 32)
	case float64:
		writeFloat(b, x, 64)
	case time.Time:
		return writeJSONString(b, x.UTC().Format(time.RFC3339Nano))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSONValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSONString(b, k); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := writeJSONValue(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		enc, err := jsonenc.Marshal(x)
		if err != nil {
			return fmt.Errorf("column value of type %T: %w", x, err)
		}
		b.Write(enc)
	}
	return nil
}

func writeJSONString(b *bytes.Buffer, s string) error {
	enc, err := jsonenc.Marshal(s)
	if err != nil {
		return err
	}
	b.Write(enc)
	return nil
}

// writeFloat writes Python's repr of a float: the shortest digits that
// round-trip, positional from 1e-4 up to 1e16 with ".0" on integral values,
// in exponent form outside. NaN and the infinities, which Python would write
// as non-JSON tokens, become null.
func writeFloat(b *bytes.Buffer, f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		b.WriteString("null")
		return
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		b.WriteString(e) // Go and Python agree: 1e+16, 1.5e-05
		return
	}
	s := strconv.FormatFloat(f, 'f', -1, bits)
	b.WriteString(s)
	if !strings.Contains(s, ".") {
		b.WriteString(".0")
	}
}
