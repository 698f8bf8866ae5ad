package kube

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/sandbox"
)

// A namespace's policies isolate a sandbox pod only when the policy of
// swebox's name is exactly the default deny and no other one selects the
// pod and allows it traffic.
func TestPoliciesIsolate(t *testing.T) {
	pod := map[string]string{LabelNetwork: "none", sandbox.LabelManaged: "true", "swebox.run": "r1"}
	both := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	deny := func() networkingv1.NetworkPolicy {
		return networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: kubePolicyName},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelNetwork: "none"}},
				PolicyTypes: both,
			},
		}
	}
	// allowFor is a policy that lets the pods it selects reach anything.
	allowFor := func(name string, sel map[string]string) networkingv1.NetworkPolicy {
		return networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: sel},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		}}
	}
	type testCase struct {
		name   string
		edit   func(p *networkingv1.NetworkPolicy)
		others []networkingv1.NetworkPolicy
		reason string // "" when isolated
	}
	for _, tc := range []testCase{
		{name: "the default deny", edit: func(*networkingv1.NetworkPolicy) {}},
		{name: "egress only", edit: func(p *networkingv1.NetworkPolicy) { p.Spec.PolicyTypes = both[1:] }, reason: "not both Ingress and Egress"},
		{name: "an egress rule", edit: func(p *networkingv1.NetworkPolicy) { p.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{}} }, reason: "allows traffic"},
		{name: "another selector", edit: func(p *networkingv1.NetworkPolicy) {
			p.Spec.PodSelector = metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
		}, reason: "does not select the sandbox pods"},
		{name: "another policy allows every pod", edit: func(*networkingv1.NetworkPolicy) {},
			others: []networkingv1.NetworkPolicy{allowFor("open", nil)},
			reason: "selects the sandbox pods"},
		{name: "another policy allows the run's pods", edit: func(*networkingv1.NetworkPolicy) {},
			others: []networkingv1.NetworkPolicy{allowFor("open", map[string]string{"swebox.run": "r1"})},
			reason: "selects the sandbox pods"},
		{name: "another policy allows other pods", edit: func(*networkingv1.NetworkPolicy) {},
			others: []networkingv1.NetworkPolicy{allowFor("web", map[string]string{"app": "web"})}},
		{name: "another policy denies", edit: func(*networkingv1.NetworkPolicy) {},
			others: []networkingv1.NetworkPolicy{{ObjectMeta: metav1.ObjectMeta{Name: "deny-all"}, Spec: networkingv1.NetworkPolicySpec{PolicyTypes: both}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := deny()
			tc.edit(&p)
			err := policiesIsolate("ns", append([]networkingv1.NetworkPolicy{p}, tc.others...), pod)
			if tc.reason == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrNetworkNotEnforced)
			var pe *PolicyError
			if assert.ErrorAs(t, err, &pe) {
				assert.Contains(t, pe.Reason, tc.reason)
			}
		})
	}
}

// The isolation probe decides on a streak, never on one connection: the
// deny probe needs a round of probeStreak failed connections (one that
// connects starts a new round), the control as many successes. The
// connections here are a scripted bash (or, in an image without bash,
// python3) that answers from a list by attempt number, since a round's
// attempts run at once; an image with neither cannot probe at all.
func TestProbeScriptNeedsAStreak(t *testing.T) {
	type testCase struct {
		name    string
		want    string   // allow or deny
		answers []string // what each connection attempt prints
		code    int
		out     string
	}
	const (
		timedOut = "TimeoutError: timed out"
		refused  = "ConnectionRefusedError: refused"
	)
	for _, tc := range []testCase{
		{name: "deny holds after a late start", want: "deny", answers: []string{"connected", timedOut, refused, refused, timedOut, refused},
			out: "deny held 3 times in a row; last: " + refused},
		{name: "deny with a connection in each round", want: "deny", answers: []string{timedOut, timedOut, "connected", timedOut, "connected", timedOut},
			code: 1, out: "gave up after 6 tries"},
		{name: "one failure proves nothing", want: "deny", answers: []string{timedOut, "connected", "connected", "connected", "connected", "connected"},
			code: 1, out: "gave up"},
		{name: "control keeps connecting", want: "allow", answers: []string{"connected", timedOut, "connected", "connected", "connected", "connected"},
			out: "allow held 3 times in a row"},
		{name: "control that stops connecting", want: "allow", answers: []string{"connected", "connected", timedOut, "connected", "connected", timedOut},
			code: 1, out: "gave up after 6 tries; last: " + timedOut},
		{name: "nothing to probe with", want: "deny", code: 2, out: "no python3 or bash"},
	} {
		tools := []string{"bash", "python3"}
		if tc.answers == nil {
			tools = []string{"none"}
		}
		for _, tool := range tools {
			t.Run(tc.name+"/"+tool, func(t *testing.T) {
				// PATH is dir alone: the fake and the few tools the script
				// uses, so that no real bash or python3 is found.
				dir := t.TempDir()
				seq := filepath.Join(t.TempDir(), "answers")
				require.NoError(t, os.WriteFile(seq, []byte(strings.Join(tc.answers, "\n")+"\n"), 0o644))
				if tc.answers != nil {
					fake := "#!/bin/sh\necho $SWEBOX_PROBE_TRY >> " + seq + ".n; sed -n \"${SWEBOX_PROBE_TRY}p\" " + seq + "\n"
					require.NoError(t, os.WriteFile(filepath.Join(dir, tool), []byte(fake), 0o755))
					for _, name := range []string{"sed", "tail", "sleep", "timeout", "sort"} {
						real, err := exec.LookPath(name)
						require.NoError(t, err)
						require.NoError(t, os.Symlink(real, filepath.Join(dir, name)))
					}
				}
				cmd := exec.Command("/bin/sh", "-c", probeScript, "swebox-probe", "192.0.2.1", "443", strconv.Itoa(max(len(tc.answers), 1)), tc.want, strconv.Itoa(probeStreak))
				cmd.Env = []string{"PATH=" + dir}
				out, err := cmd.CombinedOutput()
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else {
					require.NoError(t, err)
				}
				assert.Equal(t, tc.code, code, string(out))
				assert.Contains(t, string(out), tc.out)
				if tc.answers != nil {
					n, err := os.ReadFile(seq + ".n")
					require.NoError(t, err, "the fake %s answered", tool)
					var tries, want []int
					for _, f := range strings.Fields(string(n)) {
						i, err := strconv.Atoi(f)
						require.NoError(t, err)
						tries = append(tries, i)
					}
					for i := range tc.answers {
						want = append(want, i+1)
					}
					assert.ElementsMatch(t, want, tries, "each attempt made once")
				}
			})
		}
	}
}
