package grade

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/swebox/swebox/swebench/harness"
)

// RunReport is the run summary <model>.<run_id>.json of the official
// make_run_report.
type RunReport struct {
	// Rules decides the keys: v5 adds the advisory failure classification.
	Rules harness.Rules

	TotalInstances int // dataset size after the -i filter
	// SubmittedInstances counts every prediction, also those for ids the
	// dataset (after -i) lacks.
	SubmittedInstances  int
	CompletedInstances  int // report.json exists (even if unreadable)
	ResolvedInstances   int
	UnresolvedInstances int
	EmptyPatchInstances int
	// ErrorInstances: a non-empty patch but no report.json, or one that is
	// empty, not JSON or lacks resolved.
	ErrorInstances int

	CompletedIDs  []string
	IncompleteIDs []string // dataset ids without a prediction
	EmptyPatchIDs []string
	SubmittedIDs  []string
	ResolvedIDs   []string
	UnresolvedIDs []string
	ErrorIDs      []string

	// v5: failures attributed to the environment or left ambiguous by the
	// log classifier ([ClassifyFailure]). Advisory: the instances stay in
	// their official category and the denominators are unchanged.
	InfraFailureIDs     []string
	AmbiguousFailureIDs []string
	FailureReasons      map[string]string

	// Leftovers, when set, adds unstopped_instances, unstopped_containers
	// and unremoved_images. The official harness writes them when a Docker
	// client was at hand (v5; v4.1.0 inverted the condition and so never
	// writes them in a normal run).
	Leftovers *Leftovers

	// Outcomes, when set, adds swebox_outcomes: each submitted instance's
	// typed outcome ("resolved", "patch_failed", "engine_lost", ...), by
	// id. It is swebox's own key, written last; the official keys before it
	// are unchanged.
	Outcomes map[string]string
	// FlakyVerdicts, when set, adds swebox_flaky_verdicts, after
	// swebox_outcomes: for each instance of a repeated run whose runs
	// disagree on the verdict, each run's outcome, the official run first.
	FlakyVerdicts map[string][]string
	// Retried, when set, adds swebox_retried, last: for each instance
	// evaluated again from scratch because the cluster lost its sandbox,
	// each lost attempt in order. The instance was graded once, by the
	// attempt that followed.
	Retried map[string][]Retry
	// Gradings adds swebox_grading, after everything else: for each
	// instance graded by a rule other than the official one (a task
	// family's own, e.g. SWE-bench-Live's), that rule's name, as its
	// report.json's swebox notes say. Nil when every instance was graded
	// by the official rule.
	Gradings map[string]string
	// Environment adds swebox_environment, after swebox_grading: for each
	// instance whose report.json notes that its run differed from the
	// family's own container (see Notes.Environment), those notes. Nil
	// when none has any.
	Environment map[string][]string
}

// StrictFindings, when set (a run under strict grading), adds
// swebox_strict at the very end: each graded instance's strict findings
// ("refused by <rule>: ...", "restored by <rule>: ..."), by id, an empty
// list when there were none. Set by the evaluator after BuildRunReport.
type StrictFindings map[string][]string

// Retry is one attempt of an instance that the cluster cut short.
type Retry struct {
	Pod    string `json:"pod"`
	Node   string `json:"node"`   // "" when the pod had no node yet
	Reason string `json:"reason"` // e.g. "NodeUnreachable", "Evicted"
	Error  string `json:"error"`
}

// OutcomesKey is the run report key of [RunReport.Outcomes];
// FlakyVerdictsKey that of [RunReport.FlakyVerdicts].
const (
	OutcomesKey      = "swebox_outcomes"
	FlakyVerdictsKey = "swebox_flaky_verdicts"
	// RetriedKey is the run report key of [RunReport.Retried].
	RetriedKey = "swebox_retried"
	// StrictKey is the run report key of [RunReport.Strict].
	StrictKey = "swebox_strict"
	// GradingsKey is the run report key of [RunReport.Gradings].
	GradingsKey = "swebox_grading"
	// EnvironmentKey is the run report key of [RunReport.Environment].
	EnvironmentKey = "swebox_environment"
)

// Leftovers are containers and images of the run still present at its end.
type Leftovers struct {
	Containers []string
	Images     []string
}

// SchemaVersion is the run report's schema_version.
const SchemaVersion = 2

// Prediction is what the run report needs to know of a prediction.
type Prediction struct {
	// EmptyPatch is a model_patch that is "" or null: not run, counted as
	// empty-patch.
	EmptyPatch bool
}

