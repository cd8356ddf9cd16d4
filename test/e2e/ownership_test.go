package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/cli"
)

// lifecyclePolicyYAML is a policy for one object with extra spec fields
// (YAML indented under spec:), duplicating it to the given clusters.
func lifecyclePolicyYAML(ns, name, kind, target, extra string, clusters ...string) string {
	placement := fmt.Sprintf("clusterAffinity:\n  clusterNames: [%s]\nreplicaScheduling: {replicaSchedulingType: Duplicated}\n", strings.Join(clusters, ", "))
	out := policyYAML(ns, name, kind, target, placement)
	if extra != "" {
		out += indent(extra, "  ")
	}
	return out
}

// getPlacements runs `shepherd get placements -n ns` against the hub.
func getPlacements(t *testing.T, ns string) string {
	t.Helper()
	cmd := cli.NewRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"get", "placements", "-n", ns, "--hub-kubeconfig", fleet.Hub.KubeconfigPath()})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("shepherd get placements: %v\n%s", err, out.String())
	}
	return out.String()
}

// memberConfigMap creates a ConfigMap in a member as a member team would.
func memberConfigMap(t *testing.T, cluster, ns, name string) *corev1.ConfigMap {
	t.Helper()
	c := memberCl[cluster]
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"owner": "member-team"}},
		Data:       map[string]string{"owner": "member-team"},
	}
	if err := c.Create(ctx, cm, client.FieldOwner("member-team")); err != nil {
		t.Fatal(err)
	}
	return cm
}

func sameConfigMap(cluster string, want *corev1.ConfigMap) error {
	got := &corev1.ConfigMap{}
	if err := inMember(cluster, client.ObjectKeyFromObject(want), got); err != nil {
		return err
	}
	if got.UID != want.UID || got.ResourceVersion != want.ResourceVersion || !equality.Semantic.DeepEqual(got.Labels, want.Labels) ||
		!equality.Semantic.DeepEqual(got.Annotations, want.Annotations) || !equality.Semantic.DeepEqual(got.Data, want.Data) {
		return fmt.Errorf("the member team's ConfigMap changed: %+v %v", got.ObjectMeta, got.Data)
	}
	return nil
}

func hubConfigMapYAML(ns, name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {owner: hub}\n", name, ns)
}

func deleteFromHub(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := hub.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
}

// TestConflictAbortAndOverwrite: a ConfigMap a member team already has is
// never changed or deleted under the default Abort, which the Work, the
// binding and `shepherd get placements` report; Overwrite adopts it, and
// then it goes with the template.
func TestConflictAbortAndOverwrite(t *testing.T) {
	const ns = "e2e-conflict"
	createNamespace(t, ns)
	team := memberConfigMap(t, "member1", ns, "settings")

	applyYAML(t, hubConfigMapYAML(ns, "settings")+"---\n"+lifecyclePolicyYAML(ns, "settings", "ConfigMap", "settings", "", "member1", "member2"))
	eventually(t, "conflict reported on the binding", func() error {
		rb, err := binding(ns, "settings", "ConfigMap")
		if err != nil {
			return err
		}
		item := aggregated(rb, "member1")
		if item == nil || item.Applied || item.AppliedReason != "Conflict" || !strings.Contains(item.AppliedMessage, "not created by Shepherd") {
			return fmt.Errorf("member1's aggregated status %+v", item)
		}
		if c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.ConditionFullyApplied); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("FullyApplied %+v", c)
		}
		return nil
	})
	eventually(t, "member2 gets the hub's copy", func() error {
		cm := &corev1.ConfigMap{}
		if err := inMember("member2", client.ObjectKey{Namespace: ns, Name: "settings"}, cm); err != nil {
			return err
		}
		if cm.Data["owner"] != "hub" {
			return fmt.Errorf("data %v", cm.Data)
		}
		return nil
	})
	if out := getPlacements(t, ns); !strings.Contains(out, "member1 (Conflict)") {
		t.Errorf("shepherd get placements does not show the conflict:\n%s", out)
	}
	if err := sameConfigMap("member1", team); err != nil {
		t.Fatal(err)
	}

	// Deleting the template and its policy removes the hub's copy from
	// member2 and leaves the team's object alone.
	deleteFromHub(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}})
	eventually(t, "hub copy removed from member2", func() error {
		return goneFromMember("member2", client.ObjectKey{Namespace: ns, Name: "settings"}, &corev1.ConfigMap{})
	})
	eventually(t, "binding gone", func() error {
		_, err := binding(ns, "settings", "ConfigMap")
		return goneErr(err)
	})
	if err := sameConfigMap("member1", team); err != nil {
		t.Fatal(err)
	}

	// Overwrite adopts a second team object; it is then Shepherd's.
	adopted := memberConfigMap(t, "member1", ns, "adopted")
	applyYAML(t, hubConfigMapYAML(ns, "adopted")+"---\n"+lifecyclePolicyYAML(ns, "adopted", "ConfigMap", "adopted", "conflictResolution: Overwrite\n", "member1"))
	eventually(t, "adopted", func() error {
		cm := &corev1.ConfigMap{}
		if err := inMember("member1", client.ObjectKeyFromObject(adopted), cm); err != nil {
			return err
		}
		if cm.UID != adopted.UID || cm.Data["owner"] != "hub" || cm.Annotations[workv1alpha1.AnnotationWork] == "" {
			return fmt.Errorf("member object %+v %v", cm.ObjectMeta, cm.Data)
		}
		return nil
	})
	deleteFromHub(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "adopted"}})
	eventually(t, "adopted object deleted with its template", func() error {
		return goneFromMember("member1", client.ObjectKeyFromObject(adopted), &corev1.ConfigMap{})
	})
}

