package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// Tenant boundaries: a namespace's Pod Security labels on the hub say what
// pods its templates may run. Shepherd carries them to the member so that a
// template cannot run there what its hub namespace forbids.

// PodSecurityLabelPrefix is the prefix of the labels copied from a hub
// namespace to the member namespace Shepherd creates for it (enforce,
// audit and warn, with their versions).
const PodSecurityLabelPrefix = workv1alpha1.PodSecurityLabelPrefix

const podSecurityEnforce = PodSecurityLabelPrefix + "enforce"

// ReasonNamespacePolicy is the Applied condition's reason when the member
// namespace allows more than the template's hub namespace.
const ReasonNamespacePolicy = "NamespacePolicy"

// levels ranks Pod Security levels; a namespace without an enforce label
// enforces nothing, as privileged does.
var levels = map[string]int{"": 0, "privileged": 0, "baseline": 1, "restricted": 2}

// NamespacePolicyError says that the member namespace enforces a weaker Pod
// Security level than the template's hub namespace and is not Shepherd's
// to change.
type NamespacePolicyError struct {
	Cluster, Namespace string
	Hub, Member        string
}

func (e *NamespacePolicyError) Error() string {
	member := e.Member
	if member == "" {
		member = "none"
	}
	return fmt.Sprintf("namespace %s in cluster %s enforces Pod Security level %q, weaker than %q on the hub; it was not created by Shepherd, so Shepherd does not relabel it and "+
		"propagates nothing into it. Label it %s=%s in the member (or remove it, and Shepherd creates it with the hub's labels)",
		e.Namespace, e.Cluster, member, e.Hub, podSecurityEnforce, e.Hub)
}

func isNamespacePolicy(err error) bool {
	var e *NamespacePolicyError
	return errors.As(err, &e)
}

// podSecurityLabels are the Pod Security labels of a namespace.
func podSecurityLabels(ns *corev1.Namespace) map[string]string {
	return workv1alpha1.PodSecurityLabels(ns.Labels)
}

// hubPodSecurity is what the hub namespace ns of work's objects asks of
// pods: the labels the binding controller put on the Work
// (AnnotationPodSecurity), or, for a Work written before Works carried
// them, the hub namespace's own, read on the hub (a Pull cluster's agent
// may not: its Work is rewritten with them).
func (r *Reconciler) hubPodSecurity(ctx context.Context, work *workv1alpha1.Work, ns string) (map[string]string, error) {
	if s, ok := work.Annotations[workv1alpha1.AnnotationPodSecurity]; ok {
		return workv1alpha1.ParsePodSecurity(s), nil
	}
	if r.pullCluster != "" {
		_, isBinding := work.Annotations[workv1alpha1.AnnotationBinding]
		if _, rendered := work.Annotations[workv1alpha1.AnnotationRenderKey]; isBinding && !rendered {
			return nil, fmt.Errorf("the Work does not carry its namespace's Pod Security labels yet (written by an older hub); it is applied once the hub rewrites it")
		}
		return nil, nil // the namespace has none (or an administrator's Work)
	}
	hubNS := &corev1.Namespace{}
	if err := r.hubNamespaces.Get(ctx, client.ObjectKey{Name: ns}, hubNS); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return podSecurityLabels(hubNS), nil
}

// guardNamespace makes the member namespace ns hold at least the Pod
// Security its hub namespace enforces, before a Work writes into it:
//   - missing: it is created with the hub namespace's Pod Security labels;
//   - created by Shepherd: its Pod Security labels are set to the hub's;
//   - anyone else's: it is left alone, and the write refused if it enforces
//     a weaker level than the hub namespace.
//
// A hub namespace without Pod Security labels asks for nothing, and costs
// no member request.
func (r *Reconciler) guardNamespace(ctx context.Context, c *clusterclient.Clients, work *workv1alpha1.Work, ns string) error {
	want, err := r.hubPodSecurity(ctx, work, ns)
	if err != nil {
		return err
	}
	if len(want) == 0 {
		return nil
	}
	member, err := c.Kubernetes.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return createNamespace(ctx, c, ns, want)
	case err != nil:
		return err
	case member.Labels[workv1alpha1.LabelManagedBy] == workv1alpha1.ManagedByShepherd:
		have := podSecurityLabels(member)
		if maps.Equal(have, want) {
			return nil
		}
		labels := map[string]any{}
		for k := range have {
			labels[k] = nil // dropped on the hub
		}
		for k, v := range want {
			labels[k] = v
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
		if err != nil {
			return err
		}
		_, err = c.Kubernetes.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: workv1alpha1.FieldManager})
		return err
	}
	if levels[member.Labels[podSecurityEnforce]] < levels[want[podSecurityEnforce]] {
		return &NamespacePolicyError{Cluster: c.Cluster, Namespace: ns, Hub: want[podSecurityEnforce], Member: member.Labels[podSecurityEnforce]}
	}
	return nil
}
