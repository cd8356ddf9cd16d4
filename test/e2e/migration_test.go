package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/cli"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// migrationApps is how many Deployments (each with a ConfigMap and a
// Service) the migration test moves from "Karmada" to Shepherd.
const migrationApps = 20

// shopTemplates renders app i's Deployment, ConfigMap and Service as both
// control planes hold them.
func shopTemplates(ns string, i int) string {
	name := fmt.Sprintf("shop-%02d", i)
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: %[2]s
  labels: {app.kubernetes.io/part-of: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers:
      - {name: web, image: nginx:1.27}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s
  namespace: %[2]s
  labels: {app.kubernetes.io/part-of: shop}
data: {greeting: "hello from %[1]s"}
---
apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  namespace: %[2]s
  labels: {app.kubernetes.io/part-of: shop}
spec:
  selector: {app: %[1]s}
  ports:
  - {port: 80, protocol: TCP}
`, name, ns)
}

// karmadaPolicy is the Karmada policy that propagated the shop.
func karmadaPolicy(ns string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: shop, namespace: %s}
spec:
  conflictResolution: Overwrite
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app.kubernetes.io/part-of: shop}}}
  - {apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {app.kubernetes.io/part-of: shop}}}
  - {apiVersion: v1, kind: Service, labelSelector: {matchLabels: {app.kubernetes.io/part-of: shop}}}
  placement:
    clusterAffinity: {clusterNames: [member1]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`, ns)
}

// asKarmadaWroteIt creates obj in a member as Karmada's execution
// controller does: the template's content plus its label and the
// annotations naming its Work, written by its own field manager.
func asKarmadaWroteIt(t *testing.T, cluster string, obj *unstructured.Unstructured, i int) {
	t.Helper()
	labels := obj.GetLabels()
	labels["karmada.io/managed"] = "true"
	labels["work.karmada.io/permanent-id"] = fmt.Sprintf("0b6f1b6e-%04d-4c5e-9f0a-%012d", i, i)
	obj.SetLabels(labels)
	obj.SetAnnotations(map[string]string{
		"work.karmada.io/name":                            fmt.Sprintf("%s-%s-6b7d9c", obj.GetName(), strings.ToLower(obj.GetKind())),
		"work.karmada.io/namespace":                       "karmada-es-" + cluster,
		"resourcetemplate.karmada.io/uid":                 fmt.Sprintf("5d7c1c4e-%04d-4a3e-8b1f-%012d", i, i),
		"resourcetemplate.karmada.io/managed-labels":      "app.kubernetes.io/part-of",
		"resourcetemplate.karmada.io/managed-annotations": "",
		"propagationpolicy.karmada.io/name":               "shop",
		"propagationpolicy.karmada.io/namespace":          obj.GetNamespace(),
	})
	createInMember(t, cluster, obj, "karmada-controller-manager")
}

func createInMember(t *testing.T, cluster string, obj *unstructured.Unstructured, manager string) {
	t.Helper()
	if err := memberCl[cluster].Create(context.Background(), obj, client.FieldOwner(manager)); err != nil {
		t.Fatalf("creating %s %s in %s: %v", obj.GetKind(), obj.GetName(), cluster, err)
	}
}

// memberSnapshot is what a member object must keep through the move:
// everything but Shepherd's own label and annotations and the server's
// bookkeeping. A Deployment's generation is not kept: its API server
// counts an annotation change as a new generation (annotations are
// copied to the ReplicaSets), so Shepherd's annotation bumps it, with no
// new ReplicaSet and no pod replaced; podsAndReplicaSets checks those.
type memberSnapshot struct {
	uid         string
	labels      map[string]string
	annotations map[string]string
	content     map[string]any // spec or data
}

func snapshotOf(obj *unstructured.Unstructured) memberSnapshot {
	content := map[string]any{}
	for _, k := range []string{"spec", "data"} {
		if v, ok := obj.Object[k]; ok {
			content[k] = v
		}
	}
	notShepherds := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if !strings.Contains(k, "shepherd.io/") && k != workv1alpha1.LabelManagedBy {
				out[k] = v
			}
		}
		return out
	}
	return memberSnapshot{uid: string(obj.GetUID()),
		labels: notShepherds(obj.GetLabels()), annotations: notShepherds(obj.GetAnnotations()), content: content}
}

