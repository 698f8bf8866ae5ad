package dataset

import (
	"encoding/json"
	"fmt"
)

// GoldModel is the model name of GoldPredictions, as in the official harness.
const GoldModel = "gold"

// Prediction is one model output. ModelPatch nil (JSON null or absent) and
// "" both mean an empty patch; such predictions are not run and count as
// empty-patch instances.
type Prediction struct {
	InstanceID      string  `json:"instance_id"`
	ModelNameOrPath string  `json:"model_name_or_path"`
	ModelPatch      *string `json:"model_patch"`

	// Extra holds other members verbatim (the official harness ignores
	// them; keeping them lets tools rewrite a predictions file losslessly).
	Extra map[string]json.RawMessage `json:"-"`

	// Source is where the prediction was read from.
	Source Position `json:"-"`
	// IDFromKey is set when the prediction came from the object-keyed form
	// and had no instance_id member, so the key was used (see LoadPredictions).
	IDFromKey bool `json:"-"`
	// KeyMismatch holds the object key when it differs from instance_id
	// (instance_id wins, as in the official harness).
	KeyMismatch string `json:"-"`
}

// Patch returns the patch text ("" for nil).
func (p Prediction) Patch() string {
	if p.ModelPatch == nil {
		return ""
	}
	return *p.ModelPatch
}

// EmptyPatch reports whether the official harness would skip this
// prediction as an empty patch (model_patch "" or None).
func (p Prediction) EmptyPatch() bool { return p.ModelPatch == nil || *p.ModelPatch == "" }

// LoadPredictions reads predictions from:
//   - a .json file holding a list of prediction objects;
//   - a .json file holding one object keyed by instance id, whose values are
//     prediction objects (the SWE-agent and sb-cli form). The official
//     harness uses the values and requires each to carry instance_id; we
//     accept a value without one and take the key (Prediction.IDFromKey, and
//     Select warns), since that changes no verdict of a file the official
//     harness accepts. When both exist and differ, instance_id wins;
//   - a .jsonl file, one prediction per line.
//
// Any other extension is an error, as in the official harness.
// model_name_or_path is required (the official harness fails with KeyError
// without it) and, like instance_id, must be usable as a file name (see
// SafePathComponent). A missing model_patch is an empty patch (the official
// harness crashes on it). Errors are *InputError values naming file, line
// and field.
func LoadPredictions(path string) ([]Prediction, error) {
	var (
		out  []Prediction
		errs errorList
	)
	readRecords(path, true, &errs, func(rec record) error {
		p, ferr := decodePrediction(rec)
		if ferr != nil {
			return recordError(path, rec, ferr)
		}
		p.Source = Position{File: path, Line: rec.line}
		out = append(out, p)
		return nil
	})
	if err := errs.err(); err != nil {
		return nil, err
	}
	return out, nil
}

func decodePrediction(rec record) (Prediction, *fieldError) {
	fields, ferr := objectFields(rec.raw)
	if ferr != nil {
		return Prediction{}, ferr
	}
	var p Prediction
	id, idSet, err := decodeString(fields["instance_id"], fields["instance_id"] != nil)
	if err != nil {
		return p, &fieldError{"instance_id", err}
	}
	switch {
	case idSet && id != "":
		p.InstanceID = id
		if rec.keyed && rec.key != id {
			p.KeyMismatch = rec.key
		}
	case rec.keyed:
		p.InstanceID = rec.key
		p.IDFromKey = true
	default:
		return p, &fieldError{"instance_id", kindf(ErrMissingField, "required, missing or empty")}
	}
	if _, err := SafePathComponent(KindInstanceID, p.InstanceID); err != nil {
		return p, &fieldError{"instance_id", err}
	}
	model, set, err := decodeString(fields["model_name_or_path"], fields["model_name_or_path"] != nil)
	if err != nil {
		return p, &fieldError{"model_name_or_path", err}
	}
	if !set {
		return p, &fieldError{"model_name_or_path", kindf(ErrMissingField, "required, missing or null")}
	}
	if _, err := SafePathComponent(KindModel, model); err != nil {
		return p, &fieldError{"model_name_or_path", err}
	}
	p.ModelNameOrPath = model
	if esc, off, ok := loneSurrogate(fields["model_patch"]); ok {
		// Python's json.loads keeps the lone surrogate, and the official
		// harness then fails writing patch.diff (UnicodeEncodeError:
		// surrogates not allowed). Refused here rather than replaced by
		// U+FFFD, which would evaluate another patch than the one given.
		return p, &fieldError{"model_patch", kindf(ErrInvalidUTF8,
			"lone surrogate escape %s at byte %d of the value encodes no character, so the patch cannot be written as UTF-8 (the official harness fails the instance with UnicodeEncodeError)", esc, off)}
	}
	patch, set, err := decodeString(fields["model_patch"], fields["model_patch"] != nil)
	if err != nil {
		return p, &fieldError{"model_patch", err}
	}
	if set {
		p.ModelPatch = &patch
	}
	p.Extra = extras(fields, predictionFields)
	return p, nil
}

// UnmarshalJSON decodes one prediction object with the checks of
// LoadPredictions.
func (p *Prediction) UnmarshalJSON(data []byte) error {
	v, ferr := decodePrediction(record{raw: data})
	if ferr != nil {
		if ferr.field != "" {
			return fmt.Errorf("field %q: %w", ferr.field, ferr.err)
		}
		return ferr.err
	}
	*p = v
	return nil
}

// MarshalJSON writes instance_id, model_name_or_path, model_patch, then the
// extra members in sorted order.
func (p Prediction) MarshalJSON() ([]byte, error) {
	var w objectWriter
	w.put("instance_id", p.InstanceID)
	w.put("model_name_or_path", p.ModelNameOrPath)
	w.put("model_patch", p.ModelPatch)
	w.extra(p.Extra, predictionFields)
	return w.finish()
}

var predictionFields = map[string]bool{"instance_id": true, "model_name_or_path": true, "model_patch": true}

// GoldPredictions returns one prediction per instance whose patch is the
// instance's own patch, with model name "gold" (the official -p gold).
//
// The official v4 harness builds gold predictions from the whole split even
// when -i narrows the run (so the run report's submitted_instances is the
// split size); v5 builds them from the -i selection only. Pass the full
// dataset for v4 behaviour, the selected instances for v5.
func GoldPredictions(ds []Instance) []Prediction {
	out := make([]Prediction, len(ds))
	for i, in := range ds {
		patch := in.Patch
		out[i] = Prediction{InstanceID: in.InstanceID, ModelNameOrPath: GoldModel, ModelPatch: &patch, Source: in.Source}
	}
	return out
}
