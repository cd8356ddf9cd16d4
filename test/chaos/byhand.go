package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// deleted is an object a fault deleted by hand: where, what and which
// incarnation.
type deleted struct {
	cluster string // "" for the hub
	gvk     schema.GroupVersionKind
	key     client.ObjectKey
	uid     string
}

func (d deleted) String() string {
	where := "the hub"
	if d.cluster != "" {
		where = d.cluster
	}
	return fmt.Sprintf("%s %s in %s", d.gvk.Kind, d.key, where)
}

// deleteByHand deletes, as a person would, one object the fault names: a
// Work of its target cluster, a binding, or an object Shepherd applied in
// its target member. Which one is a pure function of the fault (sorted by
// name, indexed by its start), so a seed replays it. The fault is real
// when the object is gone or going: the returned incarnation's UID is what
// a later look must not find.
func (cf *chaosFleet) deleteByHand(ctx context.Context, f fault) (deleted, error) {
	c, cluster := cf.env.Hub, ""
	var gvk schema.GroupVersionKind
	var opts []client.ListOption
	switch f.Kind {
	case deleteWork:
		gvk = workv1alpha1.SchemeGroupVersion.WithKind("Work")
		opts = append(opts, client.InNamespace(names.ExecutionNamespace(f.Target)))
	case deleteBinding:
		gvk = workv1alpha1.SchemeGroupVersion.WithKind("ResourceBinding")
	case deleteMemberObject:
		c, cluster = cf.env.Members[f.Target], f.Target
		gvk = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
		opts = append(opts, client.MatchingLabels{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd})
	case removeCRD:
		c, cluster = cf.env.Members[f.Target], f.Target
		gvk = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
		opts = append(opts, client.MatchingLabels{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd})
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, opts...); err != nil {
		return deleted{}, err
	}
	items := slices.DeleteFunc(list.Items, func(u unstructured.Unstructured) bool {
		return u.GetDeletionTimestamp() != nil || !ofWorkload(gvk, u)
	})
	if len(items) == 0 {
		return deleted{}, errors.New("no object to delete")
	}
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int {
		return strings.Compare(a.GetNamespace()+"/"+a.GetName(), b.GetNamespace()+"/"+b.GetName())
	})
	victim := items[int(f.At.Milliseconds())%len(items)]
	uid := victim.GetUID()
	if err := c.Delete(ctx, &victim, client.Preconditions{UID: &uid}); err != nil {
		return deleted{}, err
	}
	d := deleted{cluster: cluster, gvk: gvk, key: client.ObjectKeyFromObject(&victim), uid: string(uid)}
	// Real: the object is gone, or going (a finalizer holds it).
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(gvk)
	err := c.Get(ctx, d.key, cur)
	if err == nil && string(cur.GetUID()) == d.uid && cur.GetDeletionTimestamp() == nil {
		return d, fmt.Errorf("%s: still there after its deletion", d)
	}
	return d, nil
}

// ofWorkload says whether u belongs to the chaos workload: Works (their
// execution namespaces hold nothing else), the Widget CRD, and bindings or
// member objects in the workload's namespaces.
func ofWorkload(gvk schema.GroupVersionKind, u unstructured.Unstructured) bool {
	if gvk.Kind == "CustomResourceDefinition" {
		return u.GetName() == widgetCRDName
	}
	return gvk.Kind == "Work" || slices.Contains(namespaces, u.GetNamespace())
}

// cameBack says whether the object a fault deleted is there again, as a
// new incarnation (the fleet's invariants check its content at the end).
func (cf *chaosFleet) cameBack(ctx context.Context, f fault, d deleted) string {
	c := cf.env.Hub
	if d.cluster != "" {
		c = cf.env.Members[d.cluster]
	}
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(d.gvk)
	switch err := c.Get(ctx, d.key, cur); {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("%s not back yet after %s", d, f.For)
	case err != nil:
		return fmt.Sprintf("%s: %v", d, err)
	case string(cur.GetUID()) == d.uid:
		return fmt.Sprintf("%s still being deleted after %s", d, f.For)
	}
	return fmt.Sprintf("%s back after at most %s (created %s)", d, f.For, cur.GetCreationTimestamp().Format(metav1.RFC3339Micro))
}

// timeHubWrite times one write to the hub (an Event-free ConfigMap in the
// default namespace, created and deleted), or says why it failed.
func (cf *chaosFleet) timeHubWrite(ctx context.Context) string {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "chaos-probe-"}}
	begin := time.Now()
	if err := cf.env.Hub.Create(ctx, cm); err != nil {
		return fmt.Sprintf("(failed after %s: %v)", time.Since(begin).Round(time.Millisecond), err)
	}
	took := time.Since(begin).Round(time.Millisecond)
	_ = cf.env.Hub.Delete(ctx, cm)
	return took.String()
}

// widgetsIn says how many Widgets a member holds, or why it cannot say
// (no such kind while the CRD is gone).
func (cf *chaosFleet) widgetsIn(ctx context.Context, cluster string) string {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(apiVersions["Widget"])
	l.SetKind("WidgetList")
	if err := cf.env.Members[cluster].List(ctx, l); err != nil {
		return err.Error()
	}
	n := 0
	for _, w := range l.Items {
		if w.GetDeletionTimestamp() == nil {
			n++
		}
	}
	return fmt.Sprintf("%d not being deleted", n)
}
