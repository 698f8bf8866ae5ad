package imagebuild_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// goldenCase is one line of testdata/golden/v410/cases.jsonl, written by
// testdata/upstream/generate.py with SWE-bench v4.1.0's own code.
type goldenCase struct {
	Kind     string            `json:"kind"` // dataset, table or branch
	Language string            `json:"language"`
	Row      dataset.Instance  `json:"row"`
	Files    map[string]string `json:"files"` // repo/commit/path → text the stand-in served
	BaseKey  string            `json:"base_key"`
	EnvKey   string            `json:"env_key"`
	InstKey  string            `json:"instance_key"`
	Platform string            `json:"platform"`
	BaseDF   string            `json:"base/Dockerfile"`
	EnvDF    string            `json:"env/Dockerfile"`
	EnvSh    string            `json:"env/setup_env.sh"`
	InstDF   string            `json:"instances/Dockerfile"`
	InstSh   string            `json:"instances/setup_repo.sh"`
}

func loadGolden(t *testing.T) ([]goldenCase, map[string]string) {
	t.Helper()
	var blobs map[string]string
	data, err := os.ReadFile("testdata/golden/v410/blobs.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &blobs); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/golden/v410/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		var c goldenCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("cases.jsonl:%d: %v", line, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases, blobs
}

// servedFiles serves what the oracle's stand-in for requests.get served.
func servedFiles(files map[string]string) imagebuild.Files {
	return imagebuild.FilesFunc(func(_ context.Context, repo, commit, path string) ([]byte, error) {
		if s, ok := files[repo+"/"+commit+"/"+path]; ok {
			return []byte(s), nil
		}
		return nil, fmt.Errorf("%s/%s/%s: %w", repo, commit, path, fs.ErrNotExist)
	})
}

// TestUpstreamV410 checks names, Dockerfiles and setup scripts byte for
// byte against upstream's for every row of the golden file and counts the
// matches per language.
func TestUpstreamV410(t *testing.T) {
	cases, blobs := loadGolden(t)
	if len(cases) < 690 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	matched := map[string]int{}
	total := map[string]int{}
	for _, c := range cases {
		t.Run(c.Row.InstanceID, func(t *testing.T) {
			total[c.Language]++
			p, err := imagebuild.New(imagebuild.WithFiles(servedFiles(c.Files)))
			if err != nil {
				t.Fatal(err)
			}
			s, err := p.For(context.Background(), c.Row)
			if err != nil {
				t.Fatal(err)
			}
			ok := true
			check := func(what, got, want string) {
				if got != want {
					ok = false
					t.Errorf("%s differs from upstream:\n%s", what, firstDiff(got, want))
				}
			}
			check("base name", s.Base.Name, c.BaseKey)
			check("env name", s.Env.Name, c.EnvKey)
			check("instance name", s.Instance.Name, c.InstKey)
			check("platform", s.Platform, c.Platform)
			check("base Dockerfile", s.Base.Dockerfile, blobs[c.BaseDF])
			check("env Dockerfile", s.Env.Dockerfile, blobs[c.EnvDF])
			check("setup_env.sh", s.Env.Script, blobs[c.EnvSh])
			check("instance Dockerfile", s.Instance.Dockerfile, blobs[c.InstDF])
			check("setup_repo.sh", s.Instance.Script, blobs[c.InstSh])
			if ok {
				matched[c.Language]++
			}
		})
	}
	var langs []string
	for l := range total {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	for _, l := range langs {
		t.Logf("%-4s %d/%d rows byte-identical", l, matched[l], total[l])
	}
}

func firstDiff(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w || i >= len(gl) || i >= len(wl) {
			return fmt.Sprintf("line %d:\n  got  %q\n  want %q", i+1, g, w)
		}
	}
	return "(same lines)"
}
