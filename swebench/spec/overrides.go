package spec

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/swebox/swebox/swebench/dataset"
)

// Overrides adjust or supply test specs for custom datasets: per repository
// ("owner/name") and optionally per version ("owner/name:version"). A
// version entry's fields override the repository entry's, which override
// the official table and the dataset row.
//
// File format (JSON); every field is optional, unknown fields are errors:
//
//	{
//	  "acme/widgets": {
//	    "test_cmd": "pytest -rA -p no:cacheprovider",
//	    "parser": "pytest",
//	    "install": "",
//	    "pre_install": [],
//	    "eval_commands": ["export WIDGETS_FAST=1"],
//	    "image": "acme/widgets-env:py311",
//	    "eval_type": "pass_and_fail",
//	    "directives": "files",
//	    "script": "python",
//	    "build": []
//	  },
//	  "acme/widgets:0.9": {"test_cmd": "python -m pytest -rA"}
//	}
//
// test_cmd is the command before the directives; parser a log parser name;
// install is re-run by eval.sh ("" to run nothing); eval_commands run
// before it; image is the workspace-mode image; eval_type is
// "pass_and_fail" or "fail_only"; directives is "files" (the test patch's
// paths), "django" (dotted module names) or "none"; script is "python"
// (the official Python eval script) or "common" (the official script of
// non-Python repositories: no conda, status/show/diff or install, the test
// patch applied with --reject, and the build commands run before the
// tests). For "common" set "directives": "none" to run test_cmd as is, as
// upstream does for those repositories.
type Overrides struct {
	file    string
	entries map[string]*overrideEntry
}

type overrideEntry struct {
	version      string
	TestCmd      *string         `json:"test_cmd"`
	Parser       *string         `json:"parser"`
	Install      *string         `json:"install"`
	PreInstall   *[]string       `json:"pre_install"`
	EvalCommands *[]string       `json:"eval_commands"`
	Image        *string         `json:"image"`
	EvalType     *string         `json:"eval_type"`
	Directives   *DirectiveStyle `json:"directives"`
	Script       *ScriptStyle    `json:"script"`
	Build        *[]string       `json:"build"`
	parserLine   int
}

var overrideFields = map[string]string{
	"test_cmd": "string", "parser": "string", "install": "string", "image": "string",
	"eval_type": "string", "directives": "string", "script": "string",
	"pre_install": "array", "eval_commands": "array", "build": "array",
}

// LoadOverrides reads an override file. Errors are *FileError values naming
// the file, line, key and field.
func LoadOverrides(path string) (*Overrides, error) {
	members, err := readObjectFile(path)
	if err != nil {
		return nil, err
	}
	o := &Overrides{file: path, entries: make(map[string]*overrideEntry, len(members))}
	for _, mb := range members {
		fail := func(line int, field string, err error) error {
			return &FileError{File: path, Line: line, Key: mb.key, Field: field, Err: err}
		}
		repo, version, err := parseKey(mb.key)
		if err != nil {
			return nil, fail(mb.line, "", err)
		}
		fields, err := objectMembers(mb.raw, mb.line)
		if err != nil {
			return nil, fail(mb.line, "", err)
		}
		e := &overrideEntry{version: version}
		for _, f := range fields {
			want, ok := overrideFields[f.key]
			if !ok {
				return nil, fail(f.line, f.key, errors.New("unknown field (want test_cmd, parser, install, pre_install, eval_commands, image, eval_type, directives, script or build)"))
			}
			if got := dataset.JSONKind(f.raw); got != want {
				return nil, fail(f.line, f.key, fmt.Errorf("want %s, got %s", map[string]string{"string": "a string", "array": "a list of strings"}[want], got))
			}
			if err := e.setField(f.key, f.raw); err != nil {
				return nil, fail(f.line, f.key, err)
			}
			if f.key == "parser" {
				e.parserLine = f.line
			}
		}
		if err := e.check(); err != nil {
			var fe *FileError
			if errors.As(err, &fe) {
				return nil, fail(mb.line, fe.Field, fe.Err)
			}
			return nil, fail(mb.line, "", err)
		}
		o.entries[mapKey(repo, version)] = e
	}
	return o, nil
}

