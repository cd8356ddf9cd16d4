package detector

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// Policy kinds, as written in LabelPolicyKind and spec.policyRef.kind.
const (
	KindPropagationPolicy        = policyv1alpha1.KindPropagationPolicy
	KindClusterPropagationPolicy = policyv1alpha1.KindClusterPropagationPolicy
)

// policyKind returns p's kind name.
func policyKind(p policyv1alpha1.PolicyObject) string {
	if _, ok := p.(*policyv1alpha1.ClusterPropagationPolicy); ok {
		return KindClusterPropagationPolicy
	}
	return KindPropagationPolicy
}

// policyRef names p as spec.policyRef does.
func policyRef(p policyv1alpha1.PolicyObject) *workv1alpha1.PolicyReference {
	return &workv1alpha1.PolicyReference{Kind: policyKind(p), Namespace: p.GetNamespace(), Name: p.GetName()}
}

// desiredBinding is the binding the detector wants for tmpl governed by p,
// holding only the fields the detector owns: the policy labels, the owner
// reference to the template, and spec.resource, policyRef, replicas,
// replicaRequirements, components, placement, failover, propagateDeps, schedulerName,
// applyStrategy, the life-cycle fields (schedulePriority is resolved by the
// reconciler) and workloadAffinityGroups, resolved from the template's labels. spec.clusters, rescheduleTriggeredAt, the eviction fields
// and the status belong to other controllers and are left unset, so
// applying this never touches them.
//
// The binding carries the binding controller's finalizer from its
// creation, which spares a write racing the scheduler's first one (the
// binding controller still adds it to bindings made otherwise).
//
// A namespaced template gets a ResourceBinding in its namespace even when
// a ClusterPropagationPolicy governs it: the binding then lives, is listed
// and is deleted with the template's namespace, like in Karmada.
//
// tied are the policies that match the template as well as p; they are
// listed, with p, in the binding's AnnotationTiedPolicies.
func desiredBinding(in interpreter.Interpreter, tmpl *unstructured.Unstructured, namespaced bool, p policyv1alpha1.PolicyObject, tied []policyv1alpha1.PolicyObject) (workv1alpha1.BindingObject, error) {
	replicas, requirements, err := in.Replicas(tmpl)
	if err != nil {
		return nil, err
	}
	components, err := in.Components(tmpl)
	if err != nil {
		return nil, err
	}
	gvk := tmpl.GroupVersionKind()
	b := bindingutil.NewForTemplate(namespaced)
	b.SetName(names.BindingName(gvk.Kind, tmpl.GetName()))
	b.SetNamespace(tmpl.GetNamespace())
	b.SetLabels(names.PolicyLabels(policyKind(p), p.GetNamespace(), p.GetName()))
	annotations := map[string]string{}
	v := versionOf(tmpl)
	if v.generation != "" {
		// What a Lazy policy compares to know whether the template changed,
		// and, with the metadata's digest, what tells a change to follow
		// from a write of the template's status (see templateVersion).
		annotations[workv1alpha1.AnnotationTemplateGeneration] = v.generation
		annotations[workv1alpha1.AnnotationTemplateMetadata] = v.metadata
	}
	if len(tied) > 0 {
		refs := []string{names.PolicyRef(policyKind(p), p.GetNamespace(), p.GetName())}
		for _, t := range tied {
			refs = append(refs, names.PolicyRef(policyKind(t), t.GetNamespace(), t.GetName()))
		}
		annotations[workv1alpha1.AnnotationTiedPolicies] = strings.Join(refs, ",")
	}
	if len(annotations) > 0 {
		b.SetAnnotations(annotations)
	}
	b.SetFinalizers([]string{workv1alpha1.FinalizerBinding})
	b.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Name:       tmpl.GetName(),
		UID:        tmpl.GetUID(),
		Controller: ptr.To(true),
	}})
	ps := p.GetPropagationSpec()
	spec := b.GetBindingSpec()
	spec.Resource = workv1alpha1.ObjectReference{
		APIVersion:      gvk.GroupVersion().String(),
		Kind:            gvk.Kind,
		Namespace:       tmpl.GetNamespace(),
		Name:            tmpl.GetName(),
		UID:             string(tmpl.GetUID()),
		ResourceVersion: tmpl.GetResourceVersion(),
	}
	spec.PolicyRef = policyRef(p)
	spec.Replicas = replicas
	spec.ReplicaRequirements = requirements
	spec.Components = interpreter.BindingComponents(components)
	spec.Placement = ps.Placement.DeepCopy()
	spec.Failover = ps.Failover.DeepCopy()
	spec.PropagateDeps = ps.PropagateDeps
	spec.SchedulerName = ps.SchedulerName
	spec.ConflictResolution = ps.ConflictResolution
	spec.ApplyStrategy = ps.ApplyStrategy.DeepCopy()
	spec.Suspension = ps.Suspension.DeepCopy()
	spec.PreserveResourcesOnDeletion = ptr.Deref(ps.PreserveResourcesOnDeletion, false)
	spec.Rollout = ps.Rollout.DeepCopy()
	if namespaced {
		// Groups never cross namespaces, so a cluster-scoped template is
		// in none (as in Karmada, whose ClusterResourceBindings carry no
		// groups).
		spec.WorkloadAffinityGroups = placement.WorkloadAffinityGroups(spec.Placement, tmpl.GetLabels())
	}
	return b, nil
}

