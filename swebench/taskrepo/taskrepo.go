package taskrepo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/swebox/swebox/swebench/dataset"
)

// The layout's names (upstream's swebench/task/repo.py).
const (
	ConfigFile = "sweb.yaml"
	TasksDir   = "tasks"
	TaskFile   = "task.yaml"
	TestsFile  = "tests.json"
	Dockerfile = "Dockerfile"
	// DeprecatedSplit is kept in the tree but never published.
	DeprecatedSplit = "deprecated"
)

// asFile are the row's columns kept as files of their own, in upstream's
// order; hints.md is optional.
var asFile = []struct{ column, file string }{
	{"patch", "gold.patch"},
	{"test_patch", "test.patch"},
	{"eval_script", "eval.sh"},
	{"problem_statement", "problem_statement.md"},
}

const hintsFile = "hints.md"

// ErrNotTaskRepo: the directory has no tasks/ directory (or no sweb.yaml
// where one is needed).
var ErrNotTaskRepo = errors.New("not a task repository")

// Repo is a task repository on disk.
type Repo struct {
	Dir string
}

// Open returns the task repository at dir; it must have a tasks/
// directory.
func Open(dir string) (*Repo, error) {
	st, err := os.Stat(filepath.Join(dir, TasksDir))
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s has no %s/ directory: %w", dir, TasksDir, ErrNotTaskRepo)
	}
	return &Repo{Dir: dir}, nil
}

// Config is sweb.yaml: the datasets the repository publishes and their
// splits.
type Config struct {
	Datasets []string
	// Splits defaults to [test], as upstream's load_config sets it.
	Splits []string
}

// Config reads sweb.yaml as upstream's load_config does: it must exist
// and name at least one dataset.
func (r *Repo) Config() (Config, error) {
	path := filepath.Join(r.Dir, ConfigFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, fmt.Errorf("%s has no %s: %w", r.Dir, ConfigFile, ErrNotTaskRepo)
	}
	if err != nil {
		return Config{}, err
	}
	doc, err := parseMapping(path, data)
	if err != nil {
		return Config{}, err
	}
	var c Config
	for _, f := range []struct {
		name string
		dst  *[]string
	}{{"datasets", &c.Datasets}, {"splits", &c.Splits}} {
		if v, ok := doc.get(f.name); ok && !isNull(v) {
			list, err := stringList(path, f.name, v)
			if err != nil {
				return Config{}, err
			}
			*f.dst = list
		}
	}
	if len(c.Datasets) == 0 {
		line := 1
		if v, ok := doc.get("datasets"); ok {
			line = v.Line
		}
		return Config{}, &dataset.InputError{File: path, Line: line, Field: "datasets", Err: errors.New("names no datasets")}
	}
	if c.Splits == nil {
		c.Splits = []string{"test"}
	}
	return c, nil
}

// Task is one task directory, as the row upstream's load_task makes of
// it.
type Task struct {
	ID  string
	Dir string
	// Instance is the row: task.yaml, the files and tests.json.
	Instance dataset.Instance
	// Split and Datasets are task.yaml's split and datasets.
	Split    string
	Datasets []string
	// Dockerfile is the Dockerfile's text as upstream reads it
	// (Path.read_text: "\r\n" and "\r" read as "\n").
	Dockerfile string
}

