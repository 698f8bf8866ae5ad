package taskrepo

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/swebox/swebox/swebench/harness"
)

// Problem is one error upstream's `swebench task check` reports.
type Problem struct {
	Where   string // "sweb.yaml", "tasks/" or "tasks/<id>"
	Message string
}

func (p Problem) String() string { return "error: " + p.Where + ": " + p.Message }

// CheckError lists a repository's problems; upstream's guard refuses to
// build or publish while there are any.
type CheckError struct {
	Repo     string
	Problems []Problem
}

func (e *CheckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s) in %s:", len(e.Problems), e.Repo)
	for i, p := range e.Problems {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Problems)-20)
			break
		}
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// requiredKeys are the keys every task.yaml must have.
var requiredKeys = []string{"instance_id", "repo", "version", "base_commit", "split", "image", "log_parser", "eval_type"}

// evalMarkers bracket the test output; grading cannot read a run without
// them.
var evalMarkers = []string{harness.StartTestOutput, harness.EndTestOutput}

// ExpectedImage is the image name upstream's check derives for a task:
// swebench/sweb.eval.x86_64.<id, lower case>:latest with "__" → "_1776_".
func ExpectedImage(id string) string {
	return harness.TaskImage(id, harness.DefaultNamespace, harness.DefaultTag, "x86_64")
}

// Check reports the errors of upstream's check_task_repo (its guard,
// which `swebench images build` runs first) as a *CheckError, or nil.
// A malformed sweb.yaml or task.yaml is its *dataset.InputError.
func (r *Repo) Check() error {
	c, err := r.Config()
	if err != nil {
		return err
	}
	ids, err := r.TaskIDs()
	if err != nil {
		return &CheckError{Repo: r.Dir, Problems: []Problem{{TasksDir + "/", err.Error()}}}
	}
	if len(ids) == 0 {
		return &CheckError{Repo: r.Dir, Problems: []Problem{{TasksDir + "/", "no task directories"}}}
	}
	splits, datasets := set(c.Splits), set(c.Datasets)
	var probs []Problem
	for _, id := range ids {
		p, err := r.checkTask(id, splits, datasets)
		if err != nil {
			return err
		}
		probs = append(probs, p...)
	}
	entries, _ := os.ReadDir(filepath.Join(r.Dir, TasksDir))
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(r.Dir, TasksDir, e.Name(), TaskFile)); err != nil {
			probs = append(probs, Problem{TasksDir + "/" + e.Name(), "no " + TaskFile + ", so it is not a task"})
		}
	}
	if len(probs) > 0 {
		return &CheckError{Repo: r.Dir, Problems: probs}
	}
	return nil
}

func set(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func (r *Repo) checkTask(id string, splits, datasets map[string]bool) ([]Problem, error) {
	dir := filepath.Join(r.Dir, TasksDir, id)
	where := TasksDir + "/" + id
	var probs []Problem
	required := []string{TaskFile, TestsFile, Dockerfile}
	for _, f := range asFile {
		required = append(required, f.file)
	}
	var missing []string
	for _, f := range required {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || !st.Mode().IsRegular() {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		probs = append(probs, Problem{where, "missing " + strings.Join(missing, ", ")})
	}
	yamlPath := filepath.Join(dir, TaskFile)
	data, err := os.ReadFile(yamlPath)
	if err != nil {
		return nil, err
	}
	doc, err := parseMapping(yamlPath, data)
	if err != nil {
		return nil, err
	}
	for _, k := range requiredKeys {
		if _, ok := doc.get(k); !ok {
			probs = append(probs, Problem{where, TaskFile + " has no " + k})
		}
	}
	str := func(k string) (string, bool) {
		v, ok := doc.get(k)
		if !ok || isNull(v) {
			return "", false
		}
		return v.Value, true
	}
	if v, ok := str("instance_id"); ok && v != id {
		probs = append(probs, Problem{where, fmt.Sprintf("%s instance_id is '%s'", TaskFile, v)})
	}
	split, _ := str("split")
	if b, err := os.ReadFile(filepath.Join(dir, TestsFile)); err == nil {
		var tests map[string]any
		if err := json.Unmarshal(b, &tests); err != nil {
			return append(probs, Problem{where, TestsFile + " is not valid JSON: " + err.Error()}), nil
		}
		for _, k := range []string{"FAIL_TO_PASS", "PASS_TO_PASS"} {
			v, ok := tests[k]
			list, isList := v.([]any)
			switch {
			case !ok:
				probs = append(probs, Problem{where, TestsFile + " has no " + k})
			case !isList:
				probs = append(probs, Problem{where, fmt.Sprintf("%s is not a list", k)})
			default:
				for _, x := range list {
					if _, ok := x.(string); !ok {
						probs = append(probs, Problem{where, k + " holds something that is not a string"})
						break
					}
				}
			}
		}
		if l, ok := tests["FAIL_TO_PASS"].([]any); ok && len(l) == 0 && split != DeprecatedSplit {
			probs = append(probs, Problem{where, "no FAIL_TO_PASS, so nothing grades this task"})
		}
	}
	claimed, hasClaim := doc.get("datasets")
	falsy := !hasClaim || isNull(claimed) || claimed.Kind == yaml.SequenceNode && len(claimed.Content) == 0 ||
		claimed.Kind == yaml.MappingNode && len(claimed.Content) == 0 ||
		claimed.Kind == yaml.ScalarNode && (claimed.Value == "" || claimed.Tag == "!!bool" && !truthy(claimed.Value) || claimed.Tag == "!!int" && claimed.Value == "0")
	switch {
	case falsy && split != DeprecatedSplit:
		probs = append(probs, Problem{where, TaskFile + " does not say which datasets it belongs to"})
	case !hasClaim || claimed.Kind != yaml.SequenceNode:
		probs = append(probs, Problem{where, "datasets is not a list"})
	default:
		var unknown []string
		seen := map[string]bool{}
		for _, d := range claimed.Content {
			if !datasets[d.Value] && !seen[d.Value] {
				unknown = append(unknown, d.Value)
			}
			seen[d.Value] = true
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			probs = append(probs, Problem{where, "datasets not published by " + ConfigFile + ": " + strings.Join(unknown, " ")})
		}
	}
	if split != "" && !splits[split] && split != DeprecatedSplit {
		probs = append(probs, Problem{where, fmt.Sprintf("split '%s' is not in %s", split, ConfigFile)})
	}
	if img, ok := str("image"); ok && img != ExpectedImage(id) {
		probs = append(probs, Problem{where, fmt.Sprintf("image '%s' is not the derived name", img)})
	}
	if b, err := os.ReadFile(filepath.Join(dir, "eval.sh")); err == nil {
		for _, m := range evalMarkers {
			if !strings.Contains(string(b), m) {
				probs = append(probs, Problem{where, fmt.Sprintf("eval.sh has no '%s' marker", m)})
			}
		}
	}
	for _, name := range []string{"gold.patch", "test.patch"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil && len(b) > 0 && !strings.Contains(string(b), "diff --git") {
			probs = append(probs, Problem{where, name + " does not look like a diff"})
		}
	}
	return probs, nil
}

func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true
	}
	return false
}
