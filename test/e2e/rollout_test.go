package e2e

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/cli"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// Images of the rollout tests. Pods of unreadyImage never turn Ready
// (the kwok stage of testdata/kwok-unready-image.yaml).
const (
	imageV1      = "example.com/web:v1"
	imageV2      = "example.com/web:v2"
	unreadyImage = "example.com/web:unready"
)

// rolloutMembers are the members the rollout tests place on, in the
// order a Progressive rollout takes them (by name).
var rolloutMembers = []string{"member1", "member2", "member3"}

func webYAML(ns, image string) string { return fleetenv.ImageDeploymentYAML(ns, "web", 1, image) }

func webRolloutPolicyYAML(ns, rollout string) string {
	return policyYAML(ns, "web", "Deployment", "web", "clusterAffinity: {clusterNames: [member1, member2, member3]}") +
		"  rollout: " + rollout + "\n"
}

// memberCopy is what a member runs of the Deployment web.
type memberCopy struct {
	image string
	// ready: the member's Deployment controller rolled the image out and
	// every replica is available.
	ready bool
}

func (c memberCopy) String() string {
	if c.ready {
		return c.image + " (ready)"
	}
	return c.image
}

// memberCopies reads each rollout member's copy of web.
func memberCopies(ns string) (map[string]memberCopy, error) {
	out := map[string]memberCopy{}
	for _, m := range rolloutMembers {
		d := &appsv1.Deployment{}
		if err := inMember(m, client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		out[m] = memberCopy{
			image: d.Spec.Template.Spec.Containers[0].Image,
			ready: d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == want &&
				d.Status.AvailableReplicas == want && d.Status.Replicas == want,
		}
	}
	return out, nil
}

// rolloutStatus reads web's binding's rollout status.
func rolloutStatus(ns string) (*workv1alpha1.ResourceBinding, *workv1alpha1.RolloutStatus, error) {
	rb, err := binding(ns, "web", "Deployment")
	if err != nil {
		return nil, nil, err
	}
	if rb.Status.Rollout == nil {
		return rb, nil, fmt.Errorf("no rollout status yet")
	}
	return rb, rb.Status.Rollout, nil
}

// waitRollout polls the members and the binding until done accepts them,
// failing the test at once when a poll breaks the invariant inv (called
// with every poll's copies, in order).
func waitRollout(t *testing.T, ns, what string, inv func(map[string]memberCopy) error, done func(map[string]memberCopy, *workv1alpha1.RolloutStatus) error) *workv1alpha1.RolloutStatus {
	t.Helper()
	var st *workv1alpha1.RolloutStatus
	eventually(t, what, func() error {
		copies, err := memberCopies(ns)
		if err != nil {
			return err
		}
		if inv != nil {
			if err := inv(copies); err != nil {
				t.Fatalf("%v\n%s", err, rolloutState(ns))
			}
		}
		if _, st, err = rolloutStatus(ns); err != nil {
			return err
		}
		return done(copies, st)
	})
	return st
}

// rolloutState describes what the rollout decided from: the binding's
// targets, its rollout status (each cluster's stage and revision) and the
// members' Cluster labels, for a failure's message.
func rolloutState(ns string) string {
	var b strings.Builder
	if rb, err := binding(ns, "web", "Deployment"); err != nil {
		fmt.Fprintf(&b, "binding: %v\n", err)
	} else {
		fmt.Fprintf(&b, "targets: %+v\ncontrol: %+v\n", rb.Spec.Clusters, rb.Spec.RolloutControl)
		if st := rb.Status.Rollout; st != nil {
			fmt.Fprintf(&b, "rollout: revision %s, good %s, %s: %s\nstages: %+v\nclusters: %+v\n", st.Revision, st.LastGoodRevision, st.Phase, st.Message, st.Stages, st.Clusters)
		}
	}
	for _, m := range rolloutMembers {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(context.Background(), client.ObjectKey{Name: m}, c); err != nil {
			fmt.Fprintf(&b, "%s: %v\n", m, err)
			continue
		}
		fmt.Fprintf(&b, "%s: labels %v, taints %v\n", m, c.Labels, c.Spec.Taints)
	}
	return b.String()
}

// everywhere accepts the rollout once it is in phase and every member
// runs image, ready.
func everywhere(image string, phase workv1alpha1.RolloutPhase) func(map[string]memberCopy, *workv1alpha1.RolloutStatus) error {
	return func(copies map[string]memberCopy, st *workv1alpha1.RolloutStatus) error {
		for _, m := range rolloutMembers {
			if c := copies[m]; c.image != image || !c.ready {
				return fmt.Errorf("members run %v", copies)
			}
		}
		if st.Phase != phase {
			return fmt.Errorf("rollout %s (%s), members %v", st.Phase, st.Message, copies)
		}
		return nil
	}
}

// oneAtATime is the invariant of a rollout with maxConcurrency 1: at
// most one member runs image without having been seen ready on it in an
// earlier poll. It records, in order, when each member was first seen
// on image and ready on it.
type oneAtATime struct {
	image string
	seen  []string        // members first seen on image, in order
	ready map[string]bool // members seen ready on image
}

func (o *oneAtATime) check(copies map[string]memberCopy) error {
	var updating []string
	for _, m := range rolloutMembers {
		c := copies[m]
		if c.image != o.image {
			continue
		}
		if !slices.Contains(o.seen, m) {
			o.seen = append(o.seen, m)
		}
		if !o.ready[m] {
			updating = append(updating, m)
		}
	}
	if len(updating) > 1 {
		return fmt.Errorf("%v run %s at once, none of them seen ready on it before: %v", updating, o.image, copies)
	}
	for _, m := range rolloutMembers {
		if c := copies[m]; c.image == o.image && c.ready {
			o.ready[m] = true
		}
	}
	return nil
}

// TestProgressiveRolloutThroughMembers: a change goes to one member at a
// time, the next only once the one before has been healthy for
// minSuccessSeconds; an image whose pods never turn Ready stops the
// rollout at the first member (maxFailures 0), which gets the last good
// image back while the others never leave it.
func TestProgressiveRolloutThroughMembers(t *testing.T) {
	// Parallel (see parallelTests): it mostly waits for minSuccessSeconds
	// and the progress deadline, in its own namespace; the members'
	// room does not decide where its copies go (clusterNames).
	t.Parallel()
	const ns = "e2e-rollout-progressive"
	const minSuccess = 2
	createNamespace(t, ns)
	removeWorkloads(t, ns, rolloutMembers...)
	applyYAML(t, webYAML(ns, imageV1)+"---\n"+webRolloutPolicyYAML(ns, fmt.Sprintf(
		"{type: Progressive, maxConcurrency: 1, minSuccessSeconds: %d, progressDeadlineSeconds: 20, maxFailures: 0, rollbackOnFailure: true}", minSuccess)))
	first := waitRollout(t, ns, "the first revision everywhere", nil, everywhere(imageV1, workv1alpha1.RolloutPhaseComplete))

	applyYAML(t, webYAML(ns, imageV2))
	inv := &oneAtATime{image: imageV2, ready: map[string]bool{}}
	st := waitRollout(t, ns, "v2 rolled out", inv.check, func(copies map[string]memberCopy, st *workv1alpha1.RolloutStatus) error {
		if st.Revision == first.Revision {
			return fmt.Errorf("still on the first revision")
		}
		return everywhere(imageV2, workv1alpha1.RolloutPhaseComplete)(copies, st)
	})
	if !slices.Equal(inv.seen, rolloutMembers) {
		t.Errorf("members took v2 in the order %v, want %v", inv.seen, rolloutMembers)
	}
	// The controller's record: each member was sent v2 no sooner than
	// minSuccessSeconds after the one before turned healthy on it.
	for i := 1; i < len(st.Clusters); i++ {
		prev, cur := st.Clusters[i-1], st.Clusters[i]
		if prev.HealthySince == nil || cur.UpdatedAt == nil {
			t.Fatalf("rollout status lacks times: %+v", st.Clusters)
		}
		if gap := cur.UpdatedAt.Sub(prev.HealthySince.Time); gap < minSuccess*time.Second {
			t.Errorf("%s was sent v2 %s after %s turned healthy, want at least %ds", cur.Name, gap, prev.Name, minSuccess)
		}
	}
	if st.LastGoodRevision != st.Revision {
		t.Errorf("complete, yet the last good revision is %s, not %s", st.LastGoodRevision, st.Revision)
	}

	// A bad image: member1's pods never turn Ready.
	applyYAML(t, webYAML(ns, unreadyImage))
	others := func(copies map[string]memberCopy) error {
		for _, m := range rolloutMembers[1:] {
			if copies[m].image != imageV2 {
				return fmt.Errorf("%s left the last good image: %v", m, copies)
			}
		}
		return nil
	}
	waitRollout(t, ns, "the bad image on member1", others, func(copies map[string]memberCopy, _ *workv1alpha1.RolloutStatus) error {
		if c := copies["member1"]; c.image != unreadyImage {
			return fmt.Errorf("members run %v", copies)
		}
		return nil
	})
	failed := waitRollout(t, ns, "the rollout stopped and member1 rolled back", others, everywhere(imageV2, workv1alpha1.RolloutPhaseFailed))
	if failed.LastGoodRevision != st.Revision {
		t.Errorf("the failed rollout's last good revision is %s, want %s", failed.LastGoodRevision, st.Revision)
	}
	if len(failed.Clusters) == 0 || failed.Clusters[0].Name != "member1" || !failed.Clusters[0].Failed {
		t.Errorf("member1 is not recorded as failed: %+v", failed.Clusters)
	}
	for _, c := range failed.Clusters[1:] {
		if c.Failed || c.Revision != st.Revision {
			t.Errorf("%s, never sent the bad image, is recorded as %+v", c.Name, c)
		}
	}
	rb, _, err := rolloutStatus(ns)
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.ConditionRolloutFailed); c == nil || c.Reason != "RolledBack" {
		t.Errorf("RolloutFailed: %+v", c)
	}
}

