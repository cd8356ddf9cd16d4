package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// scaleInMember sets a Deployment's replicas in a member, as
// `kubectl scale` there would: a drift of a field Shepherd sends.
func scaleInMember(t *testing.T, cluster, ns, name string, replicas int32) {
	t.Helper()
	eventually(t, "scale "+name+" in "+cluster, func() error {
		d := &appsv1.Deployment{}
		if err := inMember(cluster, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return err
		}
		d.Spec.Replicas = ptr.To(replicas)
		return memberCl[cluster].Update(context.Background(), d, client.FieldOwner("kubectl-scale"))
	})
}

func memberReplicas(cluster, ns, name string) (int32, error) {
	d := &appsv1.Deployment{}
	if err := inMember(cluster, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		return 0, err
	}
	return ptr.Deref(d.Spec.Replicas, 1), nil
}

// workOf returns the Work of a Deployment's or ConfigMap's binding in a cluster.
func workOf(ns, name, kind, cluster string) (*workv1alpha1.Work, error) {
	w := &workv1alpha1.Work{}
	bindingName := names.BindingName(kind, name)
	err := hub.Get(context.Background(), client.ObjectKey{Namespace: names.ExecutionNamespace(cluster), Name: names.WorkName(ns, bindingName)}, w)
	return w, err
}

func workCondition(ns, name, kind, cluster, typ string) (*metav1.Condition, *workv1alpha1.Work, error) {
	w, err := workOf(ns, name, kind, cluster)
	if err != nil {
		return nil, nil, err
	}
	return meta.FindStatusCondition(w.Status.Conditions, typ), w, nil
}

