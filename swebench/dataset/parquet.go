package dataset

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
)

// ErrBadParquet: a file is not a readable Parquet file (truncated, not
// Parquet at all, or a page that does not decode).
var ErrBadParquet = errors.New("invalid Parquet")

// ReadParquet reads the rows of one Parquet file, as the Hugging Face Hub's
// Parquet export and datasets' to_parquet write them. Each row becomes a
// JSON object (strings stay strings, so FAIL_TO_PASS stored as a
// JSON-encoded string stays one; numbers, booleans, nulls, lists and
// structs become their JSON forms) and is then decoded exactly as a line of
// a JSONL file: unknown columns are kept in Instance.Extra.
//
// source names the file in errors and in each row's Source; Source.Line is
// the 1-based row number. A file that does not decode gives an *InputError
// matching ErrBadParquet; a bad row gives an *InputError naming its row and
// field, as for JSON.
func ReadParquet(r io.ReaderAt, size int64, source string) ([]Instance, error) {
	var (
		out  []Instance
		errs errorList
	)
	readParquetRecords(r, size, source, &errs, func(rec record) error {
		in, ferr := decodeInstance(rec.raw)
		if ferr != nil {
			return &InputError{File: source, Line: rec.line, Field: ferr.field, Err: ferr.err}
		}
		in.Source = Position{File: source, Line: rec.line}
		out = append(out, in)
		return nil
	})
	if err := errs.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// readParquetFile is readRecords for a .parquet file.
func readParquetFile(path string, errs *errorList, fn func(record) error) {
	f, err := os.Open(path)
	if err != nil {
		errs.add(fmt.Errorf("open dataset: %w", err))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		errs.add(fmt.Errorf("open dataset: %w", err))
		return
	}
	readParquetRecords(f, st.Size(), path, errs, fn)
}

func readParquetRecords(r io.ReaderAt, size int64, source string, errs *errorList, fn func(record) error) {
	bad := func(format string, args ...any) {
		errs.add(&InputError{File: source, Err: kindf(ErrBadParquet, format, args...)})
	}
	f, err := openParquet(r, size)
	if err != nil {
		bad("not a readable Parquet file: %v", err)
		return
	}
	schema := f.Schema()
	row := 0
	for _, rg := range f.RowGroups() {
		rows := rg.Rows()
		buf := make([]parquet.Row, 64)
		for !errs.full() {
			n, rerr := readRows(rows, buf)
			for _, pr := range buf[:n] {
				row++
				raw, err := parquetRowJSON(schema, pr)
				if err != nil {
					errs.add(&InputError{File: source, Line: row, Err: kindf(ErrBadParquet, "%v", err)})
					continue
				}
				if ferr := fn(record{raw: raw, line: row}); ferr != nil {
					errs.add(ferr)
				}
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				rows.Close()
				errs.add(&InputError{File: source, Line: row + 1, Err: kindf(ErrBadParquet, "read row group: %v", rerr)})
				return
			}
		}
		rows.Close()
	}
}

// openParquet opens a file, turning the library's panics on hostile input
// into errors.
func openParquet(r io.ReaderAt, size int64) (f *parquet.File, err error) {
	if err := checkFooter(r, size); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("%v", p)
		}
	}()
	f, err = parquet.OpenFile(r, size, parquet.SkipBloomFilters(true))
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

func readRows(rows parquet.Rows, buf []parquet.Row) (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			n, err = 0, fmt.Errorf("%v", p)
		}
	}()
	return rows.ReadRows(buf)
}

// parquetRowJSON reconstructs one row as a JSON object.
func parquetRowJSON(schema *parquet.Schema, row parquet.Row) (raw []byte, err error) {
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
		enc, err := marshalNoEscape(x)
		if err != nil {
			return fmt.Errorf("column value of type %T: %w", x, err)
		}
		b.Write(enc)
	}
	return nil
}

func writeJSONString(b *bytes.Buffer, s string) error {
	enc, err := marshalNoEscape(s)
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