func (e *overrideEntry) setField(key string, raw json.RawMessage) error {
	var dst any
	switch key {
	case "test_cmd":
		dst = &e.TestCmd
	case "parser":
		dst = &e.Parser
	case "install":
		dst = &e.Install
	case "pre_install":
		dst = &e.PreInstall
	case "eval_commands":
		dst = &e.EvalCommands
	case "image":
		dst = &e.Image
	case "eval_type":
		dst = &e.EvalType
	case "directives":
		dst = &e.Directives
	case "script":
		dst = &e.Script
	case "build":
		dst = &e.Build
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("want %s: %w", overrideFields[key], err)
	}
	return nil
}

func (e *overrideEntry) check() error {
	bad := func(field string, err error) error { return &FileError{Field: field, Err: err} }
	if e.TestCmd != nil && *e.TestCmd == "" {
		return bad("test_cmd", errors.New("empty"))
	}
	if e.Parser != nil && *e.Parser == "" {
		return bad("parser", errors.New("empty"))
	}
	if e.Image != nil {
		if err := checkImage(*e.Image); err != nil {
			return bad("image", err)
		}
	}
	if e.EvalType != nil && *e.EvalType != dataset.EvalTypePassAndFail && *e.EvalType != dataset.EvalTypeFailOnly {
		return bad("eval_type", fmt.Errorf("want %q or %q, got %q", dataset.EvalTypePassAndFail, dataset.EvalTypeFailOnly, *e.EvalType))
	}
	if e.Directives != nil && !e.Directives.valid() {
		return bad("directives", fmt.Errorf(`want "files", "django" or "none", got %q`, *e.Directives))
	}
	if e.Script != nil && *e.Script != ScriptPython && *e.Script != ScriptCommon {
		return bad("script", fmt.Errorf(`want "python" or "common", got %q`, *e.Script))
	}
	return nil
}

// CheckParsers returns a *FileError for the first entry whose parser is not
// known (known is typically logparse's lookup), so a typo fails at load
// time rather than after the tests ran.
func (o *Overrides) CheckParsers(known func(name string) bool) error {
	if o == nil {
		return nil
	}
	for key, e := range o.entries {
		if e.Parser != nil && !known(*e.Parser) {
			return &FileError{File: o.file, Line: e.parserLine, Key: key, Field: "parser", Err: fmt.Errorf("unknown log parser %q", *e.Parser)}
		}
	}
	return nil
}

// lookup returns the repository-wide and the version-specific entries
// (either may be nil).
func (o *Overrides) lookup(repo, version string) (repoWide, versioned *overrideEntry) {
	if o == nil {
		return nil, nil
	}
	repoWide = o.entries[repo]
	if version != "" {
		versioned = o.entries[mapKey(repo, version)]
	}
	return repoWide, versioned
}

func (e *overrideEntry) apply(s *TestSpec, style *DirectiveStyle) {
	if e == nil {
		return
	}
	if e.TestCmd != nil {
		s.TestCmd = *e.TestCmd
		s.Source = SourceOverride
	}
	if e.Parser != nil {
		s.Parser = *e.Parser
		s.Source = SourceOverride
	}
	if e.Install != nil {
		s.Install = *e.Install
	}
	if e.PreInstall != nil {
		s.PreInstall = append([]string(nil), (*e.PreInstall)...)
	}
	if e.EvalCommands != nil {
		s.EvalCommands = append([]string(nil), (*e.EvalCommands)...)
	}
	if e.EvalType != nil {
		s.EvalType = *e.EvalType
	}
	if e.Directives != nil {
		*style = *e.Directives
	}
	if e.Script != nil {
		s.Script = *e.Script
	}
	if e.Build != nil {
		s.Build = append([]string(nil), (*e.Build)...)
	}
}
