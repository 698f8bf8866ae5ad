package swebench

import (
	"fmt"
	"sort"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/harness"
)

// UnclaimedError refuses, before anything runs, rows that no task family
// claims ([family.Of]) and for which the run gives no environment: no
// workspace mode asked for (Mode, Image, ImageMap, Repos, ...), no
// SpecOverrides, and a row that names no image, eval script or log parser.
// Run in a guessed environment (the default image, pytest and its parser)
// such rows would be graded, silently, as failures of the prediction.
type UnclaimedError struct {
	// Instances are the refused rows' ids, sorted.
	Instances []string
	// LooksLike maps a refused row's id to the family whose tables know
	// its repository, when one does; that family's name as Config.Family
	// makes the row run.
	LooksLike map[string]string
}

func (e *UnclaimedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no task family claims %s (%s) and the run gives no environment for %s",
		rowsWord(len(e.Instances)), listSomeIDs(e.Instances), pronoun(len(e.Instances)))
	for _, fam := range e.Families() {
		fmt.Fprintf(&b, "; %s looks like %s: Family %q runs it as that family's harness does", rowsOf(e, fam), fam, fam)
	}
	b.WriteString("; Mode workspace runs them as your own repositories")
	return b.String()
}

func (e *UnclaimedError) Unwrap() error { return ErrConfig }

// Families lists the families the refused rows look like, sorted.
func (e *UnclaimedError) Families() []string {
	seen := map[string]bool{}
	for _, f := range e.LooksLike {
		seen[f] = true
	}
	return sortedKeys(seen)
}

func rowsOf(e *UnclaimedError, fam string) string {
	var ids []string
	for id, f := range e.LooksLike {
		if f == fam {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return listSomeIDs(ids)
}

func rowsWord(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

func listSomeIDs(ids []string) string {
	if len(ids) > 5 {
		return strings.Join(ids[:5], ", ") + fmt.Sprintf(" and %d more", len(ids)-5)
	}
	return strings.Join(ids, ", ")
}

// familyOf is the family of one row in the run cfg describes (see
// family.Resolve), with, for a row none claims, the families it looks
// like.
func (cfg Config) familyOf(inst dataset.Instance) (*family.Family, []*family.Family, error) {
	return family.Resolve(inst, family.Hint{Family: cfg.Family, Dataset: cfg.DatasetName})
}

// environmentGiven reports whether the run or the row says how to run a
// row no family claims: workspace mode asked for, an override file, or a
// row in SWE-bench 5's form (it names its log parser).
func (cfg Config) environmentGiven(asked harness.Mode, inst dataset.Instance) bool {
	return asked != "" || cfg.SpecOverrides != "" || inst.Image != "" || inst.EvalScript != "" || inst.LogParser != ""
}
