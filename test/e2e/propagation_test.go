package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/membership"
)

// dividedOverThree divides replicas evenly (equal weights) over three members.
const dividedOverThree = `clusterAffinity:
  clusterNames: [member1, member2, member3]
replicaScheduling:
  replicaSchedulingType: Divided
  replicaDivisionPreference: Weighted
`

// checkMemberDeployments waits until every member in want runs the
// Deployment with the wanted replicas, all available, and the others do not
// run it at all.
func checkMemberDeployments(t *testing.T, ns, name string, want map[string]int32) {
	t.Helper()
	key := client.ObjectKey{Namespace: ns, Name: name}
	for _, c := range members {
		replicas, ok := want[c]
		eventually(t, fmt.Sprintf("deployment %s in %s", key, c), func() error {
			d := &appsv1.Deployment{}
			if !ok {
				return goneFromMember(c, key, d)
			}
			if err := inMember(c, key, d); err != nil {
				return err
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
				return fmt.Errorf("spec.replicas %v, want %d", d.Spec.Replicas, replicas)
			}
			if d.Status.AvailableReplicas != replicas {
				return fmt.Errorf("%d of %d replicas available", d.Status.AvailableReplicas, replicas)
			}
			return nil
		})
	}
}

// TestDividedDeployment follows a Deployment from the hub into three
// members: divided, available, scaled steadily, moved by a policy edit, and
// removed with its template.
func TestDividedDeployment(t *testing.T) {
	const ns = "e2e-divided"
	createNamespace(t, ns)
	applyYAML(t, policyYAML(ns, "web", "Deployment", "web", dividedOverThree)+"---\n"+deploymentYAML(ns, "web", 6))

	rb := waitPlaced(t, ns, "web", "Deployment", func(got map[string]int32) error {
		if got["member1"] != 2 || got["member2"] != 2 || got["member3"] != 2 {
			return fmt.Errorf("targets %v, want 2 replicas on each of 3 members", got)
		}
		return nil
	})
	first := targets(rb)
	checkMemberDeployments(t, ns, "web", first)
	eventually(t, "binding fully applied and healthy", func() error {
		b, err := binding(ns, "web", "Deployment")
		if err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha1.ConditionFullyApplied) {
			return fmt.Errorf("FullyApplied: %+v", b.Status.Conditions)
		}
		for _, s := range b.Status.AggregatedStatus {
			if s.Health != "Healthy" {
				return fmt.Errorf("%s is %s", s.ClusterName, s.Health)
			}
		}
		if len(b.Status.AggregatedStatus) != 3 {
			return fmt.Errorf("aggregated status of %d clusters", len(b.Status.AggregatedStatus))
		}
		return nil
	})
	eventually(t, "template status sums the members", func() error {
		d := &appsv1.Deployment{}
		if err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return err
		}
		if d.Status.AvailableReplicas != 6 {
			return fmt.Errorf("hub template shows %d available replicas", d.Status.AvailableReplicas)
		}
		// What `kubectl rollout status` reads first.
		if d.Status.ObservedGeneration != d.Generation {
			return fmt.Errorf("hub template observed generation %d of %d", d.Status.ObservedGeneration, d.Generation)
		}
		return nil
	})

	// Scale up: the existing replicas stay where they are.
	applyYAML(t, deploymentYAML(ns, "web", 9))
	rb = waitPlaced(t, ns, "web", "Deployment", func(got map[string]int32) error {
		if sum(got) != 9 {
			return fmt.Errorf("targets %v, want 9 replicas", got)
		}
		for c, r := range first {
			if got[c] < r {
				return fmt.Errorf("scale-up moved replicas away from %s: %v -> %v", c, first, got)
			}
		}
		return nil
	})
	checkMemberDeployments(t, ns, "web", targets(rb))
	eventually(t, "hub template rolled out at its new generation", func() error {
		d := &appsv1.Deployment{}
		if err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return err
		}
		if d.Status.ObservedGeneration != d.Generation || d.Status.UpdatedReplicas != 9 || d.Status.AvailableReplicas != 9 {
			return fmt.Errorf("observed generation %d of %d, %d updated, %d available", d.Status.ObservedGeneration, d.Generation,
				d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
		}
		return nil
	})

	// A policy edit moves it: only member3 now.
	applyYAML(t, policyYAML(ns, "web", "Deployment", "web", strings.Replace(dividedOverThree, "[member1, member2, member3]", "[member3]", 1)))
	waitPlaced(t, ns, "web", "Deployment", func(got map[string]int32) error {
		if len(got) != 1 || got["member3"] != 9 {
			return fmt.Errorf("targets %v, want member3=9", got)
		}
		return nil
	})
	checkMemberDeployments(t, ns, "web", map[string]int32{"member3": 9})

	// Deleting the template removes it everywhere.
	if err := hub.Delete(context.Background(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}); err != nil {
		t.Fatal(err)
	}
	checkMemberDeployments(t, ns, "web", nil)
	eventually(t, "binding deleted", func() error {
		if _, err := binding(ns, "web", "Deployment"); err == nil {
			return fmt.Errorf("binding still exists")
		}
		return nil
	})
}

