package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/csaupgrade"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
)

// serverFields are metadata fields that belong to the hub's copy of an
// object and must not travel: resourceVersion would make the apply a
// conditional update, and owner references name hub UIDs that the member's
// garbage collector would treat as missing owners.
var serverFields = []string{
	"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink",
	"deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences",
}

// manifest is one decoded manifest of a Work.
type manifest struct {
	id  workv1alpha1.ResourceIdentifier
	obj *unstructured.Unstructured
	err error // decoding failed; id holds the ordinal only
}

// decodeManifests decodes the Work's manifests and fills their identifiers
// (all but the resource, which needs the member's discovery).
func decodeManifests(work *workv1alpha1.Work) []manifest {
	out := make([]manifest, 0, len(work.Spec.Workload.Manifests))
	for i, m := range work.Spec.Workload.Manifests {
		mf := manifest{id: workv1alpha1.ResourceIdentifier{Ordinal: int32(i)}}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(m.Raw); err != nil {
			mf.err = fmt.Errorf("manifest %d cannot be decoded: %w", i, err)
			out = append(out, mf)
			continue
		}
		gvk := obj.GroupVersionKind()
		mf.id.Group, mf.id.Version, mf.id.Kind = gvk.Group, gvk.Version, gvk.Kind
		mf.id.Namespace, mf.id.Name = obj.GetNamespace(), obj.GetName()
		mf.obj = obj
		out = append(out, mf)
	}
	return out
}

// describe names an identifier in messages: "apps/v1 Deployment web/nginx".
func describe(id workv1alpha1.ResourceIdentifier) string {
	gv := schema.GroupVersion{Group: id.Group, Version: id.Version}.String()
	name := id.Name
	if id.Namespace != "" {
		name = id.Namespace + "/" + id.Name
	}
	return fmt.Sprintf("%s %s %s", gv, id.Kind, name)
}

// resourceFor maps an identifier to the member's resource, recording the
// resource name in the identifier and defaulting the namespace of a
// namespaced object without one to "default", as kubectl would.
func resourceFor(c *clusterclient.Clients, id *workv1alpha1.ResourceIdentifier) (dynamic.ResourceInterface, error) {
	gvk := schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind}
	m, err := c.RESTMapping(gvk)
	if err != nil {
		return nil, err
	}
	id.Resource = m.Resource.Resource
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		id.Namespace = ""
		return c.Dynamic.Resource(m.Resource), nil
	}
	if id.Namespace == "" {
		id.Namespace = metav1.NamespaceDefault
	}
	return c.Dynamic.Resource(m.Resource).Namespace(id.Namespace), nil
}

