package binding

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/overrides"
)

// revision is what a binding's Works are rendered from: the template as
// sent to members (before replicas are divided) and the override policies
// that select it. Kept in a ControllerRevision owned by the binding, it
// renders each cluster's manifest again exactly as it was, overrides
// included, for a rollback or a cluster joining mid-rollout; replicas come
// from the current placement, which is the scheduler's and not a revision's.
type revision struct {
	Template                map[string]any                         `json:"template"`
	TemplateGeneration      int64                                  `json:"templateGeneration,omitempty"`
	ClusterOverridePolicies []policyv1alpha1.ClusterOverridePolicy `json:"clusterOverridePolicies,omitempty"`
	OverridePolicies        []policyv1alpha1.OverridePolicy        `json:"overridePolicies,omitempty"`
}

// newRevision is the revision of tmpl under the override policies ps.
func newRevision(in interpreter.Interpreter, tmpl *unstructured.Unstructured, ps *overridePolicies) *revision {
	base := memberManifest(in, tmpl)
	cps, ops := overrides.Selecting(base, ps.cluster, ps.namespaced)
	rev := &revision{Template: base.Object, TemplateGeneration: tmpl.GetGeneration()}
	// Only what rendering reads: names and specs.
	for _, p := range cps {
		rev.ClusterOverridePolicies = append(rev.ClusterOverridePolicies, policyv1alpha1.ClusterOverridePolicy{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Spec: p.Spec})
	}
	for _, p := range ops {
		rev.OverridePolicies = append(rev.OverridePolicies, policyv1alpha1.OverridePolicy{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}, Spec: p.Spec})
	}
	return rev
}

// hash names the revision: the first 16 hex digits of the SHA-256 of its
// content without the template generation (an edit undone is the same
// revision again). encoding/json sorts map keys, so it is stable.
func (v *revision) hash() (string, error) {
	data, err := json.Marshal(revision{Template: v.Template, ClusterOverridePolicies: v.ClusterOverridePolicies, OverridePolicies: v.OverridePolicies})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]), nil
}

func (v *revision) manifest() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: v.Template}
}

func (v *revision) policies() *overridePolicies {
	return &overridePolicies{cluster: v.ClusterOverridePolicies, namespaced: v.OverridePolicies}
}

// revisionCache keeps revisions read from the API by ControllerRevision
// key: they never change under one name, so a read is needed once.
type revisionCache struct {
	mu sync.Mutex
	m  map[string]*revision
}

// maxCachedRevisions bounds the cache; past it, it starts over.
const maxCachedRevisions = 4096

func (c *revisionCache) get(key string) *revision {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

func (c *revisionCache) put(key string, v *revision) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedRevisions {
		c.m = map[string]*revision{}
	}
	c.m[key] = v
}

// storeRevision keeps v as revision hash of the binding, unless history
// already lists it, and returns the history with it.
func (r *Reconciler[T]) storeRevision(ctx context.Context, b T, ref names.BindingRef, hash string, v *revision, history []workv1alpha1.RevisionRecord) ([]workv1alpha1.RevisionRecord, error) {
	ns, name := names.RevisionNamespace(ref), names.RevisionName(ref, hash)
	r.revisions.put(ns+"/"+name, v)
	if slices.ContainsFunc(history, func(h workv1alpha1.RevisionRecord) bool { return h.Revision == hash }) {
		return history, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return history, err
	}
	gvk, err := r.client.GroupVersionKindFor(b)
	if err != nil {
		return history, err
	}
	next := int64(1)
	if n := len(history); n > 0 {
		next = int64(n) + 1
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: names.BindingLabels(ref),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: b.GetName(), UID: b.GetUID(), Controller: ptr.To(true),
			}},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: next,
	}
	if ref.Namespace == "" {
		if err := r.ensureRevisionNamespace(ctx, ns); err != nil {
			return history, err
		}
	}
	if err := r.client.Create(ctx, cr, client.FieldOwner(workv1alpha1.FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
		return history, fmt.Errorf("keeping revision %s: %w", hash, err)
	}
	return append(slices.Clone(history), workv1alpha1.RevisionRecord{Revision: hash, Name: name, CreatedAt: &metav1.Time{Time: r.now()}}), nil
}

func (r *Reconciler[T]) ensureRevisionNamespace(ctx context.Context, ns string) error {
	if err := r.client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		return err
	}
	err := r.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.FieldOwner(workv1alpha1.FieldManager))
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// loadRevision returns the binding's revision hash, from the cache or the
// API (uncached: only rollbacks and clusters behind the rollout read it).
// nil when it is not kept.
func (r *Reconciler[T]) loadRevision(ctx context.Context, ref names.BindingRef, hash string) (*revision, error) {
	ns, name := names.RevisionNamespace(ref), names.RevisionName(ref, hash)
	if v := r.revisions.get(ns + "/" + name); v != nil {
		return v, nil
	}
	cr := &appsv1.ControllerRevision{}
	if err := r.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cr); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	v := &revision{}
	if err := json.Unmarshal(cr.Data.Raw, v); err != nil {
		return nil, fmt.Errorf("reading revision %s: %w", name, err)
	}
	r.revisions.put(ns+"/"+name, v)
	return v, nil
}

// pruneRevisions drops the oldest revisions past limit that nothing uses
// (the target, the last good revision and every cluster's are kept), and
// returns the history left.
func (r *Reconciler[T]) pruneRevisions(ctx context.Context, ref names.BindingRef, history []workv1alpha1.RevisionRecord, limit int, inUse map[string]bool) ([]workv1alpha1.RevisionRecord, error) {
	out := slices.Clone(history)
	for i := 0; len(out) > limit && i < len(out); {
		h := out[i]
		if inUse[h.Revision] {
			i++
			continue
		}
		cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: names.RevisionNamespace(ref), Name: h.Name}}
		if err := r.client.Delete(ctx, cr); client.IgnoreNotFound(err) != nil {
			return out, err
		}
		out = slices.Delete(out, i, i+1)
	}
	return out, nil
}

// deleteRevisions deletes every revision of a binding going away (the
// hub's garbage collector would too, through the owner reference, where
// one runs).
func (r *Reconciler[T]) deleteRevisions(ctx context.Context, ref names.BindingRef, history []workv1alpha1.RevisionRecord) error {
	for _, h := range history {
		cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: names.RevisionNamespace(ref), Name: h.Name}}
		if err := r.client.Delete(ctx, cr); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
