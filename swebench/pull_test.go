package swebench_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// A registry that rate-limits pulls, in front of the real engine: one image
// arrives after two refusals, another never does. The instance waiting for
// a pull gives its worker slot to the next one (one worker here), the
// first ends resolved, the second image_pull_failed with the rate limit as
// its cause, and the instance whose image is local never waits.
func TestRateLimitedPullsBackOffWithoutHoldingAWorker(t *testing.T) {
	real := testenv.Client(t)
	session := strings.ToLower(strings.NewReplacer(".", "-").Replace(real.Session()))
	arrives := "swebox-test/ratelimited:" + session + "-arrives"
	never := "swebox-test/ratelimited:" + session + "-never"
	docker := testenv.Docker(t, real)
	t.Cleanup(func() {
		_, _ = docker.ImageRemove(context.Background(), arrives, image.RemoveOptions{})
	})

	var mu sync.Mutex
	pulls := map[string]int{}
	fe := testenv.NewFaultyEngine(t, real.Host(), func(ref string) bool {
		mu.Lock()
		pulls[ref]++
		n := pulls[ref]
		mu.Unlock()
		if ref == arrives && n > 2 {
			require.NoError(t, docker.ImageTag(context.Background(), testenv.Image(), arrives))
			return false
		}
		return true
	})
	c := testenv.Client(t, sandbox.WithHost(fe.Host()))

	project := swebenchtest.NewProject(t)
	a, b, d := project.Instance("calc__calc-1"), project.Instance("calc__calc-2"), project.Instance("calc__calc-3")
	a.Version, d.Version = "2.0", "3.0"
	cfg := project.Config(t, c, "ratelimit", []dataset.Instance{a, d, b},
		[]dataset.Prediction{swebenchtest.Pred(a.InstanceID, swebenchtest.Gold), swebenchtest.Pred(b.InstanceID, swebenchtest.Gold), swebenchtest.Pred(d.InstanceID, swebenchtest.Gold)})
	cfg.Image = ""
	cfg.ImageMap = map[string]string{project.Repo + ":1.0": testenv.Image(), project.Repo + ":2.0": arrives, project.Repo + ":3.0": never}
	cfg.MaxWorkers, cfg.PullRetries, cfg.PullBackoff = 1, 2, 100*time.Millisecond
	cfg.Timeout = 5 * time.Minute
	var events []swebench.Event
	cfg.Progress = func(ev swebench.Event) { events = append(events, ev) }

	plan, err := swebench.Prepare(context.Background(), cfg)
	require.NoError(t, err, "a rate limit during planning is no reason to stop")
	assert.ElementsMatch(t, []string{arrives, never}, plan.Pull[c.Host()])
	res, err := plan.Run(context.Background())
	require.NoError(t, err)
	require.NoError(t, plan.Close())

	assert.Equal(t, map[string]swebench.Outcome{
		a.InstanceID: swebench.OutcomeResolved,
		b.InstanceID: swebench.OutcomeResolved,
		d.InstanceID: swebench.OutcomeImagePullFailed,
	}, res.Outcomes)
	failed := swebenchtest.ByID(res)[d.InstanceID]
	assert.ErrorIs(t, failed.Err, sandbox.ErrRateLimited, "the outcome says the registry's limit was the cause")
	var retry *swebench.PullRetryError
	require.ErrorAs(t, failed.Err, &retry)
	assert.Equal(t, 3, retry.Attempts, "the first pull and PullRetries more")
	assert.Equal(t, 300*time.Millisecond, retry.Waited, "100 ms, then 200 ms")
	var ie *sandbox.ImageError
	assert.True(t, errors.As(failed.Err, &ie) && ie.Image == never)

	mu.Lock()
	// Planning pulled the first missing image (arrives) once; the
	// instances then pulled on their own.
	assert.Equal(t, 3, pulls[arrives], "refused twice (planning, a's first pull), then it arrived")
	assert.Equal(t, 3, pulls[never])
	mu.Unlock()

	// One worker: b could start before a only because a gave its slot up
	// while it waited.
	started := map[string]int{}
	finished := map[string]int{}
	for i, ev := range events {
		switch ev.Kind {
		case swebench.EventStarted:
			started[ev.InstanceID] = i
		case swebench.EventFinished:
			finished[ev.InstanceID] = i
		}
	}
	require.Contains(t, started, a.InstanceID)
	require.Contains(t, finished, b.InstanceID)
	assert.Less(t, finished[b.InstanceID], started[a.InstanceID], "b ran while a waited for its image: %v", events)
	assert.Zero(t, testenv.CountLeftovers(t, c, c.Session()).Containers)
}

// TestPreparePullsOfficialImages: with no mode asked for, an official row
// runs in its official image, named as upstream names it, which Prepare
// pulls when the engine lacks it (here from a registry in front of the real
// engine that delivers it by tagging the test image).
func TestPreparePullsOfficialImages(t *testing.T) {
	real := testenv.Client(t)
	session := strings.ToLower(strings.NewReplacer(".", "-").Replace(real.Session()))
	id := "astropy__astropy-" + session[len(session)-6:]
	ref := harness.InstanceImage(id, harness.DefaultNamespace, harness.DefaultTag)
	has, err := real.HasImage(context.Background(), ref)
	require.NoError(t, err)
	require.False(t, has, "%s exists already; the test would remove it", ref)
	docker := testenv.Docker(t, real)
	t.Cleanup(func() {
		_, _ = docker.ImageRemove(context.Background(), ref, image.RemoveOptions{})
	})
	var mu sync.Mutex
	var pulled []string
	fe := testenv.NewFaultyEngine(t, real.Host(), func(r string) bool {
		mu.Lock()
		pulled = append(pulled, r)
		mu.Unlock()
		require.NoError(t, docker.ImageTag(context.Background(), testenv.Image(), r))
		return false
	})
	c := testenv.Client(t, sandbox.WithHost(fe.Host()))

	row := dataset.Instance{InstanceID: id, Repo: "astropy/astropy", Version: "4.3", BaseCommit: strings.Repeat("a", 40), Patch: "diff"}
	plan, err := swebench.Prepare(context.Background(), swebench.Config{
		Dataset: []dataset.Instance{row}, Gold: true, RunID: "official", LogDir: t.TempDir(), Sandboxes: []*sandbox.Client{c},
	})
	require.NoError(t, err)
	defer plan.Close()
	assert.Equal(t, harness.ModePrebuilt, plan.Mode)
	assert.Equal(t, []string{ref}, plan.Images)
	assert.Equal(t, []string{ref}, plan.Pull[c.Host()], "the missing official image is pulled while planning")
	mu.Lock()
	assert.Equal(t, []string{ref}, pulled)
	mu.Unlock()
	has, err = real.HasImage(context.Background(), ref)
	require.NoError(t, err)
	assert.True(t, has)
}
