package swebench

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/swebox/swebox/swebench/dataset"
)

func TestShardSlice(t *testing.T) {
	ids := []string{"d", "a", "c", "b", "e", "a"}
	type testCase struct {
		name  string
		shard Shard
		want  []string
	}
	cases := []testCase{
		{"no shard keeps all, sorted and unique", Shard{}, []string{"a", "b", "c", "d", "e"}},
		{"1 of 1", Shard{1, 1}, []string{"a", "b", "c", "d", "e"}},
		{"1 of 2", Shard{1, 2}, []string{"a", "c", "e"}},
		{"2 of 2", Shard{2, 2}, []string{"b", "d"}},
		{"3 of 3", Shard{3, 3}, []string{"c"}},
		{"more shards than ids", Shard{7, 7}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.shard.Slice(ids))
		})
	}
}

// The shards of any N partition the selection, whatever order it comes in.
func TestShardsPartition(t *testing.T) {
	ids := []string{"x__y-10", "x__y-2", "a__b-1", "a__b-3", "m__n-7", "a__b-2", "x__y-1"}
	reversed := make([]string, len(ids))
	for i, id := range ids {
		reversed[len(ids)-1-i] = id
	}
	for n := 1; n <= len(ids)+1; n++ {
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			s := Shard{Index: i, Count: n}
			got := s.Slice(ids)
			assert.Equal(t, got, s.Slice(reversed), "shard %d/%d depends on input order", i, n)
			assert.LessOrEqual(t, len(got), (len(ids)+n-1)/n)
			for _, id := range got {
				seen[id]++
			}
		}
		assert.Len(t, seen, len(ids), "N=%d", n)
		for id, k := range seen {
			assert.Equal(t, 1, k, "N=%d: %s in %d shards", n, id, k)
		}
	}
}

// Every prediction goes to exactly one shard, also those for instances that
// -i left out (to the first shard).
func TestShardPredictions(t *testing.T) {
	preds := []dataset.Prediction{{InstanceID: "a"}, {InstanceID: "b"}, {InstanceID: "c"}, {InstanceID: "d"}, {InstanceID: "e"}}
	selected := []string{"a", "b", "c", "e"} // -i left d out
	for n := 1; n <= 5; n++ {
		count := map[string]int{}
		for i := 1; i <= n; i++ {
			s := Shard{Index: i, Count: n}
			mine := s.Slice(selected)
			got := s.predictions(preds, selected, mine)
			for _, p := range got {
				count[p.InstanceID]++
			}
			for _, id := range mine {
				assert.Contains(t, got, dataset.Prediction{InstanceID: id}, "shard %s keeps its own predictions", s.String())
			}
		}
		assert.Equal(t, map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1}, count, "N=%d", n)
	}
}
