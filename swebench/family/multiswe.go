package family

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
)

// Multi-SWE-bench (ByteDance; Java, TS, JS, Go, Rust, C, C++): rows of its
// own schema (org, repo, number, base.sha, fix_patch, test_patch and the
// f2p/p2p/s2p/n2p test dicts, with the row's run and test-patch results),
// images mswebench/<org>_m_<repo>:pr-<N> (lower case) holding the
// repository at /home/<repo> and the scripts of its per-repository
// instance class, the model patch written at /home/fix.patch and
// "bash /home/fix-run.sh" run as root in /home (no markers; the whole log
// is parsed by the class's parse_log; see [MultiSWEProcedure]). Graded by
// [GradingMultiSWE]: [MultiSWEGrade], its Report.check and the membership
// test of gen_report's evaluation mode. Its harness is
// multi-swe-bench/multi-swe-bench (multi_swe_bench/harness); only the
// repositories in [MultiSWERepos] are ported: any other row is refused by
// name ([ErrMultiSWERepo]).
func init() {
	registerMultiSWERun()
	dataset.RegisterRowMapper(mapMultiSWERow)
	Register(&Family{
		Name:    "multi-swe-bench",
		Aliases: []string{"multi-swe", "mswebench"},
		Title:   "Multi-SWE-bench",
		Datasets: []Dataset{
			{ID: "ByteDance-Seed/Multi-SWE-bench"},
			{ID: "ByteDance-Seed/Multi-SWE-bench_mini"},
		},
		Upstream:  Upstream{Repository: "multi-swe-bench/multi-swe-bench", Commit: MultiSWECommit},
		Namespace: "mswebench",
		Claim: func(inst dataset.Instance) Claim {
			_, org := inst.Extra["org"]
			_, fix := inst.Extra["fix_patch"]
			if org && fix {
				return ClaimRow
			}
			return ClaimNone
		},
		Image:   multiSWEImage,
		Spec:    multiSWESpec,
		Grading: GradingMultiSWE,
	})
}

// MultiSWECommit is the commit of multi-swe-bench/multi-swe-bench whose
// instance classes and grading were ported and compared with.
const MultiSWECommit = "24f493f8a103e72312ded4f6b9c89f081d69cb09"

var (
	// ErrMultiSWERepo is a Multi-SWE-bench row of a repository (or of a
	// tagged or numbered variant of one) whose instance class is not
	// ported: swebox refuses it rather than guess its scripts or parser.
	ErrMultiSWERepo = errors.New("Multi-SWE-bench repository not ported")
	// ErrMultiSWERow is a row of Multi-SWE-bench's schema that cannot be
	// read.
	ErrMultiSWERow = errors.New("malformed Multi-SWE-bench row")
)

// mapMultiSWERow maps a Multi-SWE-bench row onto the fields the dataset
// package decodes: repo "org/repo", instance_id "org__repo-number" (unless
// the row has one), base_commit base.sha, patch the fix_patch, FAIL_TO_PASS
// the f2p, s2p and n2p tests and PASS_TO_PASS the p2p tests, each sorted.
// The row's own fields stay in Extra.
func mapMultiSWERow(fields map[string]json.RawMessage) (map[string]json.RawMessage, bool, error) {
	_, hasOrg := fields["org"]
	_, hasNumber := fields["number"]
	_, hasBase := fields["base"]
	if !hasOrg || !hasNumber || !hasBase {
		return nil, false, nil
	}
	if _, ok := fields["base_commit"]; ok {
		return nil, false, nil // already mapped (a row written back out)
	}
	row, err := readMultiSWERow(fields)
	if err != nil {
		return nil, true, err
	}
	out := make(map[string]json.RawMessage, len(fields)+6)
	for k, v := range fields {
		out[k] = v
	}
	put := func(k string, v any) {
		b, _ := json.Marshal(v)
		out[k] = b
	}
	put("repo", row.Org+"/"+row.Repo)
	if id, ok := fields["instance_id"]; !ok || string(id) == "null" || string(id) == `""` {
		put("instance_id", row.InstanceID())
	}
	put("base_commit", row.BaseSHA)
	put("patch", row.FixPatch)
	var f2p []string
	for _, l := range [][]string{row.F2P, row.S2P, row.N2P} {
		f2p = append(f2p, l...)
	}
	sort.Strings(f2p)
	put("FAIL_TO_PASS", f2p)
	put("PASS_TO_PASS", row.P2P)
	return out, true, nil
}

