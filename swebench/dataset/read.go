package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// record is one top-level JSON object read from a file, with the line its
// first byte is on.
type record struct {
	raw   []byte
	line  int
	key   string // member name in the object-keyed prediction form
	keyed bool
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readRecords calls fn for every record of a .json or .jsonl file. JSONL is
// read line by line with no limit on line length. A .json file is sniffed:
// "[" starts an array of records; "{" starts either one object keyed by
// instance id (only when keyed is true and every member is an object) or a
// stream of objects, which is how JSONL saved under a .json name reads.
// fn may return an error; readRecords collects errors into errs and stops
// once errs is full or the file cannot be read further.
func readRecords(path string, keyed bool, errs *errorList, fn func(record) error) {
	what := "dataset"
	if keyed {
		what = "predictions"
	}
	switch {
	case strings.HasSuffix(path, ".jsonl"):
		readJSONL(path, what, errs, fn)
	case strings.HasSuffix(path, ".json"):
		readJSON(path, what, keyed, errs, fn)
	case !keyed && strings.HasSuffix(path, ".parquet"):
		readParquetFile(path, errs, fn)
	default:
		errs.add(&InputError{File: path, Err: kindf(ErrUnsupportedFormat, "want a .json or .jsonl file")})
	}
}

// readJSONL reads one record per line; what ("dataset" or "predictions")
// names the file in errors that are about the whole file.
func readJSONL(path, what string, errs *errorList, fn func(record) error) {
	f, err := os.Open(path)
	if err != nil {
		errs.add(fmt.Errorf("open %s: %w", what, err))
		return
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	for line := 1; !errs.full(); line++ {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			if line == 1 {
				b = bytes.TrimPrefix(b, utf8BOM)
			}
			b = bytes.TrimRight(b, "\r\n")
			if t := bytes.TrimLeft(b, " \t"); line == 1 && len(t) > 0 && t[0] == '[' {
				errs.add(&InputError{File: path, Line: 1, Err: kindf(ErrWrongType,
					"a JSON list in a .jsonl file: JSON Lines hold one object per line; rename the file to .json, or write one object per line")})
				return
			}
			// The record decoders validate the line (objectFields) and
			// report syntax errors, so it is scanned once here.
			if len(bytes.TrimSpace(b)) > 0 {
				if ferr := fn(record{raw: b, line: line}); ferr != nil {
					errs.add(ferr)
				}
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			errs.add(fmt.Errorf("read %s: %w", path, err))
			return
		}
	}
}

// syntaxErr describes why b is not one JSON value.
func syntaxErr(b []byte) error {
	var v json.RawMessage
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if se.Offset >= int64(len(b)) {
			return kindf(ErrSyntax, "truncated JSON (%v)", se)
		}
		return kindf(ErrSyntax, "%v (at byte %d)", se, se.Offset)
	}
	if err != nil {
		return kindf(ErrSyntax, "%v", err)
	}
	return kindf(ErrSyntax, "invalid JSON")
}

// lineCounter maps increasing byte offsets of data to 1-based line numbers.
type lineCounter struct {
	data []byte
	pos  int
	line int
}

func (c *lineCounter) at(off int) int {
	if off > len(c.data) {
		off = len(c.data)
	}
	if off > c.pos {
		c.line += bytes.Count(c.data[c.pos:off], []byte{'\n'})
		c.pos = off
	}
	return c.line + 1
}

// syntaxErrAt reports the first syntax error in data[start:], with its line.
func syntaxErrAt(path string, data []byte, start int) error {
	var v json.RawMessage
	err := json.Unmarshal(data[start:], &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		lc := lineCounter{data: data}
		return &InputError{File: path, Line: lc.at(start), Err: kindf(ErrSyntax, "invalid JSON")}
	}
	off := start + int(se.Offset) - 1
	if off < start {
		off = start
	}
	lc := lineCounter{data: data}
	if int(se.Offset) >= len(data)-start {
		// Point at the last line with content, where the value was cut.
		end := len(bytes.TrimRight(data, " \t\r\n"))
		return &InputError{File: path, Line: lc.at(end), Err: kindf(ErrSyntax, "truncated JSON (%v)", se)}
	}
	return &InputError{File: path, Line: lc.at(off), Err: kindf(ErrSyntax, "%v", se)}
}

func readJSON(path, what string, keyed bool, errs *errorList, fn func(record) error) {
	data, err := os.ReadFile(path)
	if err != nil {
		errs.add(fmt.Errorf("read %s: %w", what, err))
		return
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		msg := "empty file"
		if keyed {
			msg = "empty file: it holds no predictions, so nothing would run"
		}
		errs.add(&InputError{File: path, Err: kindf(ErrSyntax, "%s", msg)})
		return
	}
	lc := lineCounter{data: data}
	dec := json.NewDecoder(bytes.NewReader(data))
	switch trimmed[0] {
	case '[':
		if _, err := dec.Token(); err != nil {
			errs.add(syntaxErrAt(path, data, 0))
			return
		}
		for dec.More() && !errs.full() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				errs.add(syntaxErrAt(path, data, 0))
				return
			}
			start := int(dec.InputOffset()) - len(raw)
			if ferr := fn(record{raw: raw, line: lc.at(start)}); ferr != nil {
				errs.add(ferr)
			}
		}
		if errs.full() {
			return
		}
		if _, err := dec.Token(); err != nil {
			errs.add(syntaxErrAt(path, data, 0))
			return
		}
		if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
			errs.add(&InputError{File: path, Line: lc.at(int(dec.InputOffset()) + 1), Err: kindf(ErrSyntax, "unexpected data after the JSON array")})
		}
	case '{':
		var values []json.RawMessage
		var starts []int
		for {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			if err == io.EOF {
				break
			}
			if err != nil {
				prev := 0
				if len(starts) > 0 {
					prev = starts[len(starts)-1] + len(values[len(values)-1])
				}
				errs.add(syntaxErrAt(path, data, prev))
				return
			}
			values = append(values, raw)
			starts = append(starts, int(dec.InputOffset())-len(raw))
		}
		if keyed && len(values) == 1 {
			if members, ok := keyedMembers(values[0]); ok {
				base := lc.at(starts[0])
				for _, m := range members {
					if errs.full() {
						return
					}
					line := base + bytes.Count(values[0][:m.off], []byte{'\n'})
					if ferr := fn(record{raw: m.raw, line: line, key: m.key, keyed: true}); ferr != nil {
						errs.add(ferr)
					}
				}
				return
			}
		}
		for i, raw := range values {
			if errs.full() {
				return
			}
			if ferr := fn(record{raw: raw, line: lc.at(starts[i])}); ferr != nil {
				errs.add(ferr)
			}
		}
	default:
		lc.at(len(data) - len(trimmed))
		errs.add(&InputError{File: path, Line: lc.at(len(data) - len(trimmed)), Err: kindf(ErrWrongType, "want a JSON array or objects, got %s", jsonKind(trimmed))})
	}
}

