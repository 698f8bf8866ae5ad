package imagebuild

import (
	"testing"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/spec"
)

// Expectations printed by python3 (3.11) with repr().
func TestPyRepr(t *testing.T) {
	type testCase struct {
		name string
		in   any
		want string
	}
	for _, tc := range []testCase{
		{"single quote", "it's", `"it's"`},
		{"double quote", `say "hi"`, `'say "hi"'`},
		{"both quotes", `both ' and "`, `'both \' and "'`},
		{"escapes", "tab\there\nnl\\bs", `'tab\there\nnl\\bs'`},
		{"controls", "ctl\x01\x7f", `'ctl\x01\x7f'`},
		{"unicode separators", "nb\u00a0sp\u2028ls", `'nb\xa0sp\u2028ls'`},
		{"astral printable", "emoji\U0001F600", "'emoji\U0001F600'"},
		{"latin", "é", "'é'"},
		{"C1 control", "\u0085", `'\x85'`},
		{"format char", "\u200b", `'\u200b'`},
		{"list", []string{"a", "it's"}, `['a', "it's"]`},
		{"empty list", []string{}, `[]`},
		{"nested dict", pyDict{{"a", "x"}, {"run_args", pyDict{{"cap_add", []any{"SYS_ADMIN"}}}}, {"n", 3}},
			`{'a': 'x', 'run_args': {'cap_add': ['SYS_ADMIN']}, 'n': 3}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pyRepr(tc.in); got != tc.want {
				t.Errorf("pyRepr = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPyFormat(t *testing.T) {
	got, err := pyFormat("FROM {a}:{b} {{x}}", pyDict{{"a", "ubuntu"}, {"b", "22.04"}, {"unused", "z"}})
	if err != nil || got != "FROM ubuntu:22.04 {x}" {
		t.Fatalf("pyFormat = %q, %v", got, err)
	}
	if _, err := pyFormat("FROM {missing}", nil); err == nil {
		t.Fatal("no error for a missing name")
	}
}

// The install, pre_install and build commands also live in swebench/spec's
// tables (for eval.sh); both ports of upstream's tables must agree.
func TestTablesAgreeWithSpec(t *testing.T) {
	n := 0
	for repo, versions := range specsV410 {
		for version, bs := range versions {
			inst := dataset.Instance{Repo: repo, Version: version, InstanceID: "x__y-1", BaseCommit: "abcdef0"}
			s, err := spec.For(inst)
			if err != nil {
				t.Errorf("%s %s: %v", repo, version, err)
				continue
			}
			if s.Source == spec.SourceDefault && notInSpec[repo] {
				continue
			}
			if s.Source != spec.SourceOfficial {
				t.Errorf("%s %s: spec source %s, want official", repo, version, s.Source)
				continue
			}
			if extV410[repo] == "py" {
				want := ""
				if len(bs.install) > 0 {
					want = bs.install[0]
				}
				if s.Install != want {
					t.Errorf("%s %s: install %q here, %q in spec", repo, version, want, s.Install)
				}
				if !equal(s.PreInstall, bs.preInstall) {
					t.Errorf("%s %s: pre_install %q here, %q in spec", repo, version, bs.preInstall, s.PreInstall)
				}
			} else if !equal(s.Build, bs.build) {
				t.Errorf("%s %s: build %q here, %q in spec", repo, version, bs.build, s.Build)
			}
			n++
		}
	}
	if n < 600 {
		t.Fatalf("compared only %d entries", n)
	}
}

// notInSpec are repositories of upstream's tables that swebench/spec's do
// not port (evaluation falls back to "pytest -rA" there).
var notInSpec = map[string]bool{"dbt-labs/dbt-core": true}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