// memberObject is what to write to the member for mf: the manifest without
// the hub's server fields and status, in the identifier's namespace, with
// Shepherd's label and the annotation naming the Work. The annotation is
// written in the same request that creates or adopts the object, so the
// member object itself proves which Work owns it.
func memberObject(workKey string, mf *manifest) *unstructured.Unstructured {
	obj := mf.obj.DeepCopy()
	for _, f := range serverFields {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	obj.SetNamespace(mf.id.Namespace)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[workv1alpha1.LabelManagedBy] = workv1alpha1.ManagedByShepherd
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[workv1alpha1.AnnotationWork] = workKey
	obj.SetAnnotations(annotations)
	return obj
}

// ownerOf is the Work that created or adopted a member object, "" for an
// object Shepherd never wrote.
func ownerOf(obj *unstructured.Unstructured) string {
	return obj.GetAnnotations()[workv1alpha1.AnnotationWork]
}

// maxApplyAttempts bounds the read-decide-write rounds of one manifest
// when the member object changes under it (created, deleted or replaced
// by someone else between the read and the write).
const maxApplyAttempts = 3

// manifestResult is what happened to one manifest's member object.
type manifestResult struct {
	// obj is the member object as written or read; nil when missing.
	obj *unstructured.Unstructured
	// hash and generation record an apply (hash empty: nothing applied).
	hash       string
	generation int64
	// drift is the object's drift or difference now (nil: none).
	drift *workv1alpha1.ManifestDrift
	// verdict is what was decided (see decideApply).
	verdict verdict
	// overwritten is the drift an apply just put back.
	overwritten *workv1alpha1.ManifestDrift
}

// applyManifest decides about one manifest (decideApply) and writes it to
// the member. It never modifies an object that the Work does not own,
// unless the Work takes it over (conflictResolution: Overwrite, or
// whenToTakeOver: IfNoDiff and it already matches):
//   - a missing object is created with a plain create, which fails rather
//     than merge into an object someone else created in the meantime;
//   - an existing object is server-side applied with force (Shepherd's
//     intent wins over edits made in the member, unless whenToApply is
//     IfNotDrifted) only once its annotation names this Work, and with its
//     UID as a precondition, so the write fails rather than reach an
//     object that replaced it since the read; the fields a member
//     controller owns keep the member's values (interpreter.Retain: e.g.
//     replicas a member's HPA scales).
//
// Before writing, the member object is compared with what Shepherd last
// applied (prev.AppliedHash) to find drift (judgeDrift). full says whether
// this pass applies or only looks for drift.
//
// A conflict under Abort returns a *ConflictError. A missing namespace is
// created and the write retried.
func (r *Reconciler) applyManifest(ctx context.Context, c *clusterclient.Clients, work *workv1alpha1.Work, mf *manifest, prev *workv1alpha1.ManifestStatus, full bool) (manifestResult, error) {
	ri, err := resourceFor(c, &mf.id)
	if err != nil {
		return manifestResult{}, err
	}
	if err := r.checkFence(); err != nil {
		return manifestResult{}, err
	}
	key := workKey(work)
	obj := memberObject(key, mf)
	hash := appliedHash(obj.Object)
	var prevDrift *workv1alpha1.ManifestDrift
	prevHash := ""
	if prev != nil {
		prevDrift, prevHash = prev.Drift, prev.AppliedHash
	}
	now := metav1.NewTime(r.clock.Now())
	facts := applyFacts{strategy: work.Spec.ApplyStrategy, conflict: work.Spec.ConflictResolution, full: full, unchanged: prevHash == hash}
	s, err := scopeOf(work)
	if err != nil {
		return manifestResult{}, err
	}
	scopeErr := s.permits(mf.id)
	facts.outOfScope = scopeErr != nil
	if decideApply(facts) == verdictOutOfScope {
		return manifestResult{}, scopeErr
	}
	var lastErr error
	for range maxApplyAttempts {
		live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			facts.exists = false
			res, err := r.createMissing(ctx, c, ri, work, mf, obj, decideApply(facts), prevDrift, now)
			if apierrors.IsAlreadyExists(err) {
				lastErr = err
				continue // someone else created it just now: decide again
			}
			if err == nil && res.verdict == verdictCreate {
				res.hash = hash
			}
			return res, err
		case err != nil:
			return manifestResult{}, err
		}
		owner := ownerOf(live)
		desired := obj.DeepCopy()
		if err := r.interpreter.Retain(desired, live); err != nil {
			return manifestResult{}, err
		}
		facts.exists, facts.owned, facts.owner = true, owner == key, owner
		facts.fromKarmada = writtenByKarmada(live)
		drift := r.judge(&facts, desired, live, prevDrift, now)
		res := manifestResult{obj: live, drift: drift, verdict: decideApply(facts)}
		if res.verdict == verdictInSync {
			// Compared at this generation (resourceVersion for kinds
			// without one) and found as applied: recorded as if applied
			// now, so a later change by someone else still shows.
			res.hash, res.generation = hash, live.GetGeneration()
			return res, nil
		}
		if done, err := r.admit(ctx, work, mf, facts, &res, prevDrift); done || err != nil {
			return res, err
		}
		if mf.id.Namespace != "" {
			if err := r.guardNamespace(ctx, c, work, mf.id.Namespace); err != nil {
				return manifestResult{}, err
			}
		}
		if err := r.checkFence(); err != nil {
			return manifestResult{}, err
		}
		if _, err := handOver(ctx, ri, live); apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			lastErr = err
			continue // changed or gone meanwhile: read and decide again
		} else if err != nil {
			return manifestResult{}, fmt.Errorf("handing the fields Shepherd created to server-side apply: %w", err)
		}
		applied, err := applyObject(ctx, ri, desired, live.GetUID())
		if objectReplaced(err) {
			lastErr = err
			continue
		}
		if err != nil {
			return manifestResult{}, err
		}
		res.obj, res.hash, res.generation, res.drift = applied, hash, applied.GetGeneration(), nil
		if facts.owned && drift != nil {
			res.overwritten = drift
		}
		return res, nil
	}
	return manifestResult{}, fmt.Errorf("the member object kept changing while being written: %w", lastErr)
}