func readMember(cluster string, like *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(like.GroupVersionKind())
	err := inMember(cluster, client.ObjectKeyFromObject(like), got)
	return got, err
}

// TestMigrateFromKarmada moves a running "Karmada" fleet to Shepherd:
// member1 holds 20 Deployments, ConfigMaps and Services exactly as
// Karmada's execution controller labels and annotates them. Their
// templates and `shepherd convert --take-over-from-karmada`'s policy go to
// Shepherd's hub. Every one of the 60 objects is taken over in place: same
// UID, same content, the same ReplicaSets and pods (none restarted), nothing changed
// but Shepherd's label and annotation. An object of the same name that
// Karmada did not write, even if it matches, and a Karmada object that
// differs from its template are reported on their Works and left as they
// are.
func TestMigrateFromKarmada(t *testing.T) {
	const ns = "e2e-migrate"
	const cluster = "member1"
	ctx := context.Background()
	createNamespace(t, ns)
	if err := memberCl[cluster].Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}

	// The member as Karmada left it.
	var templates strings.Builder
	var moved []*unstructured.Unstructured
	for i := range migrationApps {
		yaml := shopTemplates(ns, i)
		templates.WriteString(yaml + "---\n")
		objs, err := testenv.DecodeYAML([]byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			asKarmadaWroteIt(t, cluster, o.DeepCopy(), i)
			moved = append(moved, o)
		}
	}
	// Someone else's ConfigMap of a name the hub also has, matching it.
	foreignYAML := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop-settings\n  namespace: %s\n  labels: {app.kubernetes.io/part-of: shop}\ndata: {mode: live}\n", ns)
	foreign := mustDecodeOne(t, foreignYAML)
	createInMember(t, cluster, foreign.DeepCopy(), "platform-team")
	// A Karmada object edited in the member since: it differs.
	editedYAML := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop-edited\n  namespace: %s\n  labels: {app.kubernetes.io/part-of: shop}\ndata: {mode: live}\n", ns)
	edited := mustDecodeOne(t, strings.Replace(editedYAML, "mode: live", "mode: hand-edited", 1))
	asKarmadaWroteIt(t, cluster, edited, 99)
	templates.WriteString(foreignYAML + "---\n" + editedYAML)

	eventually(t, "the Deployments' pods running in member1", func() error {
		pods := &corev1.PodList{}
		if err := memberCl[cluster].List(ctx, pods, client.InNamespace(ns)); err != nil {
			return err
		}
		if running := countRunning(pods); running != 2*migrationApps {
			return fmt.Errorf("%d of %d pods running", running, 2*migrationApps)
		}
		return nil
	})
	before := map[string]memberSnapshot{}
	for _, o := range moved {
		live, err := readMember(cluster, o)
		if err != nil {
			t.Fatal(err)
		}
		before[o.GetKind()+"/"+o.GetName()] = snapshotOf(live)
	}
	podsBefore := podsAndReplicaSets(t, cluster, ns)
	foreignBefore, err := readMember(cluster, foreign)
	if err != nil {
		t.Fatal(err)
	}
	editedBefore, err := readMember(cluster, edited)
	if err != nil {
		t.Fatal(err)
	}

	// Shepherd's hub: the same templates, and the converted policy.
	policy := convertForTakeover(t, karmadaPolicy(ns))
	for _, want := range []string{"whenToTakeOver: IfNoDiff", "takeOverFrom: Karmada"} {
		if !strings.Contains(policy, want) {
			t.Fatalf("the converted policy lacks %q:\n%s", want, policy)
		}
	}
	if strings.Contains(policy, "Overwrite") {
		t.Fatalf("the converted policy still overwrites:\n%s", policy)
	}
	applyYAML(t, templates.String()+"---\n"+policy)

	eventually(t, "every object Karmada wrote taken over in place", func() error {
		for _, o := range moved {
			live, err := readMember(cluster, o)
			if err != nil {
				return err
			}
			if live.GetAnnotations()[workv1alpha1.AnnotationWork] == "" {
				return fmt.Errorf("%s %s not taken over yet", o.GetKind(), o.GetName())
			}
		}
		return nil
	})
	for _, o := range moved {
		live, err := readMember(cluster, o)
		if err != nil {
			t.Fatal(err)
		}
		was, now := before[o.GetKind()+"/"+o.GetName()], snapshotOf(live)
		if was.uid != now.uid || !maps.Equal(was.labels, now.labels) ||
			!maps.Equal(was.annotations, now.annotations) || !equality.Semantic.DeepEqual(was.content, now.content) {
			t.Errorf("%s %s changed beyond Shepherd's marks:\nbefore %+v\nafter  %+v", o.GetKind(), o.GetName(), was, now)
		}
	}
	if podsAfter := podsAndReplicaSets(t, cluster, ns); !maps.Equal(podsBefore, podsAfter) {
		t.Errorf("pods or ReplicaSets were replaced, or pods restarted: before %v, after %v", podsBefore, podsAfter)
	}

	// The two it must not take are reported, and untouched.
	for _, tc := range []struct {
		name, want string
		was        *unstructured.Unstructured
	}{
		{"shop-settings", "written neither by Shepherd nor by Karmada", foreignBefore},
		{"shop-edited", "differs from what would be sent", editedBefore},
	} {
		eventually(t, tc.name+" reported as a conflict", func() error {
			c, _, err := workCondition(ns, tc.name, "ConfigMap", cluster, workv1alpha1.WorkConditionApplied)
			if err != nil {
				return err
			}
			if c == nil || c.Reason != "Conflict" || !strings.Contains(c.Message, tc.want) {
				return fmt.Errorf("Applied %+v", c)
			}
			return nil
		})
		now, err := readMember(cluster, tc.was)
		if err != nil {
			t.Fatal(err)
		}
		if now.GetResourceVersion() != tc.was.GetResourceVersion() {
			t.Errorf("%s was written: %+v", tc.name, now.Object["metadata"])
		}
	}
}