// TestDuplicatedJobAndConfigMap propagates a Job and a ConfigMap to two
// members each: the Job runs all its completions in both.
func TestDuplicatedJobAndConfigMap(t *testing.T) {
	const ns = "e2e-duplicated"
	createNamespace(t, ns)
	duplicated := "clusterAffinity:\n  clusterNames: [member1, member2]\nreplicaScheduling:\n  replicaSchedulingType: Duplicated\n"
	applyYAML(t, policyYAML(ns, "job", "Job", "batch", duplicated)+"---\n"+policyYAML(ns, "config", "ConfigMap", "settings", duplicated)+`---
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: e2e-duplicated}
spec:
  completions: 2
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: work, image: busybox, resources: {requests: {cpu: 50m}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: e2e-duplicated}
data: {color: blue}
`)
	for _, c := range []string{"member1", "member2"} {
		eventually(t, "job completes in "+c, func() error {
			j := &batchv1.Job{}
			if err := inMember(c, client.ObjectKey{Namespace: ns, Name: "batch"}, j); err != nil {
				return err
			}
			if j.Status.Succeeded != 2 {
				return fmt.Errorf("%d of 2 completions", j.Status.Succeeded)
			}
			return nil
		})
		eventually(t, "configmap in "+c, func() error {
			cm := &corev1.ConfigMap{}
			if err := inMember(c, client.ObjectKey{Namespace: ns, Name: "settings"}, cm); err != nil {
				return err
			}
			if cm.Data["color"] != "blue" {
				return fmt.Errorf("data %v", cm.Data)
			}
			return nil
		})
	}
	if err := goneFromMember("member3", client.ObjectKey{Namespace: ns, Name: "settings"}, &corev1.ConfigMap{}); err != nil {
		t.Error(err)
	}
}

// TestUnschedulableReportsWhy checks a policy naming no existing cluster is
// reported on the binding and as an event.
func TestUnschedulableReportsWhy(t *testing.T) {
	const ns = "e2e-unschedulable"
	createNamespace(t, ns)
	applyYAML(t, policyYAML(ns, "nowhere", "Deployment", "lost", "clusterAffinity:\n  clusterNames: [no-such-cluster]\n")+"---\n"+deploymentYAML(ns, "lost", 2))
	eventually(t, "Scheduled=False with a reason", func() error {
		rb, err := binding(ns, "lost", "Deployment")
		if err != nil {
			return err
		}
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.ConditionScheduled)
		if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "clusters available") {
			return fmt.Errorf("Scheduled condition %+v", cond)
		}
		return nil
	})
	eventually(t, "FailedScheduling event", func() error {
		var events eventsv1.EventList
		if err := hub.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
			return err
		}
		onBinding, onTemplate := false, false
		for _, e := range events.Items {
			if e.Reason == "FailedScheduling" && strings.Contains(e.Note, "clusters available") {
				onBinding = onBinding || e.Regarding.Kind == "ResourceBinding"
				onTemplate = onTemplate || (e.Regarding.Kind == "Deployment" && e.Regarding.Name == "lost")
			}
		}
		if !onBinding || !onTemplate {
			return fmt.Errorf("FailedScheduling on the binding %v, on the template %v, among %d events", onBinding, onTemplate, len(events.Items))
		}
		return nil
	})
	eventually(t, "the policy reports the unknown cluster", func() error {
		p := &policyv1alpha1.PropagationPolicy{}
		if err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nowhere"}, p); err != nil {
			return err
		}
		c := meta.FindStatusCondition(p.Status.Conditions, policyv1alpha1.PolicyConditionClustersFound)
		if p.Status.MatchedTemplates != 1 || len(p.Status.UnknownClusters) != 1 || p.Status.UnknownClusters[0] != "no-such-cluster" ||
			c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("policy status %+v", p.Status)
		}
		return nil
	})
}

// TestEqualPriorityPoliciesAreReported: two policies match one template
// equally well; the one whose name sorts first governs it, and both
// policies' statuses and the template's events say so.
func TestEqualPriorityPoliciesAreReported(t *testing.T) {
	const ns = "e2e-tie"
	createNamespace(t, ns)
	placement := "clusterAffinity:\n  clusterNames: [member1]\n"
	applyYAML(t, policyYAML(ns, "alpha", "Deployment", "tied", placement)+"---\n"+policyYAML(ns, "beta", "Deployment", "tied", placement)+"---\n"+deploymentYAML(ns, "tied", 1))
	for _, name := range []string{"alpha", "beta"} {
		eventually(t, name+" reports the tie", func() error {
			p := &policyv1alpha1.PropagationPolicy{}
			if err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
				return err
			}
			if !meta.IsStatusConditionTrue(p.Status.Conditions, policyv1alpha1.PolicyConditionConflicted) || len(p.Status.Conflicts) != 1 ||
				p.Status.Conflicts[0].GovernedBy != "PropagationPolicy e2e-tie/alpha" || p.Status.Conflicts[0].Template != "Deployment e2e-tie/tied" {
				return fmt.Errorf("status %+v", p.Status)
			}
			return nil
		})
	}
	eventually(t, "PolicyConflict event on the template", func() error {
		var events eventsv1.EventList
		if err := hub.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == "PolicyConflict" && e.Regarding.Kind == "Deployment" && strings.Contains(e.Note, "spec.priority") {
				return nil
			}
		}
		return fmt.Errorf("no PolicyConflict event among %d events", len(events.Items))
	})
	// A higher priority settles it: no more conflict on either policy.
	applyYAML(t, strings.Replace(policyYAML(ns, "beta", "Deployment", "tied", placement), "spec:\n", "spec:\n  priority: 5\n", 1))
	for _, name := range []string{"alpha", "beta"} {
		eventually(t, name+" no longer conflicted", func() error {
			p := &policyv1alpha1.PropagationPolicy{}
			if err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
				return err
			}
			if meta.IsStatusConditionTrue(p.Status.Conditions, policyv1alpha1.PolicyConditionConflicted) {
				return fmt.Errorf("status %+v", p.Status)
			}
			return nil
		})
	}
}