type member struct {
	key string
	raw json.RawMessage
	off int // offset of the value within the enclosing object
}

// keyedMembers returns the members of obj in file order when obj looks like
// the {"<instance_id>": {prediction}, ...} form: it has members and every
// value is an object. A single prediction ({"instance_id": "...", ...}) has
// string values and is not keyed.
func keyedMembers(obj json.RawMessage) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		if jsonKind(raw) != "object" {
			return nil, false
		}
		out = append(out, member{key: key, raw: raw, off: int(dec.InputOffset()) - len(raw)})
	}
	return out, len(out) > 0
}

// fieldLine returns how many lines below the start of the object raw the
// (last) member named field starts, so errors in pretty-printed JSON point
// at the member's own line.
func fieldLine(raw []byte, field string) int {
	if field == "" || bytes.IndexByte(raw, '\n') < 0 {
		return 0
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return 0
	}
	found := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return found
		}
		if k, _ := tok.(string); k == field {
			found = bytes.Count(raw[:dec.InputOffset()], []byte{'\n'})
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return found
		}
	}
	return found
}

// recordError turns a fieldError in rec into an *InputError.
func recordError(path string, rec record, ferr *fieldError) error {
	return &InputError{File: path, Line: rec.line + fieldLine(rec.raw, ferr.field), Field: ferr.field, Err: ferr.err}
}
