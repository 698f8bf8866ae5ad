package grade

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// InstanceReport is one instance's report.json.
type InstanceReport struct {
	InstanceID string
	// The official keys.
	PatchIsNone              bool
	PatchExists              bool
	PatchSuccessfullyApplied bool // in fact: the log was usable
	Resolved                 bool
	// TestsStatus is present only when the log was usable.
	TestsStatus *TestsStatus
	// Rules decides the keys: v5 adds infra_failure (and
	// infra_failure_reason when set).
	Rules              harness.Rules
	InfraFailure       bool
	InfraFailureReason string
	// Notes are swebox's additions, written under the key "swebox" only
	// when there is something to say.
	Notes Notes

	// Not written: how the log was read, and what the parser found.
	Evaluation Evaluation
	StatusMap  logparse.StatusMap
}

// Notes are observations beyond the official report. They never change
// the verdict.
type Notes struct {
	// Forgery: signs that the tests printed the harness's markers (v5).
	Forgery []string
	// CountCheck: disagreements between the parsed outcomes and the test
	// runner's own closing counts.
	CountCheck []string
	// Grading names the rule that graded when it is not the official one
	// (a family's own, registered with [RegisterRule]).
	Grading harness.Grading
	// Strict is set under strict grading (package strict): unlike the
	// other notes it can change the verdict, from resolved to not.
	Strict *StrictNote
	// Environment: where the sandbox's run differed from the family's
	// own container in a way the verdict does not rest on, e.g. an
	// install step that failed without the network upstream has.
	Environment []string
}

// StrictNote is what strict grading found, written under "swebox" as
// "strict".
type StrictNote struct {
	// Channel is what the verdict rests on: "runner-report" (the test
	// runner's own signed report checked against the log) or "log".
	Channel string `json:"channel"`
	// OfficialResolved is the verdict of the official rules.
	OfficialResolved bool `json:"official_resolved"`
	// Findings, refusals first: "refused by <rule>: ..." (the instance is
	// not resolved) or "restored by <rule>: <path> (why)".
	Findings []string `json:"findings"`
}

// Empty reports whether there is no note.
func (n Notes) Empty() bool {
	return len(n.Forgery) == 0 && len(n.CountCheck) == 0 && n.Grading == "" && n.Strict == nil && len(n.Environment) == 0
}

// NotesKey is the report.json key of [Notes].
const NotesKey = "swebox"

// Encode returns report.json byte for byte as the official harness writes
// it: {"<instance_id>": {...}} through json.dumps(indent=4), no trailing
// newline.
func (r InstanceReport) Encode() []byte {
	var body pyObject
	body.add("patch_is_None", pyBool(r.PatchIsNone))
	body.add("patch_exists", pyBool(r.PatchExists))
	body.add("patch_successfully_applied", pyBool(r.PatchSuccessfullyApplied))
	body.add("resolved", pyBool(r.Resolved))
	if r.Rules.OrDefault() == harness.V5 {
		body.add("infra_failure", pyBool(r.InfraFailure))
		if r.InfraFailureReason != "" {
			body.add("infra_failure_reason", pyString(r.InfraFailureReason))
		}
	}
	if r.TestsStatus != nil {
		var ts pyObject
		for _, c := range []struct {
			key string
			r   Results
		}{
			{"FAIL_TO_PASS", r.TestsStatus.FailToPass},
			{"PASS_TO_PASS", r.TestsStatus.PassToPass},
			{"FAIL_TO_FAIL", r.TestsStatus.FailToFail},
			{"PASS_TO_FAIL", r.TestsStatus.PassToFail},
		} {
			ts.add(c.key, pyObject{{"success", pyList(c.r.Success)}, {"failure", pyList(c.r.Failure)}})
		}
		body.add("tests_status", ts)
	}
	if !r.Notes.Empty() {
		var notes pyObject
		if len(r.Notes.Forgery) > 0 {
			notes.add("forgery", pyList(r.Notes.Forgery))
		}
		if len(r.Notes.CountCheck) > 0 {
			notes.add("count_check", pyList(r.Notes.CountCheck))
		}
		if r.Notes.Grading != "" {
			notes.add("grading", pyString(string(r.Notes.Grading)))
		}
		if st := r.Notes.Strict; st != nil {
			notes.add("strict", pyObject{{"channel", pyString(st.Channel)},
				{"official_resolved", pyBool(st.OfficialResolved)}, {"findings", pyList(nonNil(st.Findings))}})
		}
		if len(r.Notes.Environment) > 0 {
			notes.add("environment", pyList(r.Notes.Environment))
		}
		body.add(NotesKey, notes)
	}
	return pyDumps(pyObject{{r.InstanceID, body}})
}

// MarshalJSON writes the same document as [InstanceReport.Encode]
// (encoding/json re-escapes it; use Encode for the official bytes).
func (r InstanceReport) MarshalJSON() ([]byte, error) { return r.Encode(), nil }

// reportBody is the shape of one report.json entry when read back.
type reportBody struct {
	PatchIsNone              bool                           `json:"patch_is_None"`
	PatchExists              bool                           `json:"patch_exists"`
	PatchSuccessfullyApplied bool                           `json:"patch_successfully_applied"`
	Resolved                 bool                           `json:"resolved"`
	InfraFailure             *bool                          `json:"infra_failure"`
	InfraFailureReason       string                         `json:"infra_failure_reason"`
	TestsStatus              map[string]map[string][]string `json:"tests_status"`
	Notes                    *struct {
		Forgery     []string    `json:"forgery"`
		CountCheck  []string    `json:"count_check"`
		Grading     string      `json:"grading"`
		Strict      *StrictNote `json:"strict"`
		Environment []string    `json:"environment"`
	} `json:"swebox"`
}

// ErrNotOneInstance is returned when a report.json does not hold exactly
// one instance.
var ErrNotOneInstance = errors.New("report.json must hold exactly one instance")

// UnmarshalJSON reads a report.json written by the official harness or by
// [InstanceReport.Encode]. A report with infra_failure is read as v5.
func (r *InstanceReport) UnmarshalJSON(data []byte) error {
	var outer map[string]json.RawMessage
	if err := json.Unmarshal(data, &outer); err != nil {
		return fmt.Errorf("read report.json: %w", err)
	}
	if len(outer) != 1 {
		return ErrNotOneInstance
	}
	for id, raw := range outer {
		var b reportBody
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("read report.json of %s: %w", id, err)
		}
		*r = InstanceReport{
			InstanceID: id, PatchIsNone: b.PatchIsNone, PatchExists: b.PatchExists,
			PatchSuccessfullyApplied: b.PatchSuccessfullyApplied, Resolved: b.Resolved,
			Rules: harness.V4, InfraFailureReason: b.InfraFailureReason,
		}
		if b.InfraFailure != nil {
			r.Rules, r.InfraFailure = harness.V5, *b.InfraFailure
		}
		if b.TestsStatus != nil {
			get := func(k string) Results {
				return Results{Success: nonNil(b.TestsStatus[k]["success"]), Failure: nonNil(b.TestsStatus[k]["failure"])}
			}
			r.TestsStatus = &TestsStatus{
				FailToPass: get("FAIL_TO_PASS"), PassToPass: get("PASS_TO_PASS"),
				FailToFail: get("FAIL_TO_FAIL"), PassToFail: get("PASS_TO_FAIL"),
			}
		}
		if b.Notes != nil {
			r.Notes = Notes{Forgery: b.Notes.Forgery, CountCheck: b.Notes.CountCheck, Grading: harness.Grading(b.Notes.Grading), Strict: b.Notes.Strict, Environment: b.Notes.Environment}
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
