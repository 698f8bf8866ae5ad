package family

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// Family is one SWE task family: everything swebox needs to evaluate its
// rows as the family's own harness does. Each family registers one in a
// file of its own ([Register], from an init function).
type Family struct {
	// Name is the registry key, what Config.Family and eval --family take:
	// lower case, e.g. "swe-bench-live".
	Name string
	// Aliases are other names Lookup accepts.
	Aliases []string
	// Title names the family for people.
	Title string
	// Datasets are the family's published datasets.
	Datasets []Dataset
	// Upstream is the harness whose verdicts the family reproduces.
	Upstream Upstream
	// Claim says how a row is the family's (see [Claim]).
	Claim func(dataset.Instance) Claim
	// Namespace is the registry namespace of the family's prebuilt images
	// when the run names none.
	Namespace string
	// Image names a row's prebuilt image from its instance id, the run's
	// namespace and tag; nil for the official naming
	// ([harness.InstanceImage]). A row that names its own image
	// (dataset.Instance.Image) runs in it.
	Image func(instanceID, namespace, tag string) string
	// Spec builds a row's test spec (where its test commands and parser
	// come from) with the run's spec options; nil for the official tables
	// ([spec.For]).
	Spec func(dataset.Instance, ...spec.Option) (spec.TestSpec, error)
	// Grading is the rule that decides resolved; "" is the official one.
	Grading harness.Grading
	// Rules is the official release whose log reading and grading the
	// family's harness keeps, whatever the run's rules; "" follows the
	// run.
	Rules harness.Rules
	// Container is what the family's sandboxes need.
	Container Container
	// HostCheckout: the family's harness checks each row's revision out
	// inside the container over the network (SWE-smith's instance
	// branches); the evaluator checks it out on the host instead (the
	// row's repo at base_commit, else base_ref) and copies it over the
	// image's /testbed (whose untracked files stay, as git checkout
	// leaves them) in a sandbox whose network stays off: the row runs in
	// workspace mode in its family's image. A run that asks for prebuilt
	// mode is refused for such rows ([ErrHostCheckout]).
	HostCheckout bool
	// NotRunnable says why the evaluator cannot yet run the family's rows
	// as its harness runs them (its logs can still be graded); "" when it
	// can. The evaluator refuses such rows with ErrNotRunnable rather than
	// run them another way.
	NotRunnable string
}

// ErrHostCheckout: the family's rows need the host to check their
// revision out (Family.HostCheckout), which prebuilt mode does not do.
var ErrHostCheckout = errors.New("the family's rows are checked out on the host (workspace mode), not run from the image's own checkout")

// ErrNotRunnable: the evaluator cannot yet run the family's rows as its
// harness runs them (Family.NotRunnable says why).
var ErrNotRunnable = errors.New("the evaluator cannot run this family's rows yet")

// Dataset is one published dataset of a family.
type Dataset struct {
	// ID is the Hugging Face dataset id, "owner/name".
	ID string
	// Aliases are the short names the family's harness accepts for it.
	Aliases []string
	// Splits are its published splits; Configs its configurations
	// (subsets), if any.
	Splits  []string
	Configs []string
}

// Upstream names the harness a family's fidelity was proven against.
type Upstream struct {
	// Repository is "owner/name" on GitHub; Commit the commit compared with.
	Repository, Commit string
}

// Container is what a family's sandboxes need beyond the defaults.
type Container struct {
	// Workdir is where the repository lives; "" is [harness.RepoDir].
	Workdir string
}

// Claim is how strongly a family claims a row.
type Claim int

const (
	// ClaimNone: the row is not the family's.
	ClaimNone Claim = iota
	// ClaimLooksLike: the family's tables know the row's repository, but
	// nothing in the row says it is the family's (a SWE-Gym repository is
	// also a repository anyone may evaluate their own way). The row is
	// refused unless the run names the family or an environment.
	ClaimLooksLike
	// ClaimRepo: the family's own tables know the repository and decide
	// how it runs (SWE-bench's tables).
	ClaimRepo
	// ClaimRow: fields only the family's rows carry say it is the
	// family's (SWE-bench-Live's test_cmds, SWE-rebench's install_config,
	// a SWE-bench 5 row's image).
	ClaimRow
)

// ImageName is the row's prebuilt image under namespace and tag.
func (f *Family) ImageName(inst dataset.Instance, namespace, tag string) string {
	if inst.Image != "" {
		return inst.Image
	}
	if f.Image == nil {
		return harness.InstanceImage(inst.InstanceID, namespace, tag)
	}
	return f.Image(inst.InstanceID, namespace, tag)
}

