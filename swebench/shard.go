package swebench

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
)

// Shard is the Index-th (1-based) of Count slices of a run's selection. The
// zero value is the whole selection.
//
// A slice is taken from the selected instance ids sorted as strings: shard
// I holds the ids at indexes I-1, I-1+N, I-1+2N, ... The slices are
// disjoint, cover the selection, differ in size by at most one, and depend
// only on the set of ids (not on the dataset's order or the machine), so N
// processes started with the same dataset and selection on different
// machines split the work without talking to each other. Interleaving
// rather than cutting N contiguous blocks spreads each repository's
// instances (ids share the owner__name prefix) over the shards.
//
// Predictions go to exactly one shard, so that the shards' run reports are
// disjoint and merge into the report of the whole run (submitted_instances
// counts every prediction, as the official report does): a prediction for
// an instance of the shard stays with it, and one for an instance outside
// the selection stays with shard 1. Every shard checks the whole
// predictions list, so that all fail alike on a bad one.
type Shard struct{ Index, Count int }

// ParseShard reads "I/N", e.g. "2/8".
func ParseShard(v string) (Shard, error) {
	a, b, ok := strings.Cut(v, "/")
	if !ok {
		return Shard{}, fmt.Errorf("want I/N such as 2/8, got %q", v)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("want I/N with integers, got %q", v)
	}
	s := Shard{Index: i, Count: n}
	if err := s.check(); err != nil {
		return Shard{}, err
	}
	return s, nil
}

func (s Shard) check() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 || s.Index < 1 || s.Index > s.Count {
		return fmt.Errorf("want 1 <= I <= N, got %q", s.String())
	}
	return nil
}

// String is "I/N", or "" for the whole selection.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Enabled reports whether s is a slice rather than the whole selection.
func (s Shard) Enabled() bool { return s.Count > 0 }

// Slice returns the ids of this shard, sorted. Duplicates count once.
func (s Shard) Slice(ids []string) []string {
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	uniq := sorted[:0]
	for k, id := range sorted {
		if k == 0 || id != sorted[k-1] {
			uniq = append(uniq, id)
		}
	}
	if !s.Enabled() {
		return uniq
	}
	var out []string
	for k := s.Index - 1; k < len(uniq); k += s.Count {
		out = append(out, uniq[k])
	}
	return out
}

// predictions keeps the predictions of this shard: those for mine, and on
// shard 1 those for instances outside the selection all.
func (s Shard) predictions(preds []dataset.Prediction, all, mine []string) []dataset.Prediction {
	selected := make(map[string]bool, len(all))
	for _, id := range all {
		selected[id] = true
	}
	keep := make(map[string]bool, len(mine))
	for _, id := range mine {
		keep[id] = true
	}
	var out []dataset.Prediction
	for _, p := range preds {
		if keep[p.InstanceID] || (s.Index == 1 && !selected[p.InstanceID]) {
			out = append(out, p)
		}
	}
	return out
}

// EmptyShardError is a shard that holds none of the selected instances:
// there is nothing to run (more shards than instances).
type EmptyShardError struct {
	Shard    Shard
	Selected int // instances in the selection before sharding
}

func (e *EmptyShardError) Error() string {
	return fmt.Sprintf("shard %s holds none of the %d selected instances", e.Shard, e.Selected)
}