// rolloutCLI runs `shepherd rollout ARGS` against the fleet's hub.
func rolloutCLI(t *testing.T, args ...string) string {
	t.Helper()
	cmd := cli.NewRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(append([]string{"rollout"}, args...), "--hub-kubeconfig", fleet.Hub.KubeconfigPath()))
	if err := cmd.Execute(); err != nil {
		t.Fatalf("shepherd rollout %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// TestStagedRolloutWaitsForApprove: a Staged rollout whose canary stage
// needs an approval sends nothing until `shepherd rollout approve`; then
// the canary member goes first and the production members once it is
// done.
func TestStagedRolloutWaitsForApprove(t *testing.T) {
	// Parallel (see parallelTests), for the reasons of the Progressive
	// test; the ring labels it reads are the suite's, set once.
	t.Parallel()
	const ns = "e2e-rollout-staged"
	createNamespace(t, ns)
	removeWorkloads(t, ns, rolloutMembers...)
	applyYAML(t, webYAML(ns, imageV1)+"---\n"+webRolloutPolicyYAML(ns,
		`{type: Staged, minSuccessSeconds: 1, stages: [{name: canary, clusterSelector: {matchLabels: {ring: canary}}, approval: Before}, {name: prod, clusterSelector: {matchLabels: {ring: prod}}}]}`))
	waitRollout(t, ns, "the first revision everywhere", nil, everywhere(imageV1, workv1alpha1.RolloutPhaseComplete))

	applyYAML(t, webYAML(ns, imageV2))
	onV1 := func(copies map[string]memberCopy) error {
		for _, m := range rolloutMembers {
			if copies[m].image != imageV1 {
				return fmt.Errorf("%s left v1 before the approval: %v", m, copies)
			}
		}
		return nil
	}
	waitRollout(t, ns, "the canary stage waiting for approval", onV1, func(_ map[string]memberCopy, st *workv1alpha1.RolloutStatus) error {
		if st.Phase != workv1alpha1.RolloutPhaseWaiting || !strings.Contains(st.Message, "Stage canary waits for approval") {
			return fmt.Errorf("rollout %s (%s)", st.Phase, st.Message)
		}
		return nil
	})
	if out := rolloutCLI(t, "status", "deployment/web", "-n", ns); !strings.Contains(out, "canary") {
		t.Errorf("shepherd rollout status does not show the canary stage:\n%s", out)
	}
	// Still waiting a moment later: nothing but an approval moves it.
	for range 10 {
		copies, err := memberCopies(ns)
		if err != nil {
			t.Fatal(err)
		}
		if err := onV1(copies); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	rolloutCLI(t, "approve", "deployment/web", "-n", ns)
	canaryFirst := func(copies map[string]memberCopy) error {
		for _, m := range rolloutMembers[1:] {
			if copies[m].image == imageV2 && !(copies["member1"].image == imageV2 && copies["member1"].ready) {
				return fmt.Errorf("%s got v2 before the canary was ready on it: %v", m, copies)
			}
		}
		return nil
	}
	waitRollout(t, ns, "v2 through the stages", canaryFirst, everywhere(imageV2, workv1alpha1.RolloutPhaseComplete))
}