// createMissing acts on the verdict about a manifest whose member object
// is missing: ReportDiff reports it missing; otherwise it is created
// (its namespace guarded first). An AlreadyExists error means someone
// else created it since the read.
func (r *Reconciler) createMissing(ctx context.Context, c *clusterclient.Clients, ri dynamic.ResourceInterface, work *workv1alpha1.Work, mf *manifest, obj *unstructured.Unstructured, v verdict, prevDrift *workv1alpha1.ManifestDrift, now metav1.Time) (manifestResult, error) {
	if v == verdictReport {
		return manifestResult{verdict: v, drift: &workv1alpha1.ManifestDrift{Type: workv1alpha1.DriftDiff, Missing: true, FirstSeenTime: firstSeen(prevDrift, workv1alpha1.DriftDiff, now)}}, nil
	}
	if mf.id.Namespace != "" {
		if err := r.guardNamespace(ctx, c, work, mf.id.Namespace); err != nil {
			return manifestResult{}, err
		}
	}
	if r.beforeCreate != nil {
		r.beforeCreate(obj.GetName())
	}
	if err := r.checkFence(); err != nil {
		return manifestResult{}, err
	}
	created, err := r.createObject(ctx, c, ri, obj, mf.id.Namespace)
	if err != nil {
		return manifestResult{}, err
	}
	return manifestResult{obj: created, generation: created.GetGeneration(), verdict: verdictCreate}, nil
}

// judge fills the facts that compare the member object with what would
// be sent, and returns its drift (an owned object's, see judgeDrift) or
// its difference (any other's; nil: none).
func (r *Reconciler) judge(facts *applyFacts, desired, live *unstructured.Unstructured, prevDrift *workv1alpha1.ManifestDrift, now metav1.Time) *workv1alpha1.ManifestDrift {
	text := textFor(r.interpreter, live.GroupVersionKind().GroupKind(), string(live.GetUID()))
	if facts.owned && !facts.strategy.ReportsDiff() {
		drift := judgeDrift(driftInput{hub: desired.Object, member: live.Object, unchanged: facts.unchanged, prev: prevDrift, generation: live.GetGeneration(), text: text}, now)
		facts.drifted, facts.judged = drift != nil, true
		return drift
	}
	diff := diffFields(withoutMarks(desired).Object, live.Object, text)
	if !facts.owned && facts.owner == "" {
		// A takeover compares the whole content, not only what would be
		// sent (see memberOnlyFields).
		diff = append(diff, memberOnlyFields(withoutMarks(desired).Object, live.Object, text)...)
	}
	facts.differs = len(diff) > 0
	if !facts.differs {
		return nil
	}
	return newDrift(workv1alpha1.DriftDiff, diff, live.GetGeneration(), prevDrift, now)
}

