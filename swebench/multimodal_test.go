package swebench_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// curlImage is the test image with curl, which v4.1.0's JavaScript eval
// script runs (SWEBOX_IMAGE_EXTRA=curl scripts/build-image.sh
// swebox/python-curl:bookworm).
const curlImage = "swebox/python-curl:bookworm"

// baselineTest stands in for a rendering test that compares with an image
// baseline: it passes only when the baseline holds the served bytes.
const baselineTest = "grep -q asset-bytes-42 test/specs/expected.png && echo 'PASSED test/specs/baseline' || echo 'FAILED test/specs/baseline'"

// multimodalRow is a row of a Multimodal JavaScript repository (marked)
// whose test patch needs an image baseline served at url: v4.1.0's eval
// script fetches it with curl after the reset.
func multimodalRow(t *testing.T, f *fixture, url string) (dataset.Instance, string) {
	t.Helper()
	// The project's repository under marked's name, for the local sources.
	src := filepath.Join(f.project.Sources, "swebox-test__calc")
	require.NoError(t, os.CopyFS(filepath.Join(f.project.Sources, "markedjs__marked"), os.DirFS(src)))
	inst := f.project.Instance("markedjs__marked-9001")
	inst.Repo, inst.Version = "markedjs/marked", "13.0"
	inst.FailToPass, inst.PassToPass = []string{"test/specs/baseline"}, nil
	assets, err := json.Marshal(map[string]any{"test_patch": []map[string]string{
		{"path": "test/specs/expected.png", "url": url + "/expected.png"},
		{"path": "test/specs/missing.png", "url": url + "/missing.png"},
	}})
	require.NoError(t, err)
	inst.ImageAssets = json.RawMessage(mustJSON(t, string(assets)))
	overrides := filepath.Join(t.TempDir(), "overrides.json")
	o, err := json.Marshal(map[string]any{"markedjs/marked": map[string]any{"test_cmd": baselineTest, "parser": "pytest"}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(overrides, o, 0o644))
	return inst, overrides
}

// TestMultimodalBaselines answers issue 29's Multimodal question with real
// containers. Upstream's v4.1.0 JavaScript eval script fetches each image
// baseline with curl inside the container; in a swebox sandbox (no
// network) that curl cannot connect, the baseline is missing and the test
// that compares with it fails: unresolved, where upstream, whose container
// has the network, resolves the row. So the verdicts differ. With the fix
// the host fetches the baselines and eval.sh copies them in place of the
// curl lines, the sandbox keeping no network: resolved, as upstream.
func TestMultimodalBaselines(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/expected.png" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("\x89PNG asset-bytes-42\n"))
	}))
	defer srv.Close()
	f := newFixture(t)
	inst, overrides := multimodalRow(t, f, srv.URL)
	o, err := spec.LoadOverrides(overrides)
	require.NoError(t, err)
	ts, err := spec.For(inst, spec.WithMode(harness.ModeWorkspace), spec.WithOverrides(o))
	require.NoError(t, err)
	require.Equal(t, spec.ScriptCommon, ts.Script)
	require.Contains(t, ts.Downloads, "curl -o test/specs/expected.png "+srv.URL+"/expected.png")

	t.Run("upstream's curl in the sandbox", func(t *testing.T) {
		ctx := context.Background()
		ok, err := f.client.HasImage(ctx, curlImage)
		require.NoError(t, err)
		if !ok {
			cienv.Skip(t, "no %s image; build it with SWEBOX_IMAGE_EXTRA=curl scripts/build-image.sh %s", curlImage, curlImage)
		}
		sb, err := f.client.Create(ctx, sandbox.Spec{Image: curlImage, WorkingDir: "/tmp", Policy: sandbox.AllowAll()})
		require.NoError(t, err)
		defer func() { assert.NoError(t, sb.Remove(context.Background())) }()
		// The download lines as upstream's eval.sh has them, then the test.
		script := "cd /tmp\n" + strings.Join(ts.Downloads, "\n") + "\necho curl-exit=$?\n" + baselineTest + "\n"
		res, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"bash", "-c", script}})
		require.NoError(t, err)
		out := res.Stdout.String() + res.Stderr.String()
		assert.Contains(t, out, "Failed to connect", "curl reached the host from a sandbox without network")
		assert.Contains(t, out, "FAILED test/specs/baseline")
		rep, err := grade.Grade(grade.Input{InstanceID: inst.InstanceID, Parser: "pytest", FailToPass: inst.FailToPass,
			Log: "+ : '>>>>> Start Test Output'\n" + res.Stdout.String() + "+ : '>>>>> End Test Output'\n", Rules: harness.V4})
		require.NoError(t, err)
		assert.False(t, rep.Resolved, "without the baseline the row is unresolved")
	})

	t.Run("staged from the host", func(t *testing.T) {
		cfg := f.config(t, "mm", nil)
		cfg.Dataset = []dataset.Instance{inst}
		cfg.Predictions = []dataset.Prediction{pred(inst.InstanceID, goldPatch)}
		cfg.Mode, cfg.SpecOverrides, cfg.Rules = harness.ModeWorkspace, overrides, harness.V4
		cfg.ImageMap = map[string]string{inst.Repo: testenv.Image()}
		res, err := swebench.Evaluate(context.Background(), cfg)
		require.NoError(t, err)
		require.Len(t, res.Instances, 1)
		r := res.Instances[0]
		assert.Equal(t, swebench.StatusResolved, r.Status, r.Error)
		script, err := os.ReadFile(filepath.Join(r.LogDir, "eval.sh"))
		require.NoError(t, err)
		assert.NotContains(t, string(script), "curl ")
		assert.Contains(t, string(script), "mkdir -p test/specs\ncp /testbed/.git/swebox/asset-test__specs__expected.png test/specs/expected.png\nchmod 777 test/specs/expected.png\n")
		assert.Contains(t, string(script), "mkdir -p test/specs\nchmod 777 test/specs/missing.png\n", "an asset the host cannot fetch is missing, as where upstream's curl fails")
		data, err := os.ReadFile(filepath.Join(r.LogDir, "image_assets", "test__specs__expected.png"))
		require.NoError(t, err)
		assert.Equal(t, "\x89PNG asset-bytes-42\n", string(data))
		log, err := os.ReadFile(filepath.Join(r.LogDir, "run_instance.log"))
		require.NoError(t, err)
		assert.Contains(t, string(log), "Staged 1 of 2 image asset(s) on the host")
		assert.Contains(t, string(log), "Could not fetch image asset "+srv.URL+"/missing.png")
	})
}