// TestSpec is the row's test spec as the family builds it, with its image
// naming and grading rule.
func (f *Family) TestSpec(inst dataset.Instance, opts ...spec.Option) (spec.TestSpec, error) {
	if f.Image != nil {
		opts = append(opts, spec.WithImageName(f.Image))
	}
	build := f.Spec
	if build == nil {
		build = spec.For
	}
	ts, err := build(inst, opts...)
	if err != nil {
		return ts, err
	}
	if ts.Grading == "" {
		ts.Grading = f.Grading
	}
	if ts.Rules == "" {
		ts.Rules = f.Rules
	}
	return ts, nil
}

var (
	byName    = map[string]*Family{}
	byDataset = map[string]*Family{}
	ordered   []*Family
)

// Register adds a family to the registry. It panics on a name, alias or
// dataset another family has, or on a family without a name or claim: the
// registry is built from init functions, where such a mistake is the
// program's.
func Register(f *Family) {
	if f.Name == "" || f.Claim == nil || !grade.KnownGrading(f.Grading) || (f.Rules != "" && !f.Rules.Valid()) {
		panic(fmt.Sprintf("family: %q needs a name, a claim and a known grading rule", f.Name))
	}
	names := append([]string{f.Name}, f.Aliases...)
	var datasets []string
	for _, d := range f.Datasets {
		datasets = append(datasets, d.ID)
		datasets = append(datasets, d.Aliases...)
	}
	// Checked whole before anything is added, so that a refused family
	// leaves no trace.
	for _, n := range names {
		if g := byName[strings.ToLower(n)]; g != nil {
			panic(fmt.Sprintf("family: name %q of %s is %s's", n, f.Name, g.Name))
		}
	}
	for _, n := range datasets {
		if g := byDataset[strings.ToLower(n)]; g != nil {
			panic(fmt.Sprintf("family: dataset %q of %s is %s's", n, f.Name, g.Name))
		}
	}
	for _, n := range names {
		byName[strings.ToLower(n)] = f
	}
	for _, n := range datasets {
		byDataset[strings.ToLower(n)] = f
	}
	ordered = append(ordered, f)
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].Name < ordered[j].Name })
}

// All lists the registered families by name.
func All() []*Family { return append([]*Family(nil), ordered...) }

// Names lists the registered families' names, sorted.
func Names() []string {
	out := make([]string, len(ordered))
	for i, f := range ordered {
		out[i] = f.Name
	}
	return out
}

// Lookup finds a family by name or alias, in any letter case.
func Lookup(name string) (*Family, bool) {
	f, ok := byName[strings.ToLower(strings.TrimSpace(name))]
	return f, ok
}

// ForDataset finds the family that publishes a dataset, by its Hub id or
// alias in any letter case; a ":split" or "@revision" after the id is
// ignored.
func ForDataset(name string) (*Family, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if i := strings.IndexAny(name, ":@"); i > 0 {
		name = name[:i]
	}
	f, ok := byDataset[name]
	return f, ok
}

// Of is the family that claims inst most strongly, with the strength: the
// strongest of the claims at ClaimRepo or above (on a tie the first by
// name), else nil with the families the row looks like (ClaimLooksLike).
func Of(inst dataset.Instance) (f *Family, looksLike []*Family) {
	best := ClaimNone
	for _, g := range ordered {
		switch c := g.Claim(inst); {
		case c == ClaimLooksLike:
			looksLike = append(looksLike, g)
		case c > best:
			f, best = g, c
		}
	}
	if f != nil {
		return f, nil
	}
	return nil, looksLike
}

// Hint is what a run says about its rows' family besides the rows.
type Hint struct {
	// Family is the family the user named (Config.Family); it wins.
	Family string
	// Dataset is the dataset's name as given (a Hub id or alias chooses
	// its family; a file name chooses none).
	Dataset string
}

// Resolve is the family of inst in a run: the one named, else the one
// whose dataset the run reads when that family claims the row at all
// (ClaimLooksLike is enough: SWE-Gym's rows say nothing of SWE-Gym), else
// the one that claims the row ([Of]). An
// unknown Hint.Family is an error wrapping [ErrUnknownFamily]. f is nil
// when no family claims the row; looksLike then lists the families whose
// tables know its repository.
func Resolve(inst dataset.Instance, h Hint) (f *Family, looksLike []*Family, err error) {
	if h.Family != "" {
		f, ok := Lookup(h.Family)
		if !ok {
			return nil, nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownFamily, h.Family, strings.Join(Names(), ", "))
		}
		return f, nil, nil
	}
	g, looksLike := Of(inst)
	if f, ok := ForDataset(h.Dataset); ok && f.Claim(inst) != ClaimNone {
		// The dataset's family takes the rows its tables know or that
		// look like its own; a row another family's fields claim, or
		// one of a repository no table of the family knows, decides for
		// itself.
		if g != nil && g != f && g.Claim(inst) > f.Claim(inst) {
			return g, nil, nil
		}
		return f, nil, nil
	}
	return g, looksLike, nil
}

// ErrUnknownFamily is a family name no family has.
var ErrUnknownFamily = errors.New("unknown task family")