// admit acts on a verdict that writes nothing (done) and checks an
// adoption against the owning Work (mayAdopt, which reads the hub);
// neither done nor an error: write the object.
func (r *Reconciler) admit(ctx context.Context, work *workv1alpha1.Work, mf *manifest, facts applyFacts, res *manifestResult, prevDrift *workv1alpha1.ManifestDrift) (bool, error) {
	switch res.verdict {
	case verdictReport, verdictHold:
		return true, nil
	case verdictWait:
		if !facts.owned {
			res.drift = prevDrift // decided by the last full pass
		}
		return true, nil
	case verdictConflict:
		if err := r.mayAdopt(ctx, work, mf.id, facts.owner); err != nil {
			var ce *ConflictError
			if errors.As(err, &ce) && facts.declinedTakeover() {
				ce.Diff = describeDrift(res.drift)
			} else {
				if errors.As(err, &ce) && facts.notFromSource() {
					ce.NotFrom = string(facts.strategy.TakesOverOnlyFrom())
				}
				res.drift = nil // a plain conflict: how it differs is not asked for
			}
			res.obj = nil
			return true, err
		}
		// mayAdopt let it through: not a conflict after all.
	case verdictAdopt:
		// mayAdopt judges conflictResolution: Overwrite; a matching
		// object taken over by IfNoDiff needs no Overwrite.
		if facts.takesOverMatching() {
			break
		}
		if err := r.mayAdopt(ctx, work, mf.id, facts.owner); err != nil {
			res.obj, res.drift = nil, nil
			return true, err
		}
	}
	return false, nil
}

// pass is what applying a Work's manifests found, for its status.
type pass struct {
	// ids are the manifests' identifiers, in order; observed and results
	// what the member answered for each (by index).
	ids      []workv1alpha1.ResourceIdentifier
	observed map[int]interpreter.Observation
	results  map[int]manifestResult
	failures []string
	// unreachable: the member did not answer; the manifests after it were
	// not attempted.
	unreachable          error
	retry                bool
	conflicts, refusedNS int
	refusedRBAC          []string
	// terminating counts manifests refused because their namespace is
	// being deleted in the member: retried on a timer, not as an error.
	terminating int
	// unserved counts manifests whose kind the member does not serve:
	// retried, and applied again once the member's APIs change (see
	// kindWaiters); unservedAttempts is how many applies in a row have
	// met one.
	unserved, unservedAttempts int
}

// applyAll applies the manifests in order; once the member does not
// answer, the rest are not attempted.
func (r *Reconciler) applyAll(ctx context.Context, clients *clusterclient.Clients, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster, manifests []manifest, full bool) *pass {
	p := &pass{
		ids:      make([]workv1alpha1.ResourceIdentifier, 0, len(manifests)),
		observed: make(map[int]interpreter.Observation, len(manifests)),
		results:  make(map[int]manifestResult, len(manifests)),
	}
	for i := range manifests {
		mf := &manifests[i]
		err := mf.err
		switch {
		case err != nil:
		case p.unreachable != nil:
			err = errors.New("not attempted: the member did not answer")
		default:
			err = r.applyOne(ctx, clients, work, cluster.Name, i, mf, full, p)
		}
		p.record(mf.id, err)
		p.ids = append(p.ids, mf.id)
	}
	if p.unreachable == nil {
		r.breaker.reset(cluster.Name)
	}
	return p
}

// applyOne applies the i-th manifest and records what the member
// answered.
func (r *Reconciler) applyOne(ctx context.Context, clients *clusterclient.Clients, work *workv1alpha1.Work, cluster string, i int, mf *manifest, full bool, p *pass) error {
	res, err := r.applyManifest(ctx, clients, work, mf, previous(work.Status.ManifestStatuses, mf.id), full)
	p.results[i] = res
	if err == nil && res.obj != nil {
		// The member's answer is the object's current state: its status
		// goes into the Work with the Applied condition, in one write,
		// rather than in a second one by the work status controller
		// moments later.
		if o, oerr := interpreter.Observe(r.interpreter, res.obj); oerr == nil {
			p.observed[i] = o
		}
	}
	if clusterclient.IsUnreachable(err) {
		r.breaker.trip(cluster, err)
		p.unreachable = err
	}
	// A namespace being deleted in the member (by its team, or by
	// Kubernetes' namespace controller) refuses new objects until it is
	// gone; the apply then recreates it. That is a wait, not a failure.
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		p.terminating++
		return err
	}
	if kindUnserved(err) {
		p.unserved++
	}
	// Retrying helps neither a refusal by the API (permanent) nor
	// Shepherd's own refusals, which last until something changes.
	p.retry = p.retry || (err != nil && !permanent(err) && !isConflict(err) && !isNamespacePolicy(err) && !isRBACEscalation(mf.id, err))
	return err
}

