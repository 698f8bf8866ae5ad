package dataset

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kinds of names accepted by SafePathComponent.
const (
	KindInstanceID = "instance_id"
	KindModel      = "model_name_or_path"
	KindRunID      = "run_id"
)

// MaxNameBytes is the longest name SafePathComponent accepts. File systems
// allow 255 bytes per component; the margin leaves room for suffixes such as
// ".<run_id>.json" in the run report's name.
const MaxNameBytes = 200

// SafePathComponent returns the single path component under which a value of
// the given kind may be stored, or an *UnsafeNameError.
//
// Instance ids, model names and run ids come from files anyone can write and
// become directory names (logs/run_evaluation/<run_id>/<model>/<instance_id>).
// A model name has "/" replaced by "__" first, as the official harness does
// (so "org/model" is stored as "org__model"); any other "/" or "\" is
// rejected. Rejected outright: "", ".", "..", NUL and other control
// characters, invalid UTF-8, and names longer than MaxNameBytes.
func SafePathComponent(kind, s string) (string, error) {
	if kind == KindModel {
		s = strings.ReplaceAll(s, "/", "__")
	}
	if reason := unsafeReason(s); reason != "" {
		return "", &UnsafeNameError{Kind: kind, Value: s, Reason: reason}
	}
	return s, nil
}

func unsafeReason(s string) string {
	switch {
	case s == "":
		return "empty"
	case s == "." || s == "..":
		return "a relative directory name"
	case len(s) > MaxNameBytes:
		return fmt.Sprintf("longer than %d bytes", MaxNameBytes)
	case !utf8.ValidString(s):
		return "not valid UTF-8"
	case strings.ContainsAny(s, `/\`):
		return "contains a path separator"
	}
	for _, r := range s {
		if r == 0 {
			return "contains a NUL byte"
		}
		if unicode.IsControl(r) {
			return fmt.Sprintf("contains control character %U", r)
		}
	}
	return ""
}

// foldKey is the key under which case-insensitive file systems (macOS,
// Windows) and the official image names (instance_id.lower()) would merge two
// ids.
func foldKey(s string) string { return strings.ToLower(strings.ToUpper(s)) }