// TestDrift: a member edit of a propagated Deployment is reported at once
// (Work condition, binding, `shepherd get placements`); IfNotDrifted holds
// the copy back until the edit is undone, then the held update goes out;
// Always puts the fields back at the next apply; ReportDiff writes nothing
// and reports differences; IfNoDiff takes over only a matching object.
func TestDrift(t *testing.T) {
	const ns = "e2e-drift"
	createNamespace(t, ns)

	// IfNotDrifted.
	applyYAML(t, deploymentYAML(ns, "held", 1)+"---\n"+lifecyclePolicyYAML(ns, "held", "Deployment", "held", "applyStrategy: {whenToApply: IfNotDrifted}\n", "member1"))
	eventually(t, "held in member1", func() error { _, err := memberReplicas("member1", ns, "held"); return err })
	scaleInMember(t, "member1", ns, "held", 3)
	eventually(t, "the drift held and reported", func() error {
		c, _, err := workCondition(ns, "held", "Deployment", "member1", workv1alpha1.WorkConditionDrifted)
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != workv1alpha1.ReasonDriftHeld || !strings.Contains(c.Message, "spec.replicas: member 3, hub 1") {
			return fmt.Errorf("Drifted %+v", c)
		}
		rb, err := binding(ns, "held", "Deployment")
		if err != nil {
			return err
		}
		if item := aggregated(rb, "member1"); item == nil || !item.Drifted {
			return fmt.Errorf("member1's aggregated status %+v", item)
		}
		return nil
	})
	if out := getPlacements(t, ns); !strings.Contains(out, "member1=1 (DriftHeld) [drifted]") {
		t.Errorf("shepherd get placements does not show the held drift:\n%s", out)
	}
	// A template edit does not reach the held copy.
	applyYAML(t, strings.Replace(deploymentYAML(ns, "held", 1), "image: nginx:1.27", "image: nginx:1.28", 1))
	eventually(t, "the template edit held back", func() error {
		c, w, err := workCondition(ns, "held", "Deployment", "member1", workv1alpha1.WorkConditionApplied)
		if err != nil {
			return err
		}
		if !strings.Contains(string(w.Spec.Workload.Manifests[0].Raw), "nginx:1.28") || c == nil || c.ObservedGeneration != w.Generation || c.Reason != workv1alpha1.ReasonDriftHeld {
			return fmt.Errorf("Applied %+v at generation %d", c, w.Generation)
		}
		return nil
	})
	d := &appsv1.Deployment{}
	if err := inMember("member1", client.ObjectKey{Namespace: ns, Name: "held"}, d); err != nil || ptr.Deref(d.Spec.Replicas, 0) != 3 ||
		d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
		t.Fatalf("the held copy was written: %v %+v", err, d.Spec)
	}
	// Undoing the member's edit resolves the drift, and the update goes out.
	scaleInMember(t, "member1", ns, "held", 1)
	eventually(t, "drift resolved and the held update applied", func() error {
		c, _, err := workCondition(ns, "held", "Deployment", "member1", workv1alpha1.WorkConditionDrifted)
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("Drifted %+v", c)
		}
		d := &appsv1.Deployment{}
		if err := inMember("member1", client.ObjectKey{Namespace: ns, Name: "held"}, d); err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.28" {
			return fmt.Errorf("member image %s", img)
		}
		return nil
	})

	// Always: reported at once, put back at the next apply.
	applyYAML(t, deploymentYAML(ns, "always", 1)+"---\n"+lifecyclePolicyYAML(ns, "always", "Deployment", "always", "", "member1"))
	eventually(t, "always in member1", func() error { _, err := memberReplicas("member1", ns, "always"); return err })
	scaleInMember(t, "member1", ns, "always", 4)
	eventually(t, "the drift reported", func() error {
		c, _, err := workCondition(ns, "always", "Deployment", "member1", workv1alpha1.WorkConditionDrifted)
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != workv1alpha1.ReasonDriftDetected {
			return fmt.Errorf("Drifted %+v", c)
		}
		return nil
	})
	applyYAML(t, strings.Replace(deploymentYAML(ns, "always", 1), "image: nginx:1.27", "image: nginx:1.28", 1))
	eventually(t, "the drift overwritten by the next apply", func() error {
		c, _, err := workCondition(ns, "always", "Deployment", "member1", workv1alpha1.WorkConditionDrifted)
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != workv1alpha1.ReasonDriftOverwritten {
			return fmt.Errorf("Drifted %+v", c)
		}
		if n, err := memberReplicas("member1", ns, "always"); err != nil || n != 1 {
			return fmt.Errorf("member replicas %d, %v", n, err)
		}
		return nil
	})

	// ReportDiff: nothing written, differences reported.
	team := memberConfigMap(t, "member2", ns, "audit")
	applyYAML(t, hubConfigMapYAML(ns, "audit")+"---\n"+lifecyclePolicyYAML(ns, "audit", "ConfigMap", "audit", "applyStrategy: {type: ReportDiff}\n", "member1", "member2"))
	eventually(t, "differences reported", func() error {
		c, w, err := workCondition(ns, "audit", "ConfigMap", "member2", workv1alpha1.WorkConditionApplied)
		if err != nil {
			return err
		}
		if c == nil || c.Reason != workv1alpha1.ReasonReportDiff || !strings.Contains(c.Message, `data.owner: member "member-team", hub "hub"`) {
			return fmt.Errorf("Applied %+v", c)
		}
		if len(w.Status.ManifestStatuses) != 1 || w.Status.ManifestStatuses[0].Drift == nil || w.Status.ManifestStatuses[0].Drift.Type != workv1alpha1.DriftDiff {
			return fmt.Errorf("manifest statuses %+v", w.Status.ManifestStatuses)
		}
		c, w, err = workCondition(ns, "audit", "ConfigMap", "member1", workv1alpha1.WorkConditionApplied)
		if err != nil {
			return err
		}
		if c == nil || c.Reason != workv1alpha1.ReasonReportDiff || len(w.Status.ManifestStatuses) != 1 ||
			w.Status.ManifestStatuses[0].Drift == nil || !w.Status.ManifestStatuses[0].Drift.Missing {
			return fmt.Errorf("member1: Applied %+v, statuses %+v", c, w.Status.ManifestStatuses)
		}
		return nil
	})
	if err := sameConfigMap("member2", team); err != nil {
		t.Error(err)
	}
	if err := goneFromMember("member1", client.ObjectKey{Namespace: ns, Name: "audit"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("ReportDiff created the object: %v", err)
	}

	// IfNoDiff: a matching object is taken over, a differing one is not.
	matching := memberConfigMap(t, "member1", ns, "mesh")
	matching.Data = map[string]string{"owner": "hub"}
	matching.Labels = nil
	if err := memberCl["member1"].Update(context.Background(), matching); err != nil {
		t.Fatal(err)
	}
	differing := memberConfigMap(t, "member2", ns, "mesh")
	applyYAML(t, hubConfigMapYAML(ns, "mesh")+"---\n"+lifecyclePolicyYAML(ns, "mesh", "ConfigMap", "mesh", "applyStrategy: {whenToTakeOver: IfNoDiff}\n", "member1", "member2"))
	eventually(t, "the matching object taken over, the other left", func() error {
		cm := &corev1.ConfigMap{}
		if err := inMember("member1", client.ObjectKey{Namespace: ns, Name: "mesh"}, cm); err != nil {
			return err
		}
		if cm.Annotations[workv1alpha1.AnnotationWork] == "" || cm.UID != matching.UID {
			return fmt.Errorf("member1's mesh not taken over: %+v", cm.ObjectMeta)
		}
		c, _, err := workCondition(ns, "mesh", "ConfigMap", "member2", workv1alpha1.WorkConditionApplied)
		if err != nil {
			return err
		}
		if c == nil || c.Reason != "Conflict" || !strings.Contains(c.Message, "differs from what would be sent") || !strings.Contains(c.Message, "data.owner") {
			return fmt.Errorf("member2 Applied %+v", c)
		}
		return nil
	})
	if err := sameConfigMap("member2", differing); err != nil {
		t.Error(err)
	}

	// IfNoDiff compares the whole content: a template without data does
	// not "match" an administrator's ConfigMap that has some (it would
	// then be adopted, overwritten by the next template edit, and
	// deleted with the template).
	admins := memberConfigMap(t, "member1", ns, "admin-config")
	applyYAML(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: admin-config, namespace: %s}\n", ns)+"---\n"+
		lifecyclePolicyYAML(ns, "admin-config", "ConfigMap", "admin-config", "applyStrategy: {whenToTakeOver: IfNoDiff}\n", "member1"))
	eventually(t, "the administrator's ConfigMap left alone", func() error {
		c, _, err := workCondition(ns, "admin-config", "ConfigMap", "member1", workv1alpha1.WorkConditionApplied)
		if err != nil {
			return err
		}
		if c == nil || c.Reason != "Conflict" || !strings.Contains(c.Message, "differs from what would be sent") || !strings.Contains(c.Message, "data") {
			return fmt.Errorf("member1 Applied %+v", c)
		}
		return nil
	})
	if err := sameConfigMap("member1", admins); err != nil {
		t.Error(err)
	}
}