// lazyDeferred reports whether a Lazy policy's change must wait for the
// template to change: the existing binding follows the same policy and was
// written for the template's current generation (for kinds without one,
// its resourceVersion). Shepherd's own writes to the template's status do
// not count as a change.
func lazyDeferred(existing, desired workv1alpha1.BindingObject, tmpl *unstructured.Unstructured, p policyv1alpha1.PolicyObject) bool {
	if p.GetPropagationSpec().ActivationPreference != policyv1alpha1.LazyActivation {
		return false
	}
	e := existing.GetBindingSpec()
	if !equality.Semantic.DeepEqual(e.PolicyRef, desired.GetBindingSpec().PolicyRef) || e.Resource.UID != string(tmpl.GetUID()) {
		return false
	}
	if tmpl.GetGeneration() == 0 {
		return e.Resource.ResourceVersion == tmpl.GetResourceVersion()
	}
	return existing.GetAnnotations()[workv1alpha1.AnnotationTemplateGeneration] == strconv.FormatInt(tmpl.GetGeneration(), 10)
}

// ownedFieldsEqual reports whether existing already holds every field of
// desired the detector owns, so that nothing needs to be written.
func ownedFieldsEqual(existing, desired workv1alpha1.BindingObject) bool {
	for _, k := range []string{workv1alpha1.LabelPolicyKind, workv1alpha1.LabelPolicyNamespace, workv1alpha1.LabelPolicyName} {
		if existing.GetLabels()[k] != desired.GetLabels()[k] {
			return false
		}
	}
	if !hasOwner(existing.GetOwnerReferences(), desired.GetOwnerReferences()[0]) {
		return false
	}
	if existing.GetAnnotations()[workv1alpha1.AnnotationTiedPolicies] != desired.GetAnnotations()[workv1alpha1.AnnotationTiedPolicies] {
		return false
	}
	if !recordedVersion(existing).same(recordedVersion(desired)) {
		return false
	}
	e, d := existing.GetBindingSpec(), desired.GetBindingSpec()
	er, dr := e.Resource, d.Resource
	er.ResourceVersion, dr.ResourceVersion = "", "" // compared above, by templateVersion's rule
	return er == dr &&
		equality.Semantic.DeepEqual(e.PolicyRef, d.PolicyRef) &&
		e.Replicas == d.Replicas &&
		equality.Semantic.DeepEqual(e.ReplicaRequirements, d.ReplicaRequirements) &&
		equality.Semantic.DeepEqual(e.Components, d.Components) &&
		equality.Semantic.DeepEqual(e.Placement, d.Placement) &&
		equality.Semantic.DeepEqual(e.Failover, d.Failover) &&
		e.PropagateDeps == d.PropagateDeps &&
		e.SchedulerName == d.SchedulerName &&
		e.ConflictResolution == d.ConflictResolution &&
		equality.Semantic.DeepEqual(e.ApplyStrategy, d.ApplyStrategy) &&
		equality.Semantic.DeepEqual(e.Suspension, d.Suspension) &&
		e.PreserveResourcesOnDeletion == d.PreserveResourcesOnDeletion &&
		equality.Semantic.DeepEqual(e.Rollout, d.Rollout) &&
		equality.Semantic.DeepEqual(e.WorkloadAffinityGroups, d.WorkloadAffinityGroups) &&
		equality.Semantic.DeepEqual(e.SchedulePriority, d.SchedulePriority)
}

