package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/swebox/swebox/internal/jsonenc"
)

// Instance is one dataset row, with every field the official SWE-bench
// datasets carry (v4 and v5) and any further fields kept in Extra so that
// re-serialising a row loses nothing.
//
// FAIL_TO_PASS and PASS_TO_PASS are decoded from a real JSON list or from a
// JSON-encoded string list (the Hugging Face form); MarshalJSON writes them
// back in the form they were read in.
//
// Version is the key into the per-repository spec tables, always a string.
// The official datasets store it as a string ("3.0", "0.12", "2022.03",
// "v5.3"). Some derived datasets (SWE-bench-extra) store numbers; a number
// keeps its literal JSON text, so 3.0 gives "3.0" and 0.10 gives "0.10"
// (Python's str(float) would give "0.1", which is not the intended key),
// and 1 gives "1".
type Instance struct {
	Repo                   string   `json:"repo"`
	InstanceID             string   `json:"instance_id"`
	BaseCommit             string   `json:"base_commit"`
	Patch                  string   `json:"patch"`
	TestPatch              string   `json:"test_patch"`
	ProblemStatement       string   `json:"problem_statement"`
	HintsText              string   `json:"hints_text"`
	CreatedAt              string   `json:"created_at"`
	Version                string   `json:"version"`
	FailToPass             []string `json:"FAIL_TO_PASS"`
	PassToPass             []string `json:"PASS_TO_PASS"`
	EnvironmentSetupCommit string   `json:"environment_setup_commit"`

	// BaseRef is the revision, a branch or tag name, of a row that names
	// no base_commit: a task family's row mapper sets it (SWE-smith's
	// instance branches), and the repository is checked out at it on the
	// host. Rows need base_commit or base_ref.
	BaseRef string `json:"base_ref,omitempty"`

	// Newer fields: Verified adds difficulty, Multimodal image_assets, v5
	// rows image, eval_script, log_parser and eval_type.
	Difficulty  string          `json:"difficulty,omitempty"`
	Image       string          `json:"image,omitempty"`
	EvalScript  string          `json:"eval_script,omitempty"`
	LogParser   string          `json:"log_parser,omitempty"`
	EvalType    string          `json:"eval_type,omitempty"`
	ImageAssets json.RawMessage `json:"image_assets,omitempty"`

	// Extra holds fields this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`

	// Source is where the row was read from (zero for rows built in code).
	Source Position `json:"-"`

	f2pString       bool // FAIL_TO_PASS was a JSON-encoded string
	p2pString       bool // PASS_TO_PASS was a JSON-encoded string
	versionNumber   bool // version was a JSON number
	createdAtNumber bool // created_at was a JSON number (pandas epoch ms)
}

// Revision is what the row's repository is checked out at: base_commit,
// else base_ref.
func (in Instance) Revision() string {
	if in.BaseCommit != "" {
		return in.BaseCommit
	}
	return in.BaseRef
}

// Eval types of the v5 eval_type column.
const (
	EvalTypePassAndFail = "pass_and_fail"
	EvalTypeFailOnly    = "fail_only"
)

// known lists the fields decodeInstance handles, in the order MarshalJSON
// writes them (the order of the official Hugging Face rows).
var known = []string{
	"repo", "instance_id", "base_commit", "patch", "test_patch",
	"problem_statement", "hints_text", "created_at", "version",
	"FAIL_TO_PASS", "PASS_TO_PASS", "environment_setup_commit",
	"difficulty", "image", "eval_script", "log_parser", "eval_type", "image_assets", "base_ref",
}

var knownSet = func() map[string]bool {
	m := make(map[string]bool, len(known))
	for _, k := range known {
		m[k] = true
	}
	return m
}()

// hexCommit accepts abbreviated and full SHA-1/SHA-256 object names.
// base_commit is written unquoted into eval.sh (as the official harness
// does), so anything else is rejected rather than risk shell injection.
var hexCommit = regexp.MustCompile(`^[0-9a-fA-F]{4,64}$`)