// MultiSWERow is what Multi-SWE-bench's harness reads of a dataset row
// (multi_swe_bench/harness/dataset.py and pull_request.py).
type MultiSWERow struct {
	Org, Repo             string
	Number                int
	BaseSHA               string
	FixPatch, TestPatch   string
	Tag, NumberInterval   string
	F2P, P2P, S2P, N2P    []string // the keys of f2p_tests, ..., sorted
	RunResult, TestResult MultiSWEResult
}

// InstanceID is the row's id as swebox names it, "org__repo-number".
func (r MultiSWERow) InstanceID() string {
	return r.Org + "__" + r.Repo + "-" + strconv.Itoa(r.Number)
}

// MultiSWERowOf reads the Multi-SWE-bench fields of a loaded row.
func MultiSWERowOf(inst dataset.Instance) (MultiSWERow, error) {
	f := make(map[string]json.RawMessage, len(inst.Extra)+1)
	for k, v := range inst.Extra {
		f[k] = v
	}
	f["repo"], _ = json.Marshal(inst.Repo) // "org/repo": a field the dataset package keeps
	return readMultiSWERow(f)
}

func readMultiSWERow(f map[string]json.RawMessage) (MultiSWERow, error) {
	var r MultiSWERow
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrMultiSWERow, field, fmt.Sprintf(format, a...))
	}
	str := func(field string, dst *string, required bool) error {
		raw, ok := f[field]
		if !ok || string(raw) == "null" {
			if required {
				return bad(field, "missing")
			}
			return nil
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return bad(field, "want a string, got %s", dataset.JSONKind(raw))
		}
		return nil
	}
	for _, s := range []struct {
		field    string
		dst      *string
		required bool
	}{{"org", &r.Org, true}, {"fix_patch", &r.FixPatch, false}, {"test_patch", &r.TestPatch, false},
		{"tag", &r.Tag, false}, {"number_interval", &r.NumberInterval, false}} {
		if err := str(s.field, s.dst, s.required); err != nil {
			return r, err
		}
	}
	// A mapped row's repo is "org/repo"; the dataset's own is the name.
	if err := str("repo", &r.Repo, true); err != nil {
		return r, err
	}
	r.Repo = strings.TrimPrefix(r.Repo, r.Org+"/")
	if err := json.Unmarshal(f["number"], &r.Number); err != nil {
		var s string
		if json.Unmarshal(f["number"], &s) != nil {
			return r, bad("number", "want an integer, got %s", dataset.JSONKind(f["number"]))
		}
		if r.Number, err = strconv.Atoi(s); err != nil {
			return r, bad("number", "want an integer, got %q", s)
		}
	}
	var base struct {
		SHA string `json:"sha"`
	}
	if err := decodeObject(f["base"], &base); err != nil || base.SHA == "" {
		return r, bad("base", "want an object with a sha")
	}
	r.BaseSHA = base.SHA
	for _, l := range []struct {
		field string
		dst   *[]string
	}{{"f2p_tests", &r.F2P}, {"p2p_tests", &r.P2P}, {"s2p_tests", &r.S2P}, {"n2p_tests", &r.N2P}} {
		var m map[string]json.RawMessage
		if raw, ok := f[l.field]; ok && string(raw) != "null" {
			if err := decodeObject(raw, &m); err != nil {
				return r, bad(l.field, "want an object of tests, got %s", dataset.JSONKind(raw))
			}
		}
		*l.dst = []string{}
		for k := range m {
			*l.dst = append(*l.dst, k)
		}
		sort.Strings(*l.dst)
	}
	for _, res := range []struct {
		field string
		dst   *MultiSWEResult
	}{{"run_result", &r.RunResult}, {"test_patch_result", &r.TestResult}} {
		raw, ok := f[res.field]
		if !ok || string(raw) == "null" {
			// dataset.py: ValueError("Invalid run_result: None").
			return r, bad(res.field, "missing")
		}
		var tr struct {
			PassedCount  int      `json:"passed_count"`
			FailedCount  int      `json:"failed_count"`
			SkippedCount int      `json:"skipped_count"`
			Passed       []string `json:"passed_tests"`
			Failed       []string `json:"failed_tests"`
			Skipped      []string `json:"skipped_tests"`
		}
		if err := decodeObject(raw, &tr); err != nil {
			return r, bad(res.field, "want a test result object, got %s", dataset.JSONKind(raw))
		}
		got, err := newMultiSWEResult(tr.Passed, tr.Failed, tr.Skipped)
		if err != nil {
			return r, bad(res.field, "%v", err)
		}
		// test_result.py's __post_init__: each count is its set's size.
		if len(got.Passed) != tr.PassedCount || len(got.Failed) != tr.FailedCount || len(got.Skipped) != tr.SkippedCount {
			return r, bad(res.field, "counts (%d, %d, %d) are not the lists' sizes", tr.PassedCount, tr.FailedCount, tr.SkippedCount)
		}
		*res.dst = got
	}
	return r, nil
}