// countRunning counts the pods that run.
func countRunning(pods *corev1.PodList) int {
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// podsAndReplicaSets maps the UID of each pod to its containers'
// restarts, and of each ReplicaSet to its replicas.
func podsAndReplicaSets(t *testing.T, cluster, ns string) map[string]int32 {
	t.Helper()
	ctx := context.Background()
	pods := &corev1.PodList{}
	if err := memberCl[cluster].List(ctx, pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]int32{}
	for _, p := range pods.Items {
		var restarts int32
		for _, s := range p.Status.ContainerStatuses {
			restarts += s.RestartCount
		}
		out["pod "+string(p.UID)] = restarts
	}
	rss := &appsv1.ReplicaSetList{}
	if err := memberCl[cluster].List(ctx, rss, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, rs := range rss.Items {
		out["replicaset "+string(rs.UID)] = ptr.Deref(rs.Spec.Replicas, 0)
	}
	return out
}

func mustDecodeOne(t *testing.T, yaml string) *unstructured.Unstructured {
	t.Helper()
	objs, err := testenv.DecodeYAML([]byte(yaml))
	if err != nil || len(objs) != 1 {
		t.Fatalf("decoding %q: %v (%d objects)", yaml, err, len(objs))
	}
	return objs[0]
}

// convertForTakeover runs `shepherd convert --take-over-from-karmada` on a
// Karmada policy and returns the YAML it writes.
func convertForTakeover(t *testing.T, karmadaYAML string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "karmada.yaml")
	if err := os.WriteFile(file, []byte(karmadaYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := cli.NewRootCommand()
	var out, report bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&report)
	cmd.SetArgs([]string{"convert", "--take-over-from-karmada", "-f", file})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("shepherd convert: %v\n%s", err, report.String())
	}
	return out.String()
}