// safeRef accepts the branch and tag names base_ref may hold: git ref
// characters a shell reads as themselves.
var safeRef = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./+-]*$`)

// fieldError is a problem with one field of one record; the loader adds file
// and line.
type fieldError struct {
	field string
	err   error
}

// UnmarshalJSON decodes a row, checking types and required fields.
func (in *Instance) UnmarshalJSON(data []byte) error {
	v, ferr := decodeInstance(data)
	if ferr != nil {
		if ferr.field != "" {
			return fmt.Errorf("field %q: %w", ferr.field, ferr.err)
		}
		return ferr.err
	}
	*in = v
	return nil
}

func decodeInstance(data []byte) (Instance, *fieldError) {
	fields, ferr := objectFields(data)
	if ferr != nil {
		return Instance{}, ferr
	}
	if fields, ferr = mapRow(fields); ferr != nil {
		return Instance{}, ferr
	}
	var in Instance
	str := func(name string, dst *string, required bool) *fieldError {
		raw, ok := fields[name]
		s, isSet, err := decodeString(raw, ok)
		if err != nil {
			return &fieldError{name, err}
		}
		if required && (!isSet || s == "") {
			return &fieldError{name, kindf(ErrMissingField, "required, missing or empty")}
		}
		*dst = s
		return nil
	}
	if e := str("base_ref", &in.BaseRef, false); e != nil {
		return Instance{}, e
	}
	for _, f := range []struct {
		name     string
		dst      *string
		required bool
	}{
		{"instance_id", &in.InstanceID, true},
		{"repo", &in.Repo, true},
		{"base_commit", &in.BaseCommit, in.BaseRef == ""},
		{"patch", &in.Patch, false},
		{"test_patch", &in.TestPatch, false},
		{"problem_statement", &in.ProblemStatement, false},
		{"hints_text", &in.HintsText, false},
		{"environment_setup_commit", &in.EnvironmentSetupCommit, false},
		{"difficulty", &in.Difficulty, false},
		{"image", &in.Image, false},
		{"eval_script", &in.EvalScript, false},
		{"log_parser", &in.LogParser, false},
		{"eval_type", &in.EvalType, false},
	} {
		if e := str(f.name, f.dst, f.required); e != nil {
			return Instance{}, e
		}
	}
	var err error
	if in.CreatedAt, in.createdAtNumber, err = decodeStringOrNumber(fields["created_at"]); err != nil {
		return Instance{}, &fieldError{"created_at", err}
	}
	if in.Version, in.versionNumber, err = decodeStringOrNumber(fields["version"]); err != nil {
		return Instance{}, &fieldError{"version", err}
	}
	if in.FailToPass, in.f2pString, err = decodeTestList(fields["FAIL_TO_PASS"]); err != nil {
		return Instance{}, &fieldError{"FAIL_TO_PASS", err}
	}
	if in.PassToPass, in.p2pString, err = decodeTestList(fields["PASS_TO_PASS"]); err != nil {
		return Instance{}, &fieldError{"PASS_TO_PASS", err}
	}
	if raw, ok := fields["image_assets"]; ok && !isNull(raw) {
		in.ImageAssets = append(json.RawMessage(nil), raw...)
	}
	in.Extra = extras(fields, knownSet)
	if ferr := in.validate(); ferr != nil {
		return Instance{}, ferr
	}
	return in, nil
}

func (in *Instance) validate() *fieldError {
	if _, err := SafePathComponent(KindInstanceID, in.InstanceID); err != nil {
		return &fieldError{"instance_id", err}
	}
	if err := checkRepo(in.Repo); err != nil {
		return &fieldError{"repo", err}
	}
	if in.BaseCommit == "" && in.BaseRef != "" {
		if !safeRef.MatchString(in.BaseRef) || strings.Contains(in.BaseRef, "..") {
			return &fieldError{"base_ref", kindf(ErrWrongType, "want a branch or tag name, got %q", clip(in.BaseRef))}
		}
	} else if !hexCommit.MatchString(in.BaseCommit) {
		return &fieldError{"base_commit", kindf(ErrWrongType, "want a hexadecimal commit id, got %q", clip(in.BaseCommit))}
	}
	switch in.EvalType {
	case "", EvalTypePassAndFail, EvalTypeFailOnly:
	default:
		return &fieldError{"eval_type", kindf(ErrWrongType, "want %q or %q, got %q", EvalTypePassAndFail, EvalTypeFailOnly, clip(in.EvalType))}
	}
	return nil
}

// checkRepo accepts "owner/name": the repository name is used to find spec
// tables, mirrors (owner__name) and image-map keys.
func checkRepo(repo string) error {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || strings.Contains(name, "/") {
		return kindf(ErrWrongType, "want \"owner/name\", got %q", clip(repo))
	}
	for _, part := range []string{owner, name} {
		if unsafeReason(part) != "" || strings.ContainsAny(part, " \t:") {
			return kindf(ErrWrongType, "want \"owner/name\", got %q", clip(repo))
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// objectFields splits a JSON object into its members (a later duplicate key
// wins, as in Python's json module).
func objectFields(data []byte) (map[string]json.RawMessage, *fieldError) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, &fieldError{"", kindf(ErrWrongType, "want a JSON object, got %s", jsonKind(data))}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, &fieldError{"", syntaxErr(data)}
	}
	// Go's decoder silently turns invalid UTF-8 into U+FFFD; the official
	// harness refuses such input (a UnicodeDecodeError), and so do we,
	// naming the field.
	if !utf8.Valid(data) {
		for k, raw := range fields {
			if !utf8.Valid(raw) {
				return nil, &fieldError{k, kindf(ErrInvalidUTF8, "value is not valid UTF-8")}
			}
		}
		return nil, &fieldError{"", kindf(ErrInvalidUTF8, "a key is not valid UTF-8")}
	}
	return fields, nil
}

// extras copies the members of fields not in known (nil when none).
func extras(fields map[string]json.RawMessage, known map[string]bool) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, raw := range fields {
		if known[k] {
			continue
		}
		if out == nil {
			out = make(map[string]json.RawMessage)
		}
		out[k] = append(json.RawMessage(nil), raw...)
	}
	return out
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// jsonKind names the JSON type of a value for error messages.
func jsonKind(raw []byte) string { return JSONKind(raw) }

// JSONKind names the JSON type of a value by its first byte (or, for the
// literals, its text), for error messages: "string", "object", "array", "boolean", "null", "number",
// "nothing" for blank input and "invalid JSON" for anything else.
func JSONKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch c := raw[0]; {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case string(raw) == "true", string(raw) == "false":
		return "boolean"
	case string(raw) == "null":
		return "null"
	case c == '-', c >= '0' && c <= '9':
		return "number"
	default:
		return "invalid JSON"
	}
}

// decodeString accepts a string or null (null and absent give "").
func decodeString(raw json.RawMessage, present bool) (s string, set bool, err error) {
	if !present || isNull(raw) {
		return "", false, nil
	}
	if jsonKind(raw) != "string" {
		return "", false, kindf(ErrWrongType, "want a string, got %s", jsonKind(raw))
	}
	s, err = jsonString(raw)
	if err != nil {
		return "", false, kindf(ErrSyntax, "%v", err)
	}
	return s, true, nil
}

// decodeStringOrNumber accepts a string, a number (kept as its literal
// text) or null.
func decodeStringOrNumber(raw json.RawMessage) (s string, number bool, err error) {
	if raw == nil || isNull(raw) {
		return "", false, nil
	}
	switch jsonKind(raw) {
	case "string":
		err = json.Unmarshal(raw, &s)
		return s, false, err
	case "number":
		return string(bytes.TrimSpace(raw)), true, nil
	}
	return "", false, kindf(ErrWrongType, "want a string or a number, got %s", jsonKind(raw))
}

// decodeTestList accepts a list of strings or a string holding a
// JSON-encoded list of strings (the Hugging Face form); null or absent give
// an empty list, as the official harness treats a missing key.
func decodeTestList(raw json.RawMessage) (list []string, wasString bool, err error) {
	if raw == nil || isNull(raw) {
		return nil, false, nil
	}
	const want = "want a list of strings or a JSON-encoded list"
	switch jsonKind(raw) {
	case "array":
		list, err = stringList(raw)
		if err != nil {
			return nil, false, kindf(ErrWrongType, "%s: %v", want, err)
		}
		return list, false, nil
	case "string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, kindf(ErrSyntax, "%v", err)
		}
		if jsonKind([]byte(s)) != "array" {
			return nil, true, kindf(ErrWrongType, "%s, got a string that is not a JSON list: %q", want, clip(s))
		}
		list, err = stringList([]byte(s))
		if err != nil {
			return nil, true, kindf(ErrWrongType, "%s, got a string holding %v", want, err)
		}
		return list, true, nil
	}
	return nil, false, kindf(ErrWrongType, "%s, got %s", want, jsonKind(raw))
}

func stringList(raw []byte) ([]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("invalid list: %w", err)
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		if jsonKind(it) != "string" {
			return nil, fmt.Errorf("element %d is %s", i, jsonKind(it))
		}
		var s string
		if err := json.Unmarshal(it, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// MarshalJSON writes the row with the official field order, the lists and
// version in the form they were read in, then the optional fields that are
// set and the extra fields in sorted order. Null string fields are written
// as "". (json.Marshal escapes <, > and & in the result; encode with a
// json.Encoder with SetEscapeHTML(false) to keep patches byte for byte.)
func (in Instance) MarshalJSON() ([]byte, error) {
	list := func(l []string, asString bool) any {
		if l == nil {
			l = []string{}
		}
		if asString {
			enc, _ := jsonenc.Marshal(l)
			return string(enc)
		}
		return l
	}
	strOrNum := func(s string, num bool) any {
		if num && json.Valid([]byte(s)) {
			return json.RawMessage(s)
		}
		return s
	}
	var w objectWriter
	w.put("repo", in.Repo)
	w.put("instance_id", in.InstanceID)
	if in.BaseCommit != "" || in.BaseRef == "" {
		w.put("base_commit", in.BaseCommit)
	}
	w.put("patch", in.Patch)
	w.put("test_patch", in.TestPatch)
	w.put("problem_statement", in.ProblemStatement)
	w.put("hints_text", in.HintsText)
	w.put("created_at", strOrNum(in.CreatedAt, in.createdAtNumber))
	w.put("version", strOrNum(in.Version, in.versionNumber))
	w.put("FAIL_TO_PASS", list(in.FailToPass, in.f2pString))
	w.put("PASS_TO_PASS", list(in.PassToPass, in.p2pString))
	w.put("environment_setup_commit", in.EnvironmentSetupCommit)
	for _, opt := range []struct{ k, v string }{
		{"difficulty", in.Difficulty}, {"image", in.Image}, {"eval_script", in.EvalScript},
		{"log_parser", in.LogParser}, {"eval_type", in.EvalType}, {"base_ref", in.BaseRef},
	} {
		if opt.v != "" {
			w.put(opt.k, opt.v)
		}
	}
	if len(in.ImageAssets) > 0 {
		w.put("image_assets", in.ImageAssets)
	}
	w.extra(in.Extra, knownSet)
	return w.finish()
}

// objectWriter writes a JSON object member by member, in call order.
type objectWriter struct {
	b   bytes.Buffer
	err error
}

func (w *objectWriter) put(k string, v any) {
	if w.err != nil {
		return
	}
	enc, err := jsonenc.Marshal(v)
	if err != nil {
		w.err = fmt.Errorf("marshal %s: %w", k, err)
		return
	}
	if w.b.Len() == 0 {
		w.b.WriteByte('{')
	} else {
		w.b.WriteByte(',')
	}
	kb, _ := json.Marshal(k)
	w.b.Write(kb)
	w.b.WriteByte(':')
	w.b.Write(enc)
}

// extra writes the members of m not in skip, in sorted order.
func (w *objectWriter) extra(m map[string]json.RawMessage, skip map[string]bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.put(k, m[k])
	}
}

func (w *objectWriter) finish() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.b.Len() == 0 {
		w.b.WriteByte('{')
	}
	w.b.WriteByte('}')
	return w.b.Bytes(), nil
}
