package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/swebox/swebox/swebench/dataset"
)

// ErrBadFile matches every *FileError.
var ErrBadFile = errors.New("bad spec file")

// FileError is a problem in an image map or override file, naming the
// file, the line, the top-level key and the field.
type FileError struct {
	File  string
	Line  int    // 1-based, 0 when unknown
	Key   string // top-level key, e.g. "owner/name:1.0"
	Field string // member of the entry, e.g. "test_cmd"
	Err   error
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		fmt.Fprintf(&b, "key %q: ", e.Key)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *FileError) Unwrap() error        { return e.Err }
func (e *FileError) Is(target error) bool { return target == ErrBadFile }

// member is one member of a JSON object with the line its key is on.
type member struct {
	key  string
	raw  json.RawMessage
	line int
}

// objectMembers reads a JSON object, returning its members in order with
// their lines (baseLine is the line the object starts on).
func objectMembers(data []byte, baseLine int) ([]member, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	baseLine += bytes.Count(data[:len(data)-len(trimmed)], []byte{'\n'})
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", dataset.JSONKind(trimmed))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		line := baseLine + bytes.Count(trimmed[:dec.InputOffset()], []byte{'\n'})
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, raw: raw, line: line})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("unexpected data after the JSON object")
	}
	return out, nil
}

// readObjectFile reads a JSON object file as members with their lines.
func readObjectFile(path string) ([]member, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	if !utf8.Valid(data) {
		return nil, &FileError{File: path, Err: errors.New("not valid UTF-8")}
	}
	if !json.Valid(data) {
		var v json.RawMessage
		err := json.Unmarshal(data, &v)
		line := 0
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset) - 1
			if off < 0 {
				off = 0
			}
			if off > len(data) {
				off = len(data)
			}
			line = 1 + bytes.Count(data[:off], []byte{'\n'})
		}
		return nil, &FileError{File: path, Line: line, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	members, err := objectMembers(data, 1)
	if err != nil {
		return nil, &FileError{File: path, Line: 1, Err: err}
	}
	return members, nil
}

// parseKey splits "owner/name" or "owner/name:version".
func parseKey(key string) (repo, version string, err error) {
	repo, version, hasVersion := strings.Cut(key, ":")
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") || strings.ContainsAny(repo, " \t\n\\") {
		return "", "", fmt.Errorf(`want "owner/name" or "owner/name:version"`)
	}
	if hasVersion && (version == "" || strings.ContainsAny(version, " \t\n")) {
		return "", "", fmt.Errorf(`empty or invalid version after ":"`)
	}
	return repo, version, nil
}

func checkImage(img string) error {
	if img == "" || strings.ContainsAny(img, " \t\n\r") {
		return fmt.Errorf("want an image reference, got %q", img)
	}
	return nil
}