// record sorts a manifest's failure by kind, for the condition's reason.
func (p *pass) record(id workv1alpha1.ResourceIdentifier, err error) {
	switch {
	case isRBACEscalation(id, err):
		p.refusedRBAC = append(p.refusedRBAC, kindAndName(id))
		p.failures = append(p.failures, fmt.Sprintf("%s: %v", describe(id), err))
	case isConflict(err):
		p.conflicts++
		p.failures = append(p.failures, err.Error())
	case isNamespacePolicy(err):
		p.refusedNS++
		p.failures = append(p.failures, fmt.Sprintf("%s: %v", describe(id), err))
	case err != nil:
		p.failures = append(p.failures, fmt.Sprintf("%s: %v", describe(id), err))
	}
}

// firstSeen keeps prev's first-seen time when prev is of type typ.
func firstSeen(prev *workv1alpha1.ManifestDrift, typ workv1alpha1.DriftType, now metav1.Time) metav1.Time {
	if prev != nil && prev.Type == typ {
		return prev.FirstSeenTime
	}
	return now
}

// withoutMarks is obj without Shepherd's label and annotation: what an
// object Shepherd did not write is compared with.
func withoutMarks(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	unstructured.RemoveNestedField(out.Object, "metadata", "labels", workv1alpha1.LabelManagedBy)
	unstructured.RemoveNestedField(out.Object, "metadata", "annotations", workv1alpha1.AnnotationWork)
	return out
}

// createObject creates obj, creating its namespace first when the member
// lacks it. Create, unlike an apply, fails when the object exists, so a
// member object is never taken over by accident. The fields it sets belong
// to Shepherd's manager as an update; the first apply that changes the
// object hands them to server-side apply first (handOver). Doing that at
// create would be a second write to every object created, racing the
// member's controllers (a Deployment's status writer then conflicts).
func (r *Reconciler) createObject(ctx context.Context, c *clusterclient.Clients, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, ns string) (*unstructured.Unstructured, error) {
	opts := metav1.CreateOptions{FieldManager: workv1alpha1.FieldManager}
	created, err := ri.Create(ctx, obj, opts)
	if isMissingNamespace(err, ns) {
		if err := createNamespace(ctx, c, ns, nil); err != nil {
			return nil, err
		}
		created, err = ri.Create(ctx, obj, opts)
	}
	if err != nil {
		return nil, err
	}
	return created, nil
}

// handOverAttempts bounds the rounds of handOver: an object that other
// writers keep changing (a CRD's status as it becomes Established) is
// read again and the hand-over recomputed.
const handOverAttempts = 3

// handOver moves the fields Shepherd set by create to its server-side
// apply manager, so that an apply that leaves one of them out removes it
// (fields a manager set by update are not removed by its applies). It
// writes nothing when there is nothing to move. The patch tests the
// object's resourceVersion, so a write by anyone in between is a
// conflict: read the object again and retry; the last error is returned
// (a conflict still, after handOverAttempts).
func handOver(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for attempt := range handOverAttempts {
		if attempt > 0 {
			latest, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil {
				return obj, err
			}
			obj = latest
		}
		patch, err := csaupgrade.UpgradeManagedFieldsPatch(obj, sets.New(workv1alpha1.FieldManager), workv1alpha1.FieldManager)
		if err != nil || patch == nil {
			return obj, err
		}
		upgraded, err := ri.Patch(ctx, obj.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		if err == nil {
			return upgraded, nil
		}
		if !apierrors.IsConflict(err) || attempt == handOverAttempts-1 {
			return obj, err
		}
	}
	return obj, nil
}

// applyObject server-side applies obj with force, on the condition that the
// member object is still the one with uid.
func applyObject(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, uid types.UID) (*unstructured.Unstructured, error) {
	obj = obj.DeepCopy()
	obj.SetUID(uid)
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	force := true
	return ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: workv1alpha1.FieldManager, Force: &force})
}