// TaskIDs returns the names of the task directories that hold a task.yaml,
// sorted, as upstream's task_dirs.
func (r *Repo) TaskIDs() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(r.Dir, TasksDir))
	if err != nil {
		return nil, fmt.Errorf("%s has no %s/ directory: %w", r.Dir, TasksDir, ErrNotTaskRepo)
	}
	var ids []string
	for _, e := range entries {
		if st, err := os.Stat(filepath.Join(r.Dir, TasksDir, e.Name(), TaskFile)); err == nil && st.Mode().IsRegular() {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// UnknownTasksError: ids asked for that the repository has no task for.
type UnknownTasksError struct {
	Root string
	IDs  []string
}

func (e *UnknownTasksError) Error() string {
	return fmt.Sprintf("not in %s: %s", e.Root, strings.Join(e.IDs, " "))
}

// Load reads every task, or the ids asked for in their order, as
// upstream's load_task_repo; an unknown id is an *UnknownTasksError.
func (r *Repo) Load(ids []string) ([]Task, error) {
	all, err := r.TaskIDs()
	if err != nil {
		return nil, err
	}
	if ids == nil {
		ids = all
	} else {
		have := map[string]bool{}
		for _, id := range all {
			have[id] = true
		}
		var missing []string
		seen := map[string]bool{}
		for _, id := range ids {
			if !have[id] && !seen[id] {
				missing = append(missing, id)
			}
			seen[id] = true
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return nil, &UnknownTasksError{Root: filepath.Join(r.Dir, TasksDir), IDs: missing}
		}
	}
	out := make([]Task, 0, len(ids))
	for _, id := range ids {
		t, err := r.loadTask(id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// UnknownDatasetError: datasets asked for that sweb.yaml does not publish.
type UnknownDatasetError struct {
	Config    string
	Unknown   []string
	Publishes []string
}

func (e *UnknownDatasetError) Error() string {
	return fmt.Sprintf("%s does not publish %s. It publishes: %s", e.Config, strings.Join(e.Unknown, " "), strings.Join(e.Publishes, " "))
}

// Select returns the tasks a command acts on, as upstream's select_tasks:
// with ids exactly those, from any split; without, every task of a
// published split that belongs to one of datasets (default: all that
// sweb.yaml publishes), once each, sorted by id.
func (r *Repo) Select(ids, datasets []string) ([]Task, error) {
	if len(ids) > 0 {
		return r.Load(ids)
	}
	c, err := r.Config()
	if err != nil {
		return nil, err
	}
	wanted := map[string]bool{}
	if len(datasets) == 0 {
		datasets = c.Datasets
	}
	published := map[string]bool{}
	for _, d := range c.Datasets {
		published[d] = true
	}
	var unknown []string
	for _, d := range datasets {
		wanted[d] = true
		if !published[d] {
			unknown = append(unknown, d)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, &UnknownDatasetError{Config: filepath.Join(r.Dir, ConfigFile), Unknown: unknown, Publishes: c.Datasets}
	}
	splits := map[string]bool{}
	for _, s := range c.Splits {
		splits[s] = true
	}
	tasks, err := r.Load(nil)
	if err != nil {
		return nil, err
	}
	var out []Task
	for _, t := range tasks {
		if !splits[t.Split] {
			continue
		}
		for _, d := range t.Datasets {
			if wanted[d] {
				out = append(out, t)
				break
			}
		}
	}
	return out, nil // Load's order is already sorted by id
}

// NoSplitError: the repository has no task in the split asked for.
type NoSplitError struct {
	Repo, Split string
	Have        []string
}

func (e *NoSplitError) Error() string {
	have := strings.Join(e.Have, " ")
	if have == "" {
		have = "none"
	}
	return fmt.Sprintf("%s has no tasks in split '%s'. It has: %s", e.Repo, e.Split, have)
}

// ForEval returns the rows an evaluation runs, as upstream's
// load_instances with a task repository: with ids exactly those, from any
// split; without, the tasks of split (a *NoSplitError when there are
// none).
func (r *Repo) ForEval(split string, ids []string) ([]Task, error) {
	if len(ids) > 0 {
		return r.Load(ids)
	}
	tasks, err := r.Load(nil)
	if err != nil {
		return nil, err
	}
	var out []Task
	have := map[string]bool{}
	for _, t := range tasks {
		if t.Split == split {
			out = append(out, t)
		}
		if t.Split != "" {
			have[t.Split] = true
		}
	}
	if len(out) == 0 {
		var hs []string
		for s := range have {
			hs = append(hs, s)
		}
		sort.Strings(hs)
		return nil, &NoSplitError{Repo: r.Dir, Split: split, Have: hs}
	}
	return out, nil
}

// Instances returns the rows of tasks.
func Instances(tasks []Task) []dataset.Instance {
	out := make([]dataset.Instance, len(tasks))
	for i, t := range tasks {
		out[i] = t.Instance
	}
	return out
}

// loadTask is upstream's load_task: task.yaml, then the files verbatim,
// then tests.json over them.
func (r *Repo) loadTask(id string) (Task, error) {
	dir := filepath.Join(r.Dir, TasksDir, id)
	t := Task{ID: id, Dir: dir}
	yamlPath := filepath.Join(dir, TaskFile)
	data, err := os.ReadFile(yamlPath)
	if err != nil {
		return t, err
	}
	doc, err := parseMapping(yamlPath, data)
	if err != nil {
		return t, err
	}
	obj := newObject()
	for i := 0; i+1 < len(doc.node.Content); i += 2 {
		k, v := doc.node.Content[i], doc.node.Content[i+1]
		raw, err := toJSON(yamlPath, k.Value, v)
		if err != nil {
			return t, err
		}
		obj.set(k.Value, raw)
	}
	for _, f := range []string{"split", "instance_id", "image"} {
		if v, ok := doc.get(f); ok && !isNull(v) && (v.Kind != yaml.ScalarNode || v.Tag != "!!str") {
			return t, &dataset.InputError{File: yamlPath, Line: v.Line, Field: f, Err: fmt.Errorf("want a string, got %s", describe(v))}
		}
	}
	if v, ok := doc.get("split"); ok && !isNull(v) {
		t.Split = v.Value
	}
	if v, ok := doc.get("datasets"); ok && !isNull(v) {
		if t.Datasets, err = stringList(yamlPath, "datasets", v); err != nil {
			return t, err
		}
	}
	for _, f := range asFile {
		b, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			return t, fmt.Errorf("task %s: %w", id, err)
		}
		obj.setString(f.column, string(b))
	}
	hints := ""
	if b, err := os.ReadFile(filepath.Join(dir, hintsFile)); err == nil {
		hints = string(b)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return t, fmt.Errorf("task %s: %w", id, err)
	}
	obj.setString("hints_text", hints)
	testsPath := filepath.Join(dir, TestsFile)
	tb, err := os.ReadFile(testsPath)
	if err != nil {
		return t, fmt.Errorf("task %s: %w", id, err)
	}
	var tests map[string]json.RawMessage
	if err := json.Unmarshal(tb, &tests); err != nil {
		return t, &dataset.InputError{File: testsPath, Err: fmt.Errorf("not a JSON object: %w", err)}
	}
	keys := make([]string, 0, len(tests))
	for k := range tests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		obj.set(k, tests[k])
	}
	if err := json.Unmarshal(obj.bytes(), &t.Instance); err != nil {
		return t, &dataset.InputError{File: yamlPath, Err: err}
	}
	t.Instance.Source = dataset.Position{File: yamlPath}
	if df, err := os.ReadFile(filepath.Join(dir, Dockerfile)); err == nil {
		t.Dockerfile = universalNewlines(string(df))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return t, fmt.Errorf("task %s: %w", id, err)
	}
	return t, nil
}

// universalNewlines is what Python's text mode reads: "\r\n" and a lone
// "\r" become "\n".
func universalNewlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// object is a JSON object built in key order; a later key replaces an
// earlier one in place, as a Python dict's update does.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func newObject() *object { return &object{vals: map[string]json.RawMessage{}} }

func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) setString(k, v string) {
	b, _ := json.Marshal(v)
	o.set(k, b)
}

func (o *object) bytes() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}
