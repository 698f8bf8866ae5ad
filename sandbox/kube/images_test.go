package kube

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/swebox/swebox/sandbox"
)

func TestImageRefIsWhatNodesReport(t *testing.T) {
	assert.Equal(t, "docker.io/swebox/python:bookworm", imageRef("swebox/python:bookworm"))
	assert.Equal(t, "docker.io/library/ubuntu:latest", imageRef("ubuntu"))
	assert.Equal(t, "127.0.0.1:5000/a/b:1", imageRef("127.0.0.1:5000/a/b:1"))
	assert.Equal(t, "Not A Ref", imageRef("Not A Ref"))
	n := &corev1.Node{Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{
		"docker.io/swebox/python@sha256:" + "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12",
		"docker.io/swebox/python:bookworm",
	}}}}}
	assert.True(t, nodeHolds(n, imageRef("swebox/python:bookworm")))
	assert.False(t, nodeHolds(n, imageRef("swebox/python:trixie")))
}

func always(string) bool { return true }
func zero(string) int64  { return 0 }

// The placement rules: a node that holds the image wins while it has room;
// else one free node is claimed (the roomiest); a pod waits while the only
// candidates are pulling; a full holder still wins when no free node has
// room either.
func TestDecidePlacesByImage(t *testing.T) {
	nodes := []string{"a", "b", "c"}
	roomOn := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, m := range names {
				if m == n {
					return true
				}
			}
			return false
		}
	}
	cases := []struct {
		name string
		in   placeInput
		want placement
	}{
		{"holders with room", placeInput{eligible: nodes, holds: map[string]bool{"a": true, "c": true}, room: always, free: zero},
			placement{nodes: []string{"a", "c"}}},
		{"nobody holds: the roomiest free node is claimed", placeInput{eligible: nodes, room: always,
			free: func(n string) int64 { return map[string]int64{"a": 100, "b": 900, "c": 500}[n] }},
			placement{nodes: []string{"b"}, claim: "b"}},
		{"nobody holds: the node pulling the fewest other images is claimed", placeInput{eligible: nodes, room: always, busy: map[string]int{"a": 2, "b": 1},
			free: func(n string) int64 { return map[string]int64{"a": 900, "b": 500, "c": 100}[n] }},
			placement{nodes: []string{"c"}, claim: "c"}},
		{"a node with room beats more free CPU", placeInput{eligible: nodes, room: roomOn("c"),
			free: func(n string) int64 { return map[string]int64{"a": 100, "b": 900, "c": 500}[n] }},
			placement{nodes: []string{"c"}, claim: "c"}},
		{"one pulling, others free: wait for that pull", placeInput{eligible: nodes, pulling: map[string]bool{"b": true}, room: always, free: zero},
			placement{wait: true}},
		{"holder full, free node with room: pull there", placeInput{eligible: nodes, holds: map[string]bool{"a": true}, pulling: map[string]bool{"b": true}, room: roomOn("c"), free: zero},
			placement{nodes: []string{"c"}, claim: "c"}},
		{"holder full and no room elsewhere: queue on the holder", placeInput{eligible: nodes, holds: map[string]bool{"a": true}, room: roomOn(), free: zero},
			placement{nodes: []string{"a"}}},
		{"all pulling", placeInput{eligible: nodes, pulling: map[string]bool{"a": true, "b": true, "c": true}, room: always, free: zero},
			placement{wait: true}},
		{"no eligible node", placeInput{room: always, free: zero}, placement{}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, decide(c.in), c.name)
	}
}

// Many pods of one image decide at once: exactly one claims each node, the
// rest wait; once a pull ends held, they all go to that node, and a failed
// pull frees its node for a new claim.
func TestPlacerClaimsEachNodeOnce(t *testing.T) {
	var ip imagePlacer
	in := placeInput{eligible: []string{"a", "b"}, room: always, free: zero}
	var mu sync.Mutex
	claims := map[string]int{}
	var pulls []*nodePull
	waits := 0
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, pull, wait := ip.place("img", in)
			mu.Lock()
			defer mu.Unlock()
			if pull != nil {
				claims[pull.node]++
				pulls = append(pulls, pull)
			}
			if wait != nil {
				waits++
			}
		})
	}
	wg.Wait()
	assert.Equal(t, map[string]int{"a": 1}, claims, "the first claims a node; the others wait for its pull")
	assert.Equal(t, 19, waits)

	pulls[0].end(true)
	pulls[0].end(false) // only the first end counts
	p, pull, wait := ip.place("img", in)
	assert.Nil(t, pull)
	assert.Nil(t, wait)
	assert.Equal(t, []string{"a"}, p.nodes, "the node that pulled it holds it")

	// Another image: its failed pull frees the node for another claim.
	_, first, _ := ip.place("other", in)
	require.NotNil(t, first)
	first.end(false)
	_, again, _ := ip.place("other", in)
	require.NotNil(t, again)
	assert.Equal(t, first.node, again.node)
}

// A claimed pull ends when any container of the pod (a seeding init
// container first) got the image, with the registry's answer when the pull
// failed, and not while the node is still pulling.
func TestPulledState(t *testing.T) {
	pod := func(init, main corev1.ContainerState) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: kubeContainer, Image: "reg/x:1"}}}}
		p.Name = "p"
		p.Status.Phase = corev1.PodPending
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "seed0", State: init}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubeContainer, State: main}}
		return p
	}
	waiting := func(reason, msg string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}

	done, err := pulledState(pod(waiting("ContainerCreating", ""), waiting("PodInitializing", "")))
	assert.False(t, done)
	assert.NoError(t, err)
	done, err = pulledState(pod(running, waiting("PodInitializing", "")))
	assert.True(t, done)
	assert.NoError(t, err)
	done, err = pulledState(pod(corev1.ContainerState{}, waiting("RunContainerError", "no /bin/sh")))
	assert.True(t, done)
	assert.NoError(t, err, "the image is there even if its container cannot run")
	done, err = pulledState(pod(waiting("ErrImagePull", `failed to resolve reference "reg/x:1": reg/x:1: not found`), waiting("PodInitializing", "")))
	assert.True(t, done)
	var ie *sandbox.ImageError
	require.ErrorAs(t, err, &ie)
	assert.ErrorIs(t, err, sandbox.ErrImageNotFound)
	assert.Contains(t, err.Error(), "not found")
}

// TestPlacerSpreadsPullsOverNodes: the pulls of different images, claimed
// while earlier ones run, go to different nodes, so that the pods that wait
// for them are spread too; an ended pull no longer counts against its node.
func TestPlacerSpreadsPullsOverNodes(t *testing.T) {
	var ip imagePlacer
	in := placeInput{eligible: []string{"a", "b"}, room: always, free: zero}
	_, p1, _ := ip.place("img1", in)
	_, p2, _ := ip.place("img2", in)
	require.NotNil(t, p1)
	require.NotNil(t, p2)
	assert.Equal(t, "a", p1.node)
	assert.Equal(t, "b", p2.node, "the node not pulling takes the next image")
	p1.end(true)
	_, p3, _ := ip.place("img3", in)
	require.NotNil(t, p3)
	assert.Equal(t, "a", p3.node, "a's pull ended: it is the node pulling the fewest")
}