// RunInput is everything the run report is computed from.
type RunInput struct {
	Rules harness.Rules
	// Dataset lists the dataset's instance ids after the -i filter, in
	// dataset order (a repeated id counts twice in total_instances, as in
	// the official code).
	Dataset []string
	// Predictions holds every prediction of the run by instance id.
	Predictions map[string]Prediction
	// Reports holds the contents of each report.json that exists, by
	// instance id; an id without an entry has no report.json.
	Reports map[string][]byte
	// FailureReasons (v5) are classifier reasons ([ClassifyFailure]) for
	// instances that were not resolved. A report.json carrying
	// infra_failure_reason provides one too.
	FailureReasons map[string]string
	Leftovers      *Leftovers
}

// BuildRunReport is make_run_report as a pure function: every dataset id is
// incomplete (no prediction), empty-patch, or looked up in its report.json:
// completed, and then resolved, unresolved, or error when the file is
// empty, not JSON or lacks the instance's "resolved"; an id with a
// non-empty patch and no report.json is an error.
func BuildRunReport(in RunInput) RunReport {
	r := RunReport{Rules: in.Rules.OrDefault(), TotalInstances: len(in.Dataset), Leftovers: in.Leftovers}
	completed, incomplete, empty, resolved, unresolved, errored := set{}, set{}, set{}, set{}, set{}, set{}
	reasons := map[string]string{}
	for _, id := range in.Dataset {
		pred, ok := in.Predictions[id]
		switch {
		case !ok:
			incomplete.add(id)
			continue
		case pred.EmptyPatch:
			empty.add(id)
			continue
		}
		raw, exists := in.Reports[id]
		if !exists {
			errored.add(id)
			continue
		}
		completed.add(id)
		isResolved, reason, ok := readResolved(raw, id)
		switch {
		case !ok:
			errored.add(id)
		case isResolved:
			resolved.add(id)
		default:
			unresolved.add(id)
		}
		if reason != "" {
			reasons[id] = reason
		}
		notes := readNotes(raw, id)
		if g := notes.Grading; g != "" {
			if r.Gradings == nil {
				r.Gradings = map[string]string{}
			}
			r.Gradings[id] = g
		}
		if env := notes.Environment; len(env) > 0 {
			if r.Environment == nil {
				r.Environment = map[string][]string{}
			}
			r.Environment[id] = env
		}
	}
	r.SubmittedInstances = len(in.Predictions)
	for id := range in.Predictions {
		r.SubmittedIDs = append(r.SubmittedIDs, id)
	}
	sort.Strings(r.SubmittedIDs)
	r.CompletedIDs, r.IncompleteIDs, r.EmptyPatchIDs = completed.sorted(), incomplete.sorted(), empty.sorted()
	r.ResolvedIDs, r.UnresolvedIDs, r.ErrorIDs = resolved.sorted(), unresolved.sorted(), errored.sorted()
	r.CompletedInstances, r.ResolvedInstances, r.UnresolvedInstances = len(completed), len(resolved), len(unresolved)
	r.EmptyPatchInstances, r.ErrorInstances = len(empty), len(errored)
	if r.Rules == harness.V5 {
		for id, reason := range in.FailureReasons {
			if _, ok := reasons[id]; !ok {
				reasons[id] = reason
			}
		}
		r.FailureReasons = map[string]string{}
		infra, ambiguous := set{}, set{}
		for id, reason := range reasons {
			if resolved[id] || (!unresolved[id] && !errored[id]) {
				continue
			}
			r.FailureReasons[id] = reason
			if FailureTier(reason) == TierEnvironment {
				infra.add(id)
			} else {
				ambiguous.add(id)
			}
		}
		r.InfraFailureIDs, r.AmbiguousFailureIDs = infra.sorted(), ambiguous.sorted()
	}
	return r
}

// reportNotes are the swebox notes of a report.json the run report reads.
type reportNotes struct {
	Grading     string   `json:"grading"`
	Environment []string `json:"environment"`
}

// readNotes is the swebox notes of a report.json for id, empty for an
// unreadable report.
func readNotes(raw []byte, id string) reportNotes {
	var rep map[string]struct {
		Swebox reportNotes `json:"swebox"`
	}
	if json.Unmarshal(raw, &rep) != nil {
		return reportNotes{}
	}
	return rep[id].Swebox
}