// TestUnjoinMovesReplicas unjoins a member and checks its replicas move to
// the remaining one; the member joins again afterwards.
func TestUnjoinMovesReplicas(t *testing.T) {
	const ns = "e2e-unjoin"
	createNamespace(t, ns)
	placement := "clusterAffinity:\n  clusterNames: [member1, member2]\nreplicaScheduling:\n  replicaSchedulingType: Divided\n  replicaDivisionPreference: Weighted\n"
	applyYAML(t, policyYAML(ns, "api", "Deployment", "api", placement)+"---\n"+deploymentYAML(ns, "api", 4))
	waitPlaced(t, ns, "api", "Deployment", func(got map[string]int32) error {
		if got["member1"] != 2 || got["member2"] != 2 {
			return fmt.Errorf("targets %v, want 2 and 2", got)
		}
		return nil
	})
	// A preserved workload, and an object of member2's own team.
	applyYAML(t, deploymentYAML(ns, "keep", 1)+"---\n"+lifecyclePolicyYAML(ns, "keep", "Deployment", "keep", "preserveResourcesOnDeletion: true\n", "member2"))
	checkMemberDeployments(t, ns, "keep", map[string]int32{"member2": 1})
	team := memberConfigMap(t, "member2", ns, "team-settings")
	eventually(t, "api applied on member2", func() error { return deploymentAvailable("member2", client.ObjectKey{Namespace: ns, Name: "api"}) })

	var progress []string
	if _, err := membership.Unjoin(context.Background(), hub, "member2", membership.UnjoinOptions{Timeout: waitTimeout,
		Progress: func(m string) { progress = append(progress, m) }}); err != nil {
		t.Fatal(err)
	}
	defer rejoin(t, "member2")
	t.Logf("unjoin progress: %v", progress)
	// Unjoin returned once the Cluster was gone, so the cleanup is done.
	if err := goneFromMember("member2", client.ObjectKey{Namespace: ns, Name: "api"}, &appsv1.Deployment{}); err != nil {
		t.Errorf("unjoin left a propagated object in the member: %v", err)
	}
	kept := &appsv1.Deployment{}
	if err := inMember("member2", client.ObjectKey{Namespace: ns, Name: "keep"}, kept); err != nil {
		t.Errorf("the preserved Deployment: %v", err)
	} else if kept.Annotations[workv1alpha1.AnnotationWork] != "" || kept.Labels[workv1alpha1.LabelManagedBy] != "" {
		t.Errorf("the preserved Deployment is still marked as Shepherd's: %v %v", kept.Labels, kept.Annotations)
	}
	if err := sameConfigMap("member2", team); err != nil {
		t.Error(err)
	}
	waitPlaced(t, ns, "api", "Deployment", func(got map[string]int32) error {
		if len(got) != 1 || got["member1"] != 4 {
			return fmt.Errorf("targets %v, want member1=4", got)
		}
		return nil
	})
	eventually(t, "member1 runs all 4", func() error {
		d := &appsv1.Deployment{}
		if err := inMember("member1", client.ObjectKey{Namespace: ns, Name: "api"}, d); err != nil {
			return err
		}
		if d.Status.AvailableReplicas != 4 {
			return fmt.Errorf("%d available", d.Status.AvailableReplicas)
		}
		return nil
	})
}

// rejoin joins an unjoined member again as the suite first joined it:
// with its topology and its labels (the Staged rollout test's rings; a
// member joined again without them fell out of its stage).
func rejoin(t *testing.T, name string) {
	t.Helper()
	for i, m := range fleet.Members {
		if m.Name() == name {
			spec := fleetSpec.Members[i]
			if _, err := membership.Join(context.Background(), hub, membership.JoinOptions{
				Name: name, KubeconfigPath: m.KubeconfigPath(), Provider: spec.Provider, Region: spec.Region, Zone: spec.Zone, Labels: spec.Labels,
			}); err != nil {
				t.Errorf("joining %s again: %v", name, err)
			}
		}
	}
}