// TestPreserveResourcesOnDeletion: with preserveResourcesOnDeletion the
// member Deployments outlive their template, plainly unmanaged.
func TestPreserveResourcesOnDeletion(t *testing.T) {
	const ns = "e2e-preserve"
	createNamespace(t, ns)
	applyYAML(t, deploymentYAML(ns, "kept", 1)+"---\n"+lifecyclePolicyYAML(ns, "kept", "Deployment", "kept", "preserveResourcesOnDeletion: true\n", "member1", "member2"))
	checkMemberDeployments(t, ns, "kept", map[string]int32{"member1": 1, "member2": 1})
	deleteFromHub(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kept"}})
	eventually(t, "binding gone", func() error {
		_, err := binding(ns, "kept", "Deployment")
		return goneErr(err)
	})
	for _, c := range []string{"member1", "member2"} {
		eventually(t, "released in "+c, func() error {
			d := &appsv1.Deployment{}
			if err := inMember(c, client.ObjectKey{Namespace: ns, Name: "kept"}, d); err != nil {
				return err
			}
			if _, ok := d.Labels[workv1alpha1.LabelManagedBy]; ok {
				return fmt.Errorf("labels %v", d.Labels)
			}
			if _, ok := d.Annotations[workv1alpha1.AnnotationWork]; ok {
				return fmt.Errorf("annotations %v", d.Annotations)
			}
			if d.Status.AvailableReplicas != 1 {
				return fmt.Errorf("%d available", d.Status.AvailableReplicas)
			}
			return nil
		})
	}
}

// TestSuspension: a suspended policy schedules but applies nothing; the
// binding says so; lifting it applies what is pending. Suspending one
// cluster holds only that cluster, also when it leaves the placement.
func TestSuspension(t *testing.T) {
	const ns = "e2e-suspension"
	createNamespace(t, ns)
	suspended := "suspension: {dispatching: true}\n"
	applyYAML(t, deploymentYAML(ns, "held", 1)+"---\n"+lifecyclePolicyYAML(ns, "held", "Deployment", "held", suspended, "member1", "member2"))
	waitPlaced(t, ns, "held", "Deployment", func(got map[string]int32) error {
		if len(got) != 2 {
			return fmt.Errorf("targets %v", got)
		}
		return nil
	})
	eventually(t, "FullyApplied=False (Suspended)", func() error {
		rb, err := binding(ns, "held", "Deployment")
		if err != nil {
			return err
		}
		if c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.ConditionFullyApplied); c == nil || c.Reason != "Suspended" {
			return fmt.Errorf("FullyApplied %+v", c)
		}
		return nil
	})
	time.Sleep(2 * time.Second) // what would have been applied by now was not
	for _, c := range []string{"member1", "member2"} {
		if err := goneFromMember(c, client.ObjectKey{Namespace: ns, Name: "held"}, &appsv1.Deployment{}); err != nil {
			t.Fatalf("applied while suspended: %v", err)
		}
	}
	if out := getPlacements(t, ns); !strings.Contains(out, "[suspended]") {
		t.Errorf("shepherd get placements does not show the suspension:\n%s", out)
	}

	// Hold member2 only: member1 gets it.
	applyYAML(t, lifecyclePolicyYAML(ns, "held", "Deployment", "held", "suspension:\n  dispatchingOnClusters: {clusterNames: [member2]}\n", "member1", "member2"))
	checkMemberDeployments(t, ns, "held", map[string]int32{"member1": 1})

	// member2 leaves the placement while held: its Work stays held.
	applyYAML(t, lifecyclePolicyYAML(ns, "held", "Deployment", "held", "suspension:\n  dispatchingOnClusters: {clusterNames: [member2]}\n", "member1"))
	waitPlaced(t, ns, "held", "Deployment", func(got map[string]int32) error {
		if len(got) != 1 {
			return fmt.Errorf("targets %v", got)
		}
		return nil
	})
	work := &workv1alpha1.Work{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: "shepherd-es-member2", Name: workName(t, ns, "held-deployment")}, work); err != nil {
		t.Fatalf("member2's held Work: %v", err)
	}

	// Lifting the suspension: back on both.
	applyYAML(t, lifecyclePolicyYAML(ns, "held", "Deployment", "held", "", "member1", "member2"))
	checkMemberDeployments(t, ns, "held", map[string]int32{"member1": 1, "member2": 1})
}