// TestPolicyDeletionKeepsWorkloads: deleting a policy leaves the member
// copies running, unclaimed; a new policy claims them; deleting the
// template still removes them.
func TestPolicyDeletionKeepsWorkloads(t *testing.T) {
	const ns = "e2e-unclaimed"
	createNamespace(t, ns)
	applyYAML(t, hubConfigMapYAML(ns, "kept")+"---\n"+lifecyclePolicyYAML(ns, "first", "ConfigMap", "kept", "", "member1"))
	key := client.ObjectKey{Namespace: ns, Name: "kept"}
	eventually(t, "kept in member1", func() error { return inMember("member1", key, &corev1.ConfigMap{}) })
	first := &corev1.ConfigMap{}
	if err := inMember("member1", key, first); err != nil {
		t.Fatal(err)
	}

	deleteFromHub(t, policyObject(ns, "first"))
	eventually(t, "binding unclaimed", func() error {
		rb, err := binding(ns, "kept", "ConfigMap")
		if err != nil {
			return err
		}
		if c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.ConditionClaimed); c == nil || c.Reason != workv1alpha1.ReasonPolicyDeleted {
			return fmt.Errorf("Claimed %+v", c)
		}
		return nil
	})
	if out := getPlacements(t, ns); !strings.Contains(out, "[unclaimed]") {
		t.Errorf("shepherd get placements does not say unclaimed:\n%s", out)
	}
	cm := &corev1.ConfigMap{}
	if err := inMember("member1", key, cm); err != nil || cm.UID != first.UID {
		t.Fatalf("the member copy did not stay: %v", err)
	}

	applyYAML(t, lifecyclePolicyYAML(ns, "second", "ConfigMap", "kept", "", "member1"))
	eventually(t, "claimed by the new policy", func() error {
		rb, err := binding(ns, "kept", "ConfigMap")
		if err != nil {
			return err
		}
		if c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.ConditionClaimed); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Claimed %+v", c)
		}
		if rb.Spec.PolicyRef == nil || rb.Spec.PolicyRef.Name != "second" {
			return fmt.Errorf("policyRef %+v", rb.Spec.PolicyRef)
		}
		return nil
	})
	if err := inMember("member1", key, cm); err != nil || cm.UID != first.UID {
		t.Fatalf("the claimed copy was replaced: %v", err)
	}

	deleteFromHub(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kept"}})
	eventually(t, "gone from member1 with its template", func() error { return goneFromMember("member1", key, &corev1.ConfigMap{}) })
	deleteFromHub(t, policyObject(ns, "second"))
}

func policyObject(ns, name string) client.Object {
	return &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// TestConfigMapDriftIsSeenAtOnce: a kind without a generation (a
// ConfigMap) edited in a member is compared at once, not at the periodic
// apply (10 minutes): under IfNotDrifted its Work says Drifted and the
// edit stays.
func TestConfigMapDriftIsSeenAtOnce(t *testing.T) {
	const ns = "e2e-drift-configmap"
	createNamespace(t, ns)
	cm := configMapInMember1(t, ns, "applyStrategy: {whenToApply: IfNotDrifted}\n")
	cm.Data["owner"] = "edited-in-member1"
	if err := memberCl["member1"].Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	edited := time.Now()
	testenv.Eventually(t, time.Minute, "Drifted=True within a minute (the periodic apply comes after 10)", func() error {
		c, _, err := workCondition(ns, "settings", "ConfigMap", "member1", workv1alpha1.WorkConditionDrifted)
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "data.owner") {
			return fmt.Errorf("Drifted %+v", c)
		}
		return nil
	})
	t.Logf("the edit was reported %s after it was made", time.Since(edited).Round(100*time.Millisecond))
	got := &corev1.ConfigMap{}
	if err := inMember("member1", client.ObjectKey{Namespace: ns, Name: "settings"}, got); err != nil || got.Data["owner"] != "edited-in-member1" {
		t.Fatalf("the member's edit was not left as it is under IfNotDrifted: %v %v", err, got.Data)
	}
}

