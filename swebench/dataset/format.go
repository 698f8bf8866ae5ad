package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ErrBadParquet: a file is not a readable Parquet file (truncated, not
// Parquet at all, or a page that does not decode).
var ErrBadParquet = errors.New("invalid Parquet")

// ParquetImport is the import path of the package that reads Parquet files;
// a program links it, for LoadDataset and ReadParquet, by importing it
// (for its side effect, as image/png is for image.Decode):
//
//	import _ "github.com/swebox/swebox/swebench/dataset/parquet"
//
// The reader lives apart so that packages which only need the row types
// ([Instance], [Prediction]) do not link parquet-go.
const ParquetImport = "github.com/swebox/swebox/swebench/dataset/parquet"

// A RowReader reads the rows of one file (r, size bytes long; source names
// it in errors). It calls row for each row in file order, with n its 1-based
// row number and raw the row as one JSON object, which is then decoded as a
// line of a JSONL file is. A problem with the file, or with a row it cannot
// turn into JSON, it reports by calling row with raw nil and err an
// *InputError (matching ErrBadParquet for a Parquet file). It stops when row
// returns false: enough errors have been collected.
type RowReader func(r io.ReaderAt, size int64, source string, row func(n int, raw []byte, err error) bool)

var (
	parquetMu     sync.RWMutex
	parquetReader RowReader
)

// RegisterParquet makes read the reader of Parquet files. The package named
// by [ParquetImport] calls it from init; it panics if read is nil or a reader
// is already registered, as sql.Register does.
func RegisterParquet(read RowReader) {
	parquetMu.Lock()
	defer parquetMu.Unlock()
	if read == nil {
		panic("dataset: RegisterParquet with a nil reader")
	}
	if parquetReader != nil {
		panic("dataset: RegisterParquet called twice")
	}
	parquetReader = read
}

func registeredParquet() RowReader {
	parquetMu.RLock()
	defer parquetMu.RUnlock()
	return parquetReader
}

// errNoParquet is the error for a Parquet file read by a program that does
// not link the reader.
func errNoParquet(source string) error {
	return &InputError{File: source, Err: kindf(ErrUnsupportedFormat,
		"this program cannot read Parquet: it does not link the Parquet reader (import _ %q)", ParquetImport)}
}

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
// field, as for JSON. The reader is the package named by [ParquetImport];
// without it linked, the error matches ErrUnsupportedFormat and names that
// import.
func ReadParquet(r io.ReaderAt, size int64, source string) ([]Instance, error) {
	read := registeredParquet()
	if read == nil {
		return nil, errNoParquet(source)
	}
	var (
		out  []Instance
		errs errorList
	)
	readRows(read, r, size, source, &errs, func(rec record) error {
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
	read := registeredParquet()
	if read == nil {
		errs.add(errNoParquet(path))
		return
	}
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
	readRows(read, f, st.Size(), path, errs, fn)
}

// readRows runs read, collecting its errors and fn's into errs.
func readRows(read RowReader, r io.ReaderAt, size int64, source string, errs *errorList, fn func(record) error) {
	read(r, size, source, func(n int, raw []byte, err error) bool {
		switch {
		case err != nil:
			errs.add(err)
		case raw != nil:
			if ferr := fn(record{raw: raw, line: n}); ferr != nil {
				errs.add(ferr)
			}
		}
		return !errs.full()
	})
}