// workName is the Work name of a binding, read from the hub.
func workName(t *testing.T, ns, bindingName string) string {
	t.Helper()
	list := &workv1alpha1.WorkList{}
	if err := hub.List(context.Background(), list, client.MatchingLabels{workv1alpha1.LabelBindingNamespace: ns, workv1alpha1.LabelBindingName: bindingName}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatalf("no Work of %s/%s", ns, bindingName)
	}
	return list.Items[0].Name
}

// TestLazyActivation: a Lazy policy's change waits until the template
// changes, then takes effect.
func TestLazyActivation(t *testing.T) {
	const ns = "e2e-lazy"
	createNamespace(t, ns)
	applyYAML(t, deploymentYAML(ns, "lazy", 1)+"---\n"+lifecyclePolicyYAML(ns, "lazy", "Deployment", "lazy", "activationPreference: Lazy\n", "member1"))
	checkMemberDeployments(t, ns, "lazy", map[string]int32{"member1": 1})

	applyYAML(t, lifecyclePolicyYAML(ns, "lazy", "Deployment", "lazy", "activationPreference: Lazy\n", "member2"))
	time.Sleep(3 * time.Second)
	rb, err := binding(ns, "lazy", "Deployment")
	if err != nil {
		t.Fatal(err)
	}
	if got := targets(rb); len(got) != 1 || got["member1"] != 1 {
		t.Fatalf("a Lazy policy's change moved the workload before its template changed: %v", got)
	}
	if !strings.Contains(rb.Spec.Placement.ClusterAffinity.ClusterNames[0], "member1") {
		t.Fatalf("binding placement changed: %+v", rb.Spec.Placement.ClusterAffinity)
	}

	applyYAML(t, deploymentYAML(ns, "lazy", 2)) // the template changes
	checkMemberDeployments(t, ns, "lazy", map[string]int32{"member2": 2})
}

// goneErr turns a Get's error into nil when the object is gone.
func goneErr(err error) error {
	if err == nil {
		return fmt.Errorf("still there")
	}
	return client.IgnoreNotFound(err)
}

// TestStatePreservation: a failover with state preservation reads a value
// from the failed copy's status and sets it as a label on the copy that
// replaces it in another cluster.
func TestStatePreservation(t *testing.T) {
	const ns = "e2e-state"
	key := client.ObjectKey{Namespace: ns, Name: "stateful"}
	createNamespace(t, ns)
	applyYAML(t, deploymentYAML(ns, "stateful", 1)+`---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: stateful, namespace: e2e-state}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: stateful}
  failover:
    application:
      preConditions: {healthyState: Healthy}
      decisionConditions: {tolerationSeconds: 5}
      purgeMode: Directly
      statePreservation:
        rules:
        - {aliasLabelName: example.com/last-generation, jsonPath: "{.observedGeneration}"}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    preferredClusterAffinities:
    - {weight: 100, preference: {clusterNames: [member1]}}
    spreadConstraints:
    - {spreadByField: cluster, minGroups: 1, maxGroups: 1}
`)
	waitPlaced(t, ns, "stateful", "Deployment", func(got map[string]int32) error {
		if len(got) != 1 || got["member1"] == 0 {
			return fmt.Errorf("targets %v, want member1", got)
		}
		return nil
	})
	waitHealthyOn(t, ns, "stateful", "Deployment", "member1")
	defer starve(t, "member1", ns, "stateful")()
	rb := waitEvicted(t, ns, "stateful", "Deployment", "member1")
	var entry *workv1alpha1.EvictionHistoryEntry
	for i := range rb.Spec.EvictionHistory {
		if rb.Spec.EvictionHistory[i].ClusterName == "member1" {
			entry = &rb.Spec.EvictionHistory[i]
		}
	}
	if entry == nil || entry.PreservedLabelState["example.com/last-generation"] != "1" || strings.Join(entry.ClustersBeforeFailover, ",") != "member1" {
		t.Fatalf("history entry %+v", entry)
	}
	eventually(t, "replacement on member2 carries the preserved label", func() error {
		d := &appsv1.Deployment{}
		if err := inMember("member2", key, d); err != nil {
			return err
		}
		if v := d.Labels["example.com/last-generation"]; v != "1" {
			return fmt.Errorf("labels %v", d.Labels)
		}
		return deploymentAvailable("member2", key)
	})
	eventually(t, "old copy removed from member1 at once", func() error {
		return goneFromMember("member1", key, &appsv1.Deployment{})
	})
}