// capsTest passes only when the sandbox's bounding set holds SYS_ADMIN
// (bit 21 of CapBnd).
const capsTest = `python3 -c "b=int([l for l in open('/proc/self/status') if l.startswith('CapBnd')][0].split()[1], 16); print(('PASSED' if b >> 21 & 1 else 'FAILED') + ' test/caps')"`

// The capability upstream gives the Multimodal Chart.js containers
// (SYS_ADMIN, v4.1.0's docker_specs run_args, for Chrome's sandbox) is
// given only with Config.GrantCapabilities or inside gVisor, and
// run_instance.log says which; by default it is left out, and the log
// says how to grant it. A real container shows the bounding set.
func TestMultimodalCapabilities(t *testing.T) {
	f := newFixture(t)
	src := filepath.Join(f.project.Sources, "swebox-test__calc")
	require.NoError(t, os.CopyFS(filepath.Join(f.project.Sources, "chartjs__Chart.js"), os.DirFS(src)))
	inst := f.project.Instance("chartjs__Chart.js-9001")
	inst.Repo, inst.Version = "chartjs/Chart.js", "3.1"
	inst.FailToPass, inst.PassToPass = []string{"test/caps"}, nil
	overrides := filepath.Join(t.TempDir(), "overrides.json")
	o, err := json.Marshal(map[string]any{"chartjs/Chart.js": map[string]any{"test_cmd": capsTest, "parser": "pytest"}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(overrides, o, 0o644))

	type testCase struct {
		name     string
		grant    bool
		runtime  string
		caps     []string
		resolved bool
		log      string
	}
	for _, tc := range []testCase{
		{name: "default", log: "Upstream adds capabilities [SYS_ADMIN] to this container; left out"},
		{name: "granted", grant: true, caps: []string{"SYS_ADMIN"}, resolved: true, log: "Capabilities [SYS_ADMIN] added to the container, as upstream adds them (GrantCapabilities)"},
		{name: "gVisor", runtime: "runsc", caps: []string{"SYS_ADMIN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := f.config(t, "caps", nil)
			cfg.Dataset = []dataset.Instance{inst}
			cfg.Predictions = []dataset.Prediction{pred(inst.InstanceID, goldPatch)}
			cfg.Mode, cfg.SpecOverrides, cfg.Rules = harness.ModeWorkspace, overrides, harness.V4
			cfg.ImageMap = map[string]string{inst.Repo: testenv.Image()}
			cfg.GrantCapabilities, cfg.Runtime = tc.grant, tc.runtime
			p, err := swebench.Prepare(context.Background(), cfg)
			require.NoError(t, err)
			defer func() { assert.NoError(t, p.Close()) }()
			tb, err := p.Testbed(inst.InstanceID)
			require.NoError(t, err)
			assert.Equal(t, tc.caps, tb.Spec.Relax.CapAdd)
			if tc.runtime != "" {
				return // this engine has no gVisor: the spec is what is shown
			}
			res, err := swebench.Evaluate(context.Background(), cfg)
			require.NoError(t, err)
			require.Len(t, res.Instances, 1)
			r := res.Instances[0]
			assert.Equal(t, tc.resolved, r.Status == swebench.StatusResolved, "%s: %s", r.Status, r.Error)
			log, err := os.ReadFile(filepath.Join(r.LogDir, "run_instance.log"))
			require.NoError(t, err)
			assert.Contains(t, string(log), tc.log)
		})
	}
}
