package binding_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// timeout bounds every wait; the controllers react within milliseconds,
// so this only matters on a loaded machine.
const timeout = 60 * time.Second

// eventually polls check until it returns nil, failing the test with its
// last error after timeout.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, timeout, what, check)
}

// namespace creates a namespace for one test.
func namespace(t *testing.T, name string) {
	t.Helper()
	if err := cli.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// apply server-side applies YAML documents to the hub.
func apply(t *testing.T, yaml string) {
	t.Helper()
	if _, err := hub.Apply(context.Background(), []byte(yaml)); err != nil {
		t.Fatal(err)
	}
}

// remove deletes an object, ignoring its absence.
func remove(t *testing.T, obj client.Object) {
	t.Helper()
	if err := cli.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

func getRB(ns, name string) (*workv1alpha1.ResourceBinding, error) {
	rb := &workv1alpha1.ResourceBinding{}
	return rb, cli.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rb)
}

// waitScheduled waits until the binding is scheduled with spec as the
// detector writes it and returns it.
func waitScheduled(t *testing.T, ns, name string, check func(b *workv1alpha1.ResourceBinding) error) *workv1alpha1.ResourceBinding {
	t.Helper()
	var rb *workv1alpha1.ResourceBinding
	eventually(t, "binding "+ns+"/"+name+" scheduled", func() error {
		var err error
		if rb, err = getRB(ns, name); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha1.ConditionScheduled) {
			return fmt.Errorf("not scheduled: %+v", rb.Status.Conditions)
		}
		return check(rb)
	})
	return rb
}

// activeTargets returns name -> replicas of the Scheduled and Bound targets.
func activeTargets(b workv1alpha1.BindingObject) map[string]int32 {
	out := map[string]int32{}
	for _, t := range bindingutil.ActiveTargets(b.GetBindingSpec().Clusters) {
		out[t.Name] = t.Replicas
	}
	return out
}

func sum(m map[string]int32) int32 {
	var s int32
	for _, v := range m {
		s += v
	}
	return s
}

// works returns the binding's Works by cluster.
func works(ref names.BindingRef) (map[string]*workv1alpha1.Work, error) {
	list := &workv1alpha1.WorkList{}
	if err := cli.List(context.Background(), list, client.MatchingLabels(names.BindingLabels(ref))); err != nil {
		return nil, err
	}
	out := map[string]*workv1alpha1.Work{}
	for i := range list.Items {
		out[list.Items[i].Labels[workv1alpha1.LabelCluster]] = &list.Items[i]
	}
	return out, nil
}

// manifestOf decodes a Work's single manifest.
func manifestOf(w *workv1alpha1.Work) (*unstructured.Unstructured, error) {
	if len(w.Spec.Workload.Manifests) != 1 {
		return nil, fmt.Errorf("work %s has %d manifests", w.Name, len(w.Spec.Workload.Manifests))
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw)
}

// waitWorks waits until the binding's Works are exactly on the clusters
// of want, each holding a manifest that check accepts.
func waitWorks(t *testing.T, ref names.BindingRef, want []string, check func(cluster string, m *unstructured.Unstructured) error) map[string]*workv1alpha1.Work {
	t.Helper()
	var ws map[string]*workv1alpha1.Work
	eventually(t, fmt.Sprintf("works of %s on %v", ref, want), func() error {
		var err error
		if ws, err = works(ref); err != nil {
			return err
		}
		var got []string
		for c := range ws {
			got = append(got, c)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("works on %v", got)
		}
		for c, w := range ws {
			m, err := manifestOf(w)
			if err != nil {
				return err
			}
			if err := check(c, m); err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
		}
		return nil
	})
	return ws
}

// markApplied plays the execution controller: the Work's manifests were
// applied to its member.
func markApplied(t *testing.T, w *workv1alpha1.Work) {
	t.Helper()
	eventually(t, "marking "+w.Name+" applied", func() error {
		cur := &workv1alpha1.Work{}
		if err := cli.Get(context.Background(), client.ObjectKeyFromObject(w), cur); err != nil {
			return err
		}
		meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{
			Type: workv1alpha1.WorkConditionApplied, Status: metav1.ConditionTrue,
			Reason: "Applied", Message: "applied by the test", ObservedGeneration: cur.Generation,
		})
		return cli.Status().Update(context.Background(), cur)
	})
}

// waitGone waits until obj no longer exists.
func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s gone", obj, obj.GetName()), func() error {
		err := cli.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there (finalizers %v)", obj.GetFinalizers())
	})
}

// eventFor returns an event with reason about the named object.
func eventFor(ns, name, reason string) (*eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	if err := cli.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		e := &list.Items[i]
		if e.Regarding.Name == name && e.Reason == reason {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no %s event about %s/%s among %d events", reason, ns, name, len(list.Items))
}

// replicasOf reads spec.replicas of a manifest.
func replicasOf(m *unstructured.Unstructured) int64 {
	n, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas")
	return n
}

// deploymentYAML is the Deployment "web" of ns.
func deploymentYAML(ns string, replicas int, image string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s, labels: {app: web}}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: %s
        resources: {requests: {cpu: 100m, memory: 64Mi}}
`, ns, replicas, image)
}

// dividedPolicyYAML divides "web" over the clusters, equally weighted.
func dividedPolicyYAML(ns string, clusters ...string) string {
	return fmt.Sprintf(`
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [%s]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
`, ns, strings.Join(clusters, ", "))
}

// rbRef names a ResourceBinding.
func rbRef(ns, name string) names.BindingRef {
	return names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: ns, Name: name}
}