// readResolved applies the official reading of a report.json: content
// stripped of whitespace must be non-empty JSON whose [id]["resolved"] is
// then taken for its truth value. It also returns a v5
// infra_failure_reason when the report has one.
func readResolved(raw []byte, id string) (resolved bool, reason string, ok bool) {
	raw = bytes.TrimFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
	if len(raw) == 0 {
		return false, "", false
	}
	var doc map[string]map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return false, "", false
	}
	body, ok := doc[id]
	if !ok {
		return false, "", false
	}
	v, ok := body["resolved"]
	if !ok {
		return false, "", false
	}
	if s, isString := body["infra_failure_reason"].(string); isString {
		reason = s
	}
	return truthy(v), reason, true
}

// truthy is Python's bool() of a decoded JSON value.
func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return false
}

type set map[string]bool

func (s set) add(id string) { s[id] = true }

func (s set) sorted() []string {
	out := make([]string, 0, len(s))
	for id := range s {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// RunReportFileName is the official name of the run report:
// "<model with / replaced by __>.<run_id>.json".
func RunReportFileName(model, runID string) string {
	return strings.ReplaceAll(model, "/", "__") + "." + runID + ".json"
}

// Encode returns the run report byte for byte as the official harness
// writes it: print(json.dumps(report, indent=4)), so with a final newline.
// Keys follow the official order; v5 puts its counts after
// unresolved_instances, its id lists after unresolved_ids and
// failure_reasons before error_ids.
func (r RunReport) Encode() []byte { return r.EncodeWithStrict(nil) }

// EncodeWithStrict is Encode with swebox_strict added last when st is not
// nil.
func (r RunReport) EncodeWithStrict(st StrictFindings) []byte {
	v5 := r.Rules.OrDefault() == harness.V5
	var o pyObject
	o.add("total_instances", pyInt(r.TotalInstances))
	o.add("submitted_instances", pyInt(r.SubmittedInstances))
	o.add("completed_instances", pyInt(r.CompletedInstances))
	o.add("resolved_instances", pyInt(r.ResolvedInstances))
	o.add("unresolved_instances", pyInt(r.UnresolvedInstances))
	if v5 {
		o.add("infra_failure_instances", pyInt(len(r.InfraFailureIDs)))
		o.add("ambiguous_failure_instances", pyInt(len(r.AmbiguousFailureIDs)))
	}
	o.add("empty_patch_instances", pyInt(r.EmptyPatchInstances))
	o.add("error_instances", pyInt(r.ErrorInstances))
	o.add("completed_ids", pyList(r.CompletedIDs))
	o.add("incomplete_ids", pyList(r.IncompleteIDs))
	o.add("empty_patch_ids", pyList(r.EmptyPatchIDs))
	o.add("submitted_ids", pyList(r.SubmittedIDs))
	o.add("resolved_ids", pyList(r.ResolvedIDs))
	o.add("unresolved_ids", pyList(r.UnresolvedIDs))
	if v5 {
		o.add("infra_failure_ids", pyList(r.InfraFailureIDs))
		o.add("ambiguous_failure_ids", pyList(r.AmbiguousFailureIDs))
		o.add("failure_reasons", pyStringMap(r.FailureReasons))
	}
	o.add("error_ids", pyList(r.ErrorIDs))
	o.add("schema_version", pyInt(SchemaVersion))
	if r.Leftovers != nil {
		o.add("unstopped_instances", pyInt(len(r.Leftovers.Containers)))
		o.add("unstopped_containers", pyList(sortedCopy(r.Leftovers.Containers)))
		o.add("unremoved_images", pyList(sortedCopy(r.Leftovers.Images)))
	}
	if r.Outcomes != nil {
		o.add(OutcomesKey, pyStringMap(r.Outcomes))
	}
	if r.FlakyVerdicts != nil {
		o.add(FlakyVerdictsKey, pySorted(r.FlakyVerdicts, func(v []string) pyValue { return pyList(v) }))
	}
	if r.Retried != nil {
		o.add(RetriedKey, pySorted(r.Retried, func(as []Retry) pyValue {
			var l pyObjects
			for _, a := range as {
				var e pyObject
				e.add("pod", pyString(a.Pod))
				e.add("node", pyString(a.Node))
				e.add("reason", pyString(a.Reason))
				e.add("error", pyString(a.Error))
				l = append(l, e)
			}
			return l
		}))
	}
	if r.Gradings != nil {
		o.add(GradingsKey, pyStringMap(r.Gradings))
	}
	if r.Environment != nil {
		o.add(EnvironmentKey, pySorted(r.Environment, func(v []string) pyValue { return pyList(v) }))
	}
	if st != nil {
		o.add(StrictKey, pySorted(st, func(v []string) pyValue { return pyList(nonNil(v)) }))
	}
	return append(pyDumps(o), '\n')
}

// pyStringMap is m as a JSON object with sorted keys.
func pyStringMap(m map[string]string) pyObject {
	return pySorted(m, func(v string) pyValue { return pyString(v) })
}

// pySorted is m as a JSON object with sorted keys, each value written by
// value.
func pySorted[V any](m map[string]V, value func(V) pyValue) pyObject {
	var o pyObject
	for _, k := range slices.Sorted(maps.Keys(m)) {
		o.add(k, value(m[k]))
	}
	return o
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

// runReportJSON is the run report as read back.
type runReportJSON struct {
	TotalInstances      int               `json:"total_instances"`
	SubmittedInstances  int               `json:"submitted_instances"`
	CompletedInstances  int               `json:"completed_instances"`
	ResolvedInstances   int               `json:"resolved_instances"`
	UnresolvedInstances int               `json:"unresolved_instances"`
	EmptyPatchInstances int               `json:"empty_patch_instances"`
	ErrorInstances      int               `json:"error_instances"`
	CompletedIDs        []string          `json:"completed_ids"`
	IncompleteIDs       []string          `json:"incomplete_ids"`
	EmptyPatchIDs       []string          `json:"empty_patch_ids"`
	SubmittedIDs        []string          `json:"submitted_ids"`
	ResolvedIDs         []string          `json:"resolved_ids"`
	UnresolvedIDs       []string          `json:"unresolved_ids"`
	ErrorIDs            []string          `json:"error_ids"`
	SchemaVersion       int               `json:"schema_version"`
	InfraFailureIDs     *[]string         `json:"infra_failure_ids"`
	AmbiguousFailureIDs []string          `json:"ambiguous_failure_ids"`
	FailureReasons      map[string]string `json:"failure_reasons"`
	UnstoppedContainers *[]string         `json:"unstopped_containers"`
	UnremovedImages     []string          `json:"unremoved_images"`
	Outcomes            map[string]string `json:"swebox_outcomes"`
	flakyJSON
}

// flakyJSON is read apart so that the official keys' block stays as is.
type flakyJSON struct {
	FlakyVerdicts map[string][]string `json:"swebox_flaky_verdicts"`
	Retried       map[string][]Retry  `json:"swebox_retried"`
	Gradings      map[string]string   `json:"swebox_grading"`
	Environment   map[string][]string `json:"swebox_environment"`
}

// UnmarshalJSON reads a run report written by the official harness or by
// [RunReport.Encode]. One with infra_failure_ids is read as v5.
func (r *RunReport) UnmarshalJSON(data []byte) error {
	var j runReportJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("read run report: %w", err)
	}
	if j.SchemaVersion != SchemaVersion {
		return fmt.Errorf("read run report: schema_version %d, want %d", j.SchemaVersion, SchemaVersion)
	}
	*r = RunReport{
		Rules: harness.V4, TotalInstances: j.TotalInstances, SubmittedInstances: j.SubmittedInstances,
		CompletedInstances: j.CompletedInstances, ResolvedInstances: j.ResolvedInstances,
		UnresolvedInstances: j.UnresolvedInstances, EmptyPatchInstances: j.EmptyPatchInstances,
		ErrorInstances: j.ErrorInstances, CompletedIDs: j.CompletedIDs, IncompleteIDs: j.IncompleteIDs,
		EmptyPatchIDs: j.EmptyPatchIDs, SubmittedIDs: j.SubmittedIDs, ResolvedIDs: j.ResolvedIDs,
		UnresolvedIDs: j.UnresolvedIDs, ErrorIDs: j.ErrorIDs, Outcomes: j.Outcomes, FlakyVerdicts: j.FlakyVerdicts,
		Retried: j.Retried, Gradings: j.Gradings, Environment: j.Environment,
	}
	if j.InfraFailureIDs != nil {
		r.Rules, r.InfraFailureIDs = harness.V5, *j.InfraFailureIDs
		r.AmbiguousFailureIDs, r.FailureReasons = j.AmbiguousFailureIDs, j.FailureReasons
	}
	if j.UnstoppedContainers != nil {
		r.Leftovers = &Leftovers{Containers: *j.UnstoppedContainers, Images: j.UnremovedImages}
	}
	return nil
}

// OverlapError reports an instance id present in two shards' run reports.
type OverlapError struct {
	ID     string
	Shards [2]int // indexes of the two reports, in the order given
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("merge run reports: instance %s is in both shard %d and shard %d", e.ID, e.Shards[0], e.Shards[1])
}

// MergeRunReports combines the run reports of shards of one run: counts
// are added and id lists joined. The shards must cover disjoint instances
// (dataset ids and submitted ids): an id in two shards is an
// [*OverlapError]. They must also use the same rules.
func MergeRunReports(reports ...RunReport) (RunReport, error) {
	if len(reports) == 0 {
		return RunReport{}, fmt.Errorf("merge run reports: no report")
	}
	owner := map[string]int{}
	for i, r := range reports {
		if r.Rules.OrDefault() != reports[0].Rules.OrDefault() {
			return RunReport{}, fmt.Errorf("merge run reports: shard %d uses rules %s, shard 0 %s", i, r.Rules.OrDefault(), reports[0].Rules.OrDefault())
		}
		seen := set{}
		for _, ids := range [][]string{r.CompletedIDs, r.IncompleteIDs, r.EmptyPatchIDs, r.ErrorIDs, r.SubmittedIDs} {
			for _, id := range ids {
				seen.add(id)
			}
		}
		for _, id := range seen.sorted() {
			if j, ok := owner[id]; ok {
				return RunReport{}, &OverlapError{ID: id, Shards: [2]int{j, i}}
			}
			owner[id] = i
		}
	}
	m := RunReport{Rules: reports[0].Rules.OrDefault()}
	var lists [11][]string
	for _, r := range reports {
		m.TotalInstances += r.TotalInstances
		m.SubmittedInstances += r.SubmittedInstances
		m.CompletedInstances += r.CompletedInstances
		m.ResolvedInstances += r.ResolvedInstances
		m.UnresolvedInstances += r.UnresolvedInstances
		m.EmptyPatchInstances += r.EmptyPatchInstances
		m.ErrorInstances += r.ErrorInstances
		for i, ids := range [][]string{r.CompletedIDs, r.IncompleteIDs, r.EmptyPatchIDs, r.SubmittedIDs,
			r.ResolvedIDs, r.UnresolvedIDs, r.ErrorIDs, r.InfraFailureIDs, r.AmbiguousFailureIDs} {
			lists[i] = append(lists[i], ids...)
		}
		if r.Leftovers != nil {
			lists[9] = append(lists[9], r.Leftovers.Containers...)
			lists[10] = append(lists[10], r.Leftovers.Images...)
			if m.Leftovers == nil {
				m.Leftovers = &Leftovers{}
			}
		}
		for id, reason := range r.FailureReasons {
			if m.FailureReasons == nil {
				m.FailureReasons = map[string]string{}
			}
			m.FailureReasons[id] = reason
		}
		for id, outcome := range r.Outcomes {
			if m.Outcomes == nil {
				m.Outcomes = map[string]string{}
			}
			m.Outcomes[id] = outcome
		}
		for id, runs := range r.FlakyVerdicts {
			if m.FlakyVerdicts == nil {
				m.FlakyVerdicts = map[string][]string{}
			}
			m.FlakyVerdicts[id] = runs
		}
		for id, rs := range r.Retried {
			if m.Retried == nil {
				m.Retried = map[string][]Retry{}
			}
			m.Retried[id] = rs
		}
		for id, g := range r.Gradings {
			if m.Gradings == nil {
				m.Gradings = map[string]string{}
			}
			m.Gradings[id] = g
		}
		for id, env := range r.Environment {
			if m.Environment == nil {
				m.Environment = map[string][]string{}
			}
			m.Environment[id] = env
		}
	}
	for i := range lists {
		lists[i] = sortedCopy(lists[i])
	}
	m.CompletedIDs, m.IncompleteIDs, m.EmptyPatchIDs, m.SubmittedIDs = lists[0], lists[1], lists[2], lists[3]
	m.ResolvedIDs, m.UnresolvedIDs, m.ErrorIDs = lists[4], lists[5], lists[6]
	m.InfraFailureIDs, m.AmbiguousFailureIDs = lists[7], lists[8]
	if m.Leftovers != nil {
		m.Leftovers.Containers, m.Leftovers.Images = lists[9], dedupe(lists[10])
	}
	return m, nil
}

// dedupe removes repeats from a sorted list (shards may share an image).
func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
