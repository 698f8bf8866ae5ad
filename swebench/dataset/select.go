package dataset

import (
	"fmt"
	"sort"
)

// WarningKind classifies a Warning.
type WarningKind string

// Warning kinds reported by Select.
const (
	// WarnDuplicatePrediction: a later prediction for the same id replaced
	// an earlier one (the official harness keeps the later one silently).
	WarnDuplicatePrediction WarningKind = "duplicate_prediction"
	// WarnMissingPrediction: a selected instance has no prediction; it is
	// not run and is counted as incomplete. The official harness prints a
	// warning only when -i is given.
	WarnMissingPrediction WarningKind = "missing_prediction"
	// WarnEmptyPatch: the prediction's model_patch is "" or null; it is not
	// run and is counted as an empty-patch instance.
	WarnEmptyPatch WarningKind = "empty_patch"
	// WarnIDFromKey: a prediction in the object-keyed form had no
	// instance_id and its key was used.
	WarnIDFromKey WarningKind = "id_from_key"
	// WarnKeyMismatch: a prediction's key and instance_id differ;
	// instance_id was used.
	WarnKeyMismatch WarningKind = "key_mismatch"
	// WarnMixedModels: predictions name more than one model. Per-instance
	// logs go under each prediction's own model; the official run report
	// is named after the first prediction's model.
	WarnMixedModels WarningKind = "mixed_models"
)

// Warning is a problem that does not stop a run.
type Warning struct {
	Kind       WarningKind
	InstanceID string // "" when not about one instance
	Message    string
}

func (w Warning) String() string { return w.Message }

// Selection is what a run evaluates, decided as the official harness
// decides it.
type Selection struct {
	// Instances is the dataset after the -i filter, in dataset order: the
	// run report's total_instances.
	Instances []Instance
	// Predictions holds every prediction by instance id, a later duplicate
	// replacing an earlier one: the run report's submitted_instances.
	Predictions map[string]Prediction
	// Model is the first prediction's model name, which names the official
	// run report (<model>.<run_id>.json); "" when there are none.
	Model string
	// Run lists the ids of Instances that have a prediction with a
	// non-empty patch, in dataset order: the instances to evaluate.
	Run []string
	// EmptyPatch lists the ids of Instances whose prediction has an empty
	// patch (sorted).
	EmptyPatch []string
	// MissingPrediction lists the ids of Instances without a prediction
	// (sorted).
	MissingPrediction []string
	// Warnings are reported in a stable order: per prediction in input
	// order, then per instance in dataset order.
	Warnings []Warning
}

// Instance returns the selected instance with the given id.
func (s *Selection) Instance(id string) (Instance, bool) {
	for _, in := range s.Instances {
		if in.InstanceID == id {
			return in, true
		}
	}
	return Instance{}, false
}

// Select applies the official harness's selection rules to a full dataset
// split ds, predictions preds and the optional -i ids:
//   - an id in ids that is not in ds is an error (*UnknownIDsError, What
//     "instance"), as the official ValueError;
//   - a prediction whose id is not in ds (the whole split, not just the -i
//     selection) is an error (*UnknownIDsError, What "prediction");
//   - a later duplicate prediction wins, with a warning;
//   - selected instances without a prediction, or with an empty patch, are
//     listed and warned about and are not in Run.
func Select(ds []Instance, preds []Prediction, ids []string) (Selection, error) {
	byID := make(map[string]bool, len(ds))
	for _, in := range ds {
		byID[in.InstanceID] = true
	}
	want := make(map[string]bool, len(ids))
	var unknown []string
	for _, id := range ids {
		if !byID[id] && !want[id] {
			unknown = append(unknown, id)
		}
		want[id] = true
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Selection{}, &UnknownIDsError{What: "instance", IDs: unknown}
	}

	sel := Selection{Predictions: make(map[string]Prediction, len(preds))}
	models := map[string]bool{}
	unknown = nil
	for _, p := range preds {
		if sel.Model == "" {
			sel.Model = p.ModelNameOrPath
		}
		if !models[p.ModelNameOrPath] && len(models) == 1 {
			sel.Warnings = append(sel.Warnings, Warning{Kind: WarnMixedModels,
				Message: fmt.Sprintf("predictions name more than one model (%q at %s, first was %q); the run report is named after the first",
					p.ModelNameOrPath, p.Source, sel.Model)})
		}
		models[p.ModelNameOrPath] = true
		if p.IDFromKey {
			sel.Warnings = append(sel.Warnings, Warning{Kind: WarnIDFromKey, InstanceID: p.InstanceID,
				Message: fmt.Sprintf("%s: prediction has no instance_id; using its key %q (the official harness rejects this file)", p.Source, p.InstanceID)})
		}
		if p.KeyMismatch != "" {
			sel.Warnings = append(sel.Warnings, Warning{Kind: WarnKeyMismatch, InstanceID: p.InstanceID,
				Message: fmt.Sprintf("%s: prediction keyed %q has instance_id %q; using instance_id", p.Source, p.KeyMismatch, p.InstanceID)})
		}
		if prev, dup := sel.Predictions[p.InstanceID]; dup {
			sel.Warnings = append(sel.Warnings, Warning{Kind: WarnDuplicatePrediction, InstanceID: p.InstanceID,
				Message: fmt.Sprintf("%s: duplicate prediction for %s replaces the one at %s", p.Source, p.InstanceID, prev.Source)})
		} else if !byID[p.InstanceID] {
			unknown = append(unknown, p.InstanceID)
		}
		sel.Predictions[p.InstanceID] = p
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Selection{}, &UnknownIDsError{What: "prediction", IDs: unknown}
	}

	for _, in := range ds {
		if len(want) > 0 && !want[in.InstanceID] {
			continue
		}
		sel.Instances = append(sel.Instances, in)
		p, ok := sel.Predictions[in.InstanceID]
		switch {
		case !ok:
			sel.MissingPrediction = append(sel.MissingPrediction, in.InstanceID)
			sel.Warnings = append(sel.Warnings, Warning{Kind: WarnMissingPrediction, InstanceID: in.InstanceID,
				Message: fmt.Sprintf("no prediction for %s", in.InstanceID)})
		case p.EmptyPatch():
			sel.EmptyPatch = append(sel.EmptyPatch, in.InstanceID)
			sel.Warnings = append(sel.Warnings, Warning{Kind: WarnEmptyPatch, InstanceID: in.InstanceID,
				Message: fmt.Sprintf("%s: empty patch for %s; not run", p.Source, in.InstanceID)})
		default:
			sel.Run = append(sel.Run, in.InstanceID)
		}
	}
	sort.Strings(sel.EmptyPatch)
	sort.Strings(sel.MissingPrediction)
	return sel, nil
}
