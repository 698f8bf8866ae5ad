package taskrepo

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/swebox/swebox/swebench/dataset"
)

// mapping is a YAML document whose top level is a mapping.
type mapping struct{ node *yaml.Node }

func (m mapping) get(key string) (*yaml.Node, bool) {
	var found *yaml.Node
	for i := 0; i+1 < len(m.node.Content); i += 2 {
		if m.node.Content[i].Value == key {
			found = m.node.Content[i+1] // the last one wins, as in PyYAML
		}
	}
	return found, found != nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseMapping parses a YAML file that must hold a mapping; a syntax error
// names the file and line.
func parseMapping(path string, data []byte) (mapping, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		ie := &dataset.InputError{File: path, Err: fmt.Errorf("not valid YAML: %w", err)}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			ie.Line, _ = strconv.Atoi(m[1])
			ie.Err = fmt.Errorf("not valid YAML: %s", m[2])
		}
		return mapping{}, ie
	}
	if len(doc.Content) == 0 {
		return mapping{}, &dataset.InputError{File: path, Line: 1, Err: errors.New("empty: want a mapping")}
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return mapping{}, &dataset.InputError{File: path, Line: top.Line, Err: fmt.Errorf("want a mapping, got %s", describe(top))}
	}
	for i := 0; i < len(top.Content); i += 2 {
		if k := top.Content[i]; k.Kind != yaml.ScalarNode {
			return mapping{}, &dataset.InputError{File: path, Line: k.Line, Err: fmt.Errorf("a key is %s, not a name", describe(k))}
		}
	}
	return mapping{top}, nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!str":
		return fmt.Sprintf("the string %q", clip(n.Value))
	case "!!null":
		return "null"
	}
	return fmt.Sprintf("%s %s", strings.TrimPrefix(n.Tag, "!!"), clip(n.Value))
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// stringList is a list of strings; anything else names the field's line.
func stringList(path, field string, n *yaml.Node) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, &dataset.InputError{File: path, Line: n.Line, Field: field, Err: fmt.Errorf("want a list of strings, got %s", describe(n))}
	}
	out := make([]string, 0, len(n.Content))
	for i, e := range n.Content {
		if e.Kind != yaml.ScalarNode || e.Tag != "!!str" {
			return nil, &dataset.InputError{File: path, Line: e.Line, Field: fmt.Sprintf("%s[%d]", field, i), Err: fmt.Errorf("want a string, got %s", describe(e))}
		}
		out = append(out, e.Value)
	}
	return out, nil
}

// toJSON converts a YAML value to JSON as PyYAML's safe_load then
// json.dumps would see it, except that a number keeps its literal text (a
// version 3.10 stays "3.10", as the dataset package keeps JSON numbers).
func toJSON(path, field string, n *yaml.Node) (json.RawMessage, error) {
	bad := func(err error) error {
		return &dataset.InputError{File: path, Line: n.Line, Field: field, Err: err}
	}
	switch n.Kind {
	case yaml.AliasNode:
		return toJSON(path, field, n.Alias)
	case yaml.SequenceNode:
		parts := make([]string, 0, len(n.Content))
		for i, e := range n.Content {
			b, err := toJSON(path, fmt.Sprintf("%s[%d]", field, i), e)
			if err != nil {
				return nil, err
			}
			parts = append(parts, string(b))
		}
		return json.RawMessage("[" + strings.Join(parts, ",") + "]"), nil
	case yaml.MappingNode:
		o := newObject()
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, bad(errors.New("a key is not a name"))
			}
			b, err := toJSON(path, field+"."+k.Value, n.Content[i+1])
			if err != nil {
				return nil, err
			}
			o.set(k.Value, b)
		}
		return o.bytes(), nil
	}
	switch n.Tag {
	case "!!null":
		return json.RawMessage("null"), nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, bad(err)
		}
		return json.RawMessage(strconv.FormatBool(b)), nil
	case "!!int", "!!float":
		if json.Valid([]byte(n.Value)) {
			return json.RawMessage(n.Value), nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, bad(err)
		}
		return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64)), nil
	}
	b, err := json.Marshal(n.Value) // strings, timestamps (as written), binary
	if err != nil {
		return nil, bad(err)
	}
	return b, nil
}