// decodeObject decodes a JSON object, or a string holding one (a Hub
// Parquet column of JSON text).
func decodeObject(raw json.RawMessage, dst any) error {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		raw = json.RawMessage(s)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return fmt.Errorf("not an object")
	}
	return json.Unmarshal(raw, dst)
}

// multiSWEImage is image.py's image_full_name of the row's instance
// image: "<prefix>/<org>_m_<repo>" lowercased, tag "pr-<number>", from an
// instance id "org__repo-number". tag is ignored: the tag is the PR's.
func multiSWEImage(instanceID, namespace, _ string) string {
	org, rest, ok := strings.Cut(instanceID, "__")
	i := strings.LastIndex(rest, "-")
	if !ok || i < 0 {
		return ""
	}
	name := strings.ToLower(org + "_m_" + rest[:i])
	if namespace != "" {
		name = strings.ToLower(namespace) + "/" + name
	}
	return name + ":pr-" + rest[i+1:]
}

// MultiSWEClassOf is the ported instance class of a row, or an error
// wrapping ErrMultiSWERepo naming the class Multi-SWE-bench would look up.
func MultiSWEClassOf(r MultiSWERow) (*MultiSWEClass, error) {
	// instance.py Instance.create: the class registered as
	// org/number_interval, org/repo_tag (dots as underscores) or org/repo.
	name := r.Org + "/" + r.Repo
	switch {
	case r.NumberInterval != "":
		name = r.Org + "/" + r.NumberInterval
	case r.Tag != "":
		name = r.Org + "/" + r.Repo + "_" + strings.ReplaceAll(r.Tag, ".", "_")
	}
	c, ok := multiSWEClasses[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s (ported: %s)", ErrMultiSWERepo, name, strings.Join(MultiSWERepos(), ", "))
	}
	return c, nil
}

// Why a Multi-SWE-bench instance is not resolved, in the order its harness
// checks (report.py Report.check, then gen_report.py gen_eval_reports).
const (
	MultiSWENoTests    = "no-test-results" // the fix run's log gave no test
	MultiSWENewFailure = "new-failure"     // a test passing with the test patch fails with the fix
	MultiSWENothingFix = "nothing-fixed"   // no test goes from not passing to passing
	MultiSWEAnomalous  = "anomalous"       // passes before, missing or skipped with the test patch, fails with the fix
	MultiSWEMissingP2P = "missing-p2p"     // a p2p test of the row is not p2p in the report
	MultiSWEMissingF2P = "missing-f2p"
	MultiSWEMissingS2P = "missing-s2p"
	MultiSWEMissingN2P = "missing-n2p"
	multiSWEStatusNone = "NONE"
	multiSWEStatusPass = "PASS"
	multiSWEStatusFail = "FAIL"
	multiSWEStatusSkip = "SKIP"
)

// MultiSWEVerdict is the harness's report of one instance.
type MultiSWEVerdict struct {
	// Resolved: the report is valid and every test of the row's f2p, p2p,
	// s2p and n2p lists is in the report's list of that kind.
	Resolved bool
	// Valid is Report.check's verdict; Reason says what failed ("" when
	// resolved).
	Valid  bool
	Reason string
	// The report's lists, as Report.check leaves them (fixed tests are
	// filled before the anomaly check, the others after it), sorted.
	Fixed, F2P, P2P, S2P, N2P []string
}

