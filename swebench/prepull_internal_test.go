package swebench

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/spec"
)

// The window: when instance i takes a slot, the images of instances
// i+1 … i+window are handed out, each image once, none of an instance
// without an image; an engine that cannot warm (Docker) is not asked again.
func TestPrepullWindow(t *testing.T) {
	c, err := sandbox.New() // Docker: WarmImage answers ErrNotSupported without the engine
	require.NoError(t, err)
	defer c.Close()
	ids := []string{"i0", "i1", "i2", "i3", "i4", "i5"}
	images := map[string]string{"i0": "a", "i1": "b", "i2": "c", "i3": "b", "i4": "", "i5": "d"}
	e := &evaluator{cfg: Config{Sandboxes: []*sandbox.Client{c}, PrepullWindow: 2}, specs: map[string]specEntry{}, log: slog.New(slog.DiscardHandler)}
	for id, img := range images {
		e.specs[id] = specEntry{ts: spec.TestSpec{InstanceID: id, Image: img}}
	}
	p := e.startPrepull(context.Background(), ids)
	require.NotNil(t, p)
	handed := func() []string {
		p.mu.Lock()
		defer p.mu.Unlock()
		var out []string
		for k := range p.started {
			_, img, _ := strings.Cut(k, "\x00")
			out = append(out, img)
		}
		sort.Strings(out)
		return out
	}
	p.dispatch(0)
	assert.Equal(t, []string{"b", "c"}, handed(), "instances 1 and 2")
	p.dispatch(1)
	assert.Equal(t, []string{"b", "c"}, handed(), "instance 3's image b is handed out already")
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.cannot[c.Host()]
	}, 10*time.Second, 10*time.Millisecond, "Docker answered that it cannot warm")
	p.dispatch(3)
	assert.Equal(t, []string{"b", "c"}, handed(), "an engine that cannot warm is not asked again (d of instance 5)")
	p.stop()

	e.cfg.PrepullWindow = 0
	assert.Nil(t, e.startPrepull(context.Background(), ids), "no window, no prepuller")
}