// driftRevertDelay is the fleet's --drift-revert-delay: short, so the test
// below waits for it, and long enough to tell "put back at once" from "put
// back after the delay".
const driftRevertDelay = 5 * time.Second

// TestConfigMapDriftIsPutBackUnderAlways: under whenToApply Always a
// ConfigMap edited in a member is reported at once, left as edited for the
// drift revert delay, then put back by an apply (Drifted=False, reason
// Overwritten), with no change on the hub.
func TestConfigMapDriftIsPutBackUnderAlways(t *testing.T) {
	const ns = "e2e-drift-putback"
	createNamespace(t, ns)
	cm := configMapInMember1(t, ns, "")
	cm.Data["owner"] = "edited-in-member1"
	if err := memberCl["member1"].Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	var reported metav1.Time
	testenv.Eventually(t, 15*time.Second, "Drifted=True, reason DriftDetected", func() error {
		c, _, err := workCondition(ns, "settings", "ConfigMap", "member1", workv1alpha1.WorkConditionDrifted)
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != workv1alpha1.ReasonDriftDetected {
			return fmt.Errorf("Drifted %+v", c)
		}
		reported = c.LastTransitionTime
		return nil
	})
	testenv.Eventually(t, driftRevertDelay+30*time.Second, "the edit put back (Drifted=False, Overwritten)", func() error {
		c, _, err := workCondition(ns, "settings", "ConfigMap", "member1", workv1alpha1.WorkConditionDrifted)
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != workv1alpha1.ReasonDriftOverwritten {
			return fmt.Errorf("Drifted %+v", c)
		}
		got := &corev1.ConfigMap{}
		if err := inMember("member1", client.ObjectKey{Namespace: ns, Name: "settings"}, got); err != nil {
			return err
		}
		if got.Data["owner"] != "hub" {
			return fmt.Errorf("member data %v", got.Data)
		}
		// Condition times have a resolution of a second.
		if d := c.LastTransitionTime.Sub(reported.Time); d < driftRevertDelay-time.Second {
			t.Errorf("put back %s after the report, before the %s delay", d, driftRevertDelay)
		}
		return nil
	})
}

// TestDeletedCopyIsPutBack: a copy deleted by hand in a member is put back
// within seconds (the work status controller sees the deletion and the
// execution controller writes it again), not at the periodic apply.
func TestDeletedCopyIsPutBack(t *testing.T) {
	const ns = "e2e-deleted-copy"
	createNamespace(t, ns)
	cm := configMapInMember1(t, ns, "")
	if err := memberCl["member1"].Delete(context.Background(), cm, client.Preconditions{UID: &cm.UID}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	testenv.Eventually(t, 15*time.Second, "the copy put back within 15 s (the periodic apply comes after 10 minutes)", func() error {
		got := &corev1.ConfigMap{}
		if err := inMember("member1", client.ObjectKey{Namespace: ns, Name: "settings"}, got); err != nil {
			return err
		}
		if got.UID == cm.UID {
			return fmt.Errorf("still the deleted copy")
		}
		return nil
	})
	t.Logf("the copy was put back %s after its deletion", time.Since(deleted).Round(100*time.Millisecond))
}

// configMapInMember1 propagates ConfigMap "settings" of ns to member1 under
// a policy with extra (e.g. an applyStrategy line), and returns member1's
// copy once its Work is Applied.
func configMapInMember1(t *testing.T, ns, extra string) *corev1.ConfigMap {
	t.Helper()
	applyYAML(t, hubConfigMapYAML(ns, "settings")+"---\n"+lifecyclePolicyYAML(ns, "settings", "ConfigMap", "settings", extra, "member1"))
	cm := &corev1.ConfigMap{}
	eventually(t, "settings applied in member1", func() error {
		if err := inMember("member1", client.ObjectKey{Namespace: ns, Name: "settings"}, cm); err != nil {
			return err
		}
		c, _, err := workCondition(ns, "settings", "ConfigMap", "member1", workv1alpha1.WorkConditionApplied)
		if err != nil || c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Applied %+v (%v)", c, err)
		}
		return nil
	})
	return cm
}