// MultiSWEGrade grades the fix run's results against the row as
// Multi-SWE-bench's evaluation does: the row's run and test-patch results
// with the fix run's make each test's (run, test, fix) statuses;
// Report.check decides validity, then each test the row lists must be of
// the same kind in the report.
func MultiSWEGrade(r MultiSWERow, fix MultiSWEResult) MultiSWEVerdict {
	run, test, fixed := r.RunResult.statuses(), r.TestResult.statuses(), fix.statuses()
	all := map[string]bool{}
	for _, m := range []map[string]string{run, test, fixed} {
		for t := range m {
			all[t] = true
		}
	}
	names := sortedKeys(all)
	st := func(m map[string]string, t string) string {
		if s, ok := m[t]; ok {
			return s
		}
		return multiSWEStatusNone
	}
	v := MultiSWEVerdict{Fixed: []string{}, F2P: []string{}, P2P: []string{}, S2P: []string{}, N2P: []string{}}
	if len(fixed) == 0 {
		v.Reason = MultiSWENoTests
		return v
	}
	for _, t := range names {
		if st(test, t) == multiSWEStatusPass && st(fixed, t) == multiSWEStatusFail {
			v.Reason = MultiSWENewFailure
			return v
		}
	}
	for _, t := range names {
		if st(test, t) != multiSWEStatusPass && st(fixed, t) == multiSWEStatusPass {
			v.Fixed = append(v.Fixed, t)
		}
	}
	if len(v.Fixed) == 0 {
		v.Reason = MultiSWENothingFix
		return v
	}
	for _, t := range names {
		ts := st(test, t)
		if (ts == multiSWEStatusNone || ts == multiSWEStatusSkip) && st(fixed, t) == multiSWEStatusFail && st(run, t) == multiSWEStatusPass {
			v.Reason = MultiSWEAnomalous
			return v
		}
	}
	kinds := multiSWEKinds(test, fixed)
	v.P2P, v.F2P, v.S2P, v.N2P = sortedKeys(kinds["p2p"]), sortedKeys(kinds["f2p"]), sortedKeys(kinds["s2p"]), sortedKeys(kinds["n2p"])
	v.Valid = true
	for _, l := range []struct {
		kind, reason string
		tests        []string
	}{{"p2p", MultiSWEMissingP2P, r.P2P}, {"f2p", MultiSWEMissingF2P, r.F2P}, {"s2p", MultiSWEMissingS2P, r.S2P}, {"n2p", MultiSWEMissingN2P, r.N2P}} {
		for _, t := range l.tests {
			if !kinds[l.kind][t] {
				v.Reason = l.reason
				return v
			}
		}
	}
	v.Resolved = true
	return v
}

// multiSWEKinds sorts the tests that pass with the fix by their status
// with the test patch alone, as Report.check fills p2p_tests, f2p_tests,
// s2p_tests and n2p_tests once the report is valid.
func multiSWEKinds(test, fixed map[string]string) map[string]map[string]bool {
	kinds := map[string]map[string]bool{"p2p": {}, "f2p": {}, "s2p": {}, "n2p": {}}
	of := map[string]string{multiSWEStatusPass: "p2p", multiSWEStatusFail: "f2p", multiSWEStatusSkip: "s2p"}
	for t, s := range fixed {
		if s != multiSWEStatusPass {
			continue
		}
		k, ok := of[test[t]]
		if !ok {
			k = "n2p" // NONE: not in the test-patch run
		}
		kinds[k][t] = true
	}
	return kinds
}

// MultiSWEGradeLog parses the fix run's whole log with the row's class and
// grades it ([MultiSWEGrade]). The error is where the harness records the
// instance as an error rather than a verdict: a class not ported, or a
// parse_log that raises.
func MultiSWEGradeLog(r MultiSWERow, log string) (MultiSWEVerdict, MultiSWEResult, error) {
	c, err := MultiSWEClassOf(r)
	if err != nil {
		return MultiSWEVerdict{}, MultiSWEResult{}, err
	}
	fix, err := c.Parse(log)
	if err != nil {
		return MultiSWEVerdict{}, MultiSWEResult{}, fmt.Errorf("parse the log of %s: %w", r.InstanceID(), err)
	}
	return MultiSWEGrade(r, fix), fix, nil
}