func hasOwner(refs []metav1.OwnerReference, want metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.UID == want.UID && r.APIVersion == want.APIVersion && r.Kind == want.Kind && r.Name == want.Name &&
			ptr.Deref(r.Controller, false) == ptr.Deref(want.Controller, false) {
			return true
		}
	}
	return false
}

// applyObject turns the desired binding into a server-side apply request
// body: the typed object's fields without the status and the zero
// creationTimestamp, which would otherwise be claimed (or rejected).
func applyObject(b workv1alpha1.BindingObject) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	u.SetGroupVersionKind(workv1alpha1.SchemeGroupVersion.WithKind(bindingutil.KindOf(b)))
	return u, nil
}

// templateVersion is what a binding records of the version of its
// template it follows: the template's resourceVersion (in
// spec.resource), and for a template with a generation, the generation
// and a digest of its labels and annotations (in AnnotationTemplateGeneration
// and AnnotationTemplateMetadata). Both the detector's apply of a claimed
// binding and its follow of an unclaimed one decide by same whether a
// binding needs the template's new version written.
type templateVersion struct {
	resourceVersion, generation, metadata string
}

// versionOf is the version of tmpl a binding that follows it records.
func versionOf(tmpl *unstructured.Unstructured) templateVersion {
	v := templateVersion{resourceVersion: tmpl.GetResourceVersion()}
	if gen := tmpl.GetGeneration(); gen != 0 {
		v.generation = strconv.FormatInt(gen, 10)
		v.metadata = metadataDigest(tmpl)
	}
	return v
}

// recordedVersion is the version of its template b records.
func recordedVersion(b workv1alpha1.BindingObject) templateVersion {
	return templateVersion{
		resourceVersion: b.GetBindingSpec().Resource.ResourceVersion,
		generation:      b.GetAnnotations()[workv1alpha1.AnnotationTemplateGeneration],
		metadata:        b.GetAnnotations()[workv1alpha1.AnnotationTemplateMetadata],
	}
}

// same reports whether v and w are the same version of a template, as far
// as what its Works carry goes. A template with a generation changes what
// its Works carry only with a new generation or new labels or annotations;
// its resourceVersion alone also moves with every write of its status (the
// members' status, aggregated), which the detector is not woken for, so
// that a restart would otherwise rewrite every such binding once. A kind
// without a generation (a ConfigMap) has only its resourceVersion. A
// binding written before the metadata digest existed has none, and is
// written once more.
func (v templateVersion) same(w templateVersion) bool {
	if v.generation != w.generation || v.metadata != w.metadata {
		return false
	}
	return v.metadata != "" || v.resourceVersion == w.resourceVersion
}

// metadataDigest is a digest of a template's labels and annotations, keys
// sorted: equal metadata gives an equal digest whatever the maps' order.
func metadataDigest(tmpl *unstructured.Unstructured) string {
	h := fnv.New64a()
	for _, m := range []map[string]string{tmpl.GetLabels(), tmpl.GetAnnotations()} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			// Lengths first, so that no key or value can pass for another.
			fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(m[k]), m[k])
		}
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}
