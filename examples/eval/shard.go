package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
)

// shard is --shard I/N: the I-th (1-based) of N slices. The zero value means
// the whole selection.
//
// A slice is taken from the selected instance ids sorted as strings: shard I
// holds the ids at indexes I-1, I-1+N, I-1+2N, ... The slices are disjoint,
// cover the selection, differ in size by at most one, and depend only on the
// set of ids (not on the dataset's order or the machine), so N processes
// started with the same dataset and -i on different machines split the work
// without talking to each other. Interleaving rather than cutting N
// contiguous blocks spreads each repository's instances (ids share the
// owner__name prefix) over the shards.
type shard struct{ I, N int }

func (s *shard) Set(v string) error {
	a, b, ok := strings.Cut(v, "/")
	if !ok {
		return fmt.Errorf("want I/N such as 2/8, got %q", v)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return fmt.Errorf("want I/N with integers, got %q", v)
	}
	if n < 1 || i < 1 || i > n {
		return fmt.Errorf("want 1 <= I <= N, got %q", v)
	}
	*s = shard{I: i, N: n}
	return nil
}

func (s *shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

func (s shard) enabled() bool { return s.N > 0 }

// slice returns the ids of this shard, sorted. Duplicates count once.
func (s shard) slice(ids []string) []string {
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	uniq := sorted[:0]
	for k, id := range sorted {
		if k == 0 || id != sorted[k-1] {
			uniq = append(uniq, id)
		}
	}
	if !s.enabled() {
		return uniq
	}
	var out []string
	for k := s.I - 1; k < len(uniq); k += s.N {
		out = append(out, uniq[k])
	}
	return out
}

// shardPredictions gives each prediction to exactly one shard, so that the
// shards' run reports are disjoint and merge into the report of the whole
// run (submitted_instances counts every prediction, as the official report
// does): a prediction for an instance of this shard (mine) stays, and one for
// an instance outside the selection (all) stays with the first shard.
func shardPredictions(preds []dataset.Prediction, all, mine []string, first bool) []dataset.Prediction {
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
		if keep[p.InstanceID] || (first && !selected[p.InstanceID]) {
			out = append(out, p)
		}
	}
	return out
}