// objectReplaced recognizes the API server's answers to an apply whose UID
// precondition failed: the object is gone (409) or is another object (422
// on metadata.uid).
func objectReplaced(err error) bool {
	if apierrors.IsConflict(err) {
		return true
	}
	if !apierrors.IsInvalid(err) {
		return false
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// isMissingNamespace recognizes the NamespaceLifecycle admission refusal.
func isMissingNamespace(err error, ns string) bool {
	if ns == "" || !apierrors.IsNotFound(err) {
		return false
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		return false
	}
	d := status.Status().Details
	return d.Kind == "namespaces" && d.Name == ns
}

// createNamespace creates a namespace the Work's objects need, with the
// given extra labels (the hub namespace's Pod Security labels). It is
// labelled as Shepherd's but never deleted by it: other Works or the user
// may have put things there.
func createNamespace(ctx context.Context, c *clusterclient.Clients, ns string, extra map[string]string) error {
	labels := map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}
	maps.Copy(labels, extra)
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}
	_, err := c.Kubernetes.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{FieldManager: workv1alpha1.FieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}

// removeObject deletes the member object of id, or with preserve releases
// it, if the Work owns it (its annotation names workKey). Gone, or owned
// by someone else, is fine.
func removeObject(ctx context.Context, c *clusterclient.Clients, workKey string, id workv1alpha1.ResourceIdentifier, preserve bool) error {
	ri, err := resourceFor(c, &id)
	if meta.IsNoMatchError(err) {
		return nil // the kind is no longer served, so neither is the object
	}
	if err != nil {
		return err
	}
	obj, err := ri.Get(ctx, id.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ownerOf(obj) != workKey || obj.GetDeletionTimestamp() != nil {
		return nil
	}
	if preserve {
		return releaseObject(ctx, ri, obj, workKey)
	}
	background := metav1.DeletePropagationBackground
	uid := obj.GetUID()
	err = ri.Delete(ctx, id.Name, metav1.DeleteOptions{PropagationPolicy: &background, Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or replaced by a new object since the Get
	}
	return err
}

// releaseObject leaves a member object in place but plainly unmanaged: it
// removes the annotation naming the Work and Shepherd's managed-by label.
// The JSON patch tests the UID and the annotation first, so it changes
// nothing if the object was replaced or taken over since it was read.
func releaseObject(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, workKey string) error {
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": string(obj.GetUID())},
		{"op": "test", "path": "/metadata/annotations/" + jsonpointer.Escape(workv1alpha1.AnnotationWork), "value": workKey},
		{"op": "remove", "path": "/metadata/annotations/" + jsonpointer.Escape(workv1alpha1.AnnotationWork)},
	}
	if obj.GetLabels()[workv1alpha1.LabelManagedBy] == workv1alpha1.ManagedByShepherd {
		path := "/metadata/labels/" + jsonpointer.Escape(workv1alpha1.LabelManagedBy)
		ops = append(ops,
			map[string]any{"op": "test", "path": path, "value": workv1alpha1.ManagedByShepherd},
			map[string]any{"op": "remove", "path": path})
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, obj.GetName(), types.JSONPatchType, data, metav1.PatchOptions{FieldManager: workv1alpha1.FieldManager})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil // gone, or no longer the Work's (a failed test)
	}
	return err
}

// sameObject compares identifiers by what names the member object; the
// ordinal and version may change without the object changing.
func sameObject(a, b workv1alpha1.ResourceIdentifier) bool {
	return a.Group == b.Group && a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}

// checkFence asks the fence (a leader that may have lost its lease writes
// nothing) right before each member write, not only when a manifest's
// turn comes: reading the member and deciding take a request's time, and a
// leader frozen in between (a SIGSTOP, a long pause) would otherwise write
// after another replica has taken over and cleaned up, leaving an object
// no Work claims.
func (r *Reconciler) checkFence() error {
	if r.fence == nil {
		return nil
	}
	return r.fence()
}
