package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Unit tests of who may change a member object: pure logic over fake
// clients (the hub's Works in controller-runtime's fake client, the member
// in client-go's fake dynamic client). The integration tests in this
// package run the same rules against real API servers.

// The Works under test are in member m1's execution namespace.
var ownNS = names.ExecutionNamespace("m1")

const ownWork = "app"

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// memberConfigMap is a ConfigMap in the member, annotated as written by
// owner ("" for an object Shepherd never wrote).
func memberConfigMap(name, owner string, data map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "shop", "uid": "uid-" + name},
		"data":     data,
	}}
	if owner != "" {
		obj.SetAnnotations(map[string]string{workv1alpha1.AnnotationWork: owner})
		obj.SetLabels(map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd})
	}
	return obj
}

// fakeMember is a member cluster serving ConfigMaps, holding objs.
func fakeMember(t *testing.T, objs ...runtime.Object) (*clusterclient.Clients, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), objs...)
	dyn.PrependReactor("patch", "*", patchLikeTheAPIServer(dyn.Tracker()))
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "v1",
		APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: metav1.Verbs{"get", "create", "patch", "delete"}},
			{Name: "namespaces", Kind: "Namespace", Verbs: metav1.Verbs{"get", "create"}},
		},
	}}}}
	return &clusterclient.Clients{
		Cluster:    "m1",
		Dynamic:    dyn,
		Kubernetes: kubefake.NewClientset(),
		Mapper:     restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
	}, dyn
}

// patchLikeTheAPIServer answers the two patches the fake tracker does not
// handle as an API server would: a server-side apply (as a JSON merge
// patch, forced, refused with a conflict when its metadata.uid, the
// precondition applyObject sets, is not the stored object's) and a JSON
// patch whose test operation fails (422 Invalid, as the API server answers
// it).
func patchLikeTheAPIServer(tracker clienttesting.ObjectTracker) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		pa := action.(clienttesting.PatchAction)
		if pa.GetPatchType() != types.ApplyPatchType && pa.GetPatchType() != types.JSONPatchType {
			return false, nil, nil
		}
		gvr, ns, name := pa.GetResource(), pa.GetNamespace(), pa.GetName()
		stored, err := tracker.Get(gvr, ns, name)
		if err != nil {
			return true, nil, err
		}
		doc, err := json.Marshal(stored)
		if err != nil {
			return true, nil, err
		}
		if pa.GetPatchType() == types.ApplyPatchType {
			var body struct {
				Metadata struct{ UID types.UID } `json:"metadata"`
			}
			if err := json.Unmarshal(pa.GetPatch(), &body); err != nil {
				return true, nil, err
			}
			if uid := stored.(metav1.Object).GetUID(); body.Metadata.UID != "" && body.Metadata.UID != uid {
				return true, nil, apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", body.Metadata.UID, uid))
			}
			doc, err = jsonpatch.MergePatch(doc, pa.GetPatch())
		} else {
			var patch jsonpatch.Patch
			if patch, err = jsonpatch.DecodePatch(pa.GetPatch()); err == nil {
				doc, err = patch.Apply(doc)
			}
			if errors.Is(err, jsonpatch.ErrTestFailed) {
				return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, name, nil)
			}
		}
		if err != nil {
			return true, nil, err
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(doc); err != nil {
			return true, nil, err
		}
		return true, obj, tracker.Update(gvr, obj, ns)
	}
}

// hubWith is a reconciler whose hub holds works; get, when set, answers
// every Get first (to stand for an API error).
func hubWith(get func(client.ObjectKey) error, works ...client.Object) *Reconciler {
	b := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(works...)
	if get != nil {
		b = b.WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := get(key); err != nil {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		}})
	}
	c := b.Build()
	return &Reconciler{Client: c, hubNamespaces: c, interpreter: interpreter.New(), clock: clock.RealClock{}}
}

func work(name string, resolution policyv1alpha1.ConflictResolution, objs ...*unstructured.Unstructured) *workv1alpha1.Work {
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ownNS, Name: name}}
	w.Spec.ConflictResolution = resolution
	for _, o := range objs {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			panic(err)
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return w
}

func TestMayAdopt(t *testing.T) {
	other := ownNS + "/other"
	forbidden := func(client.ObjectKey) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "work.shepherd.io", Resource: "works"}, "other", errors.New("agent"))
	}
	broken := func(client.ObjectKey) error { return errors.New("connection refused") }
	otherWork := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ownNS, Name: "other"}}
	for _, tc := range []struct {
		name       string
		resolution policyv1alpha1.ConflictResolution
		owner      string // the member object's annotation
		works      []client.Object
		get        func(client.ObjectKey) error
		// want: "" adopt; "conflict" refused as a conflict (ownerExists
		// tells which); anything else, a substring of a plain error.
		want        string
		ownerExists bool
	}{
		{name: "Abort, not Shepherd's", resolution: policyv1alpha1.ConflictAbort, want: "conflict"},
		{name: "default (empty) is Abort", resolution: "", want: "conflict"},
		{name: "Abort, another Work's", resolution: policyv1alpha1.ConflictAbort, owner: other, works: []client.Object{otherWork}, want: "conflict"},
		{name: "Abort, an orphan of a deleted Work", resolution: policyv1alpha1.ConflictAbort, owner: other, want: "conflict"},
		{name: "Overwrite, not Shepherd's", resolution: policyv1alpha1.ConflictOverwrite},
		{name: "Overwrite, orphan of a deleted Work", resolution: policyv1alpha1.ConflictOverwrite, owner: other},
		{name: "Overwrite, an annotation that is no Work key", resolution: policyv1alpha1.ConflictOverwrite, owner: "garbage"},
		{name: "Overwrite never takes from a Work that exists", resolution: policyv1alpha1.ConflictOverwrite, owner: other, works: []client.Object{otherWork}, want: "conflict", ownerExists: true},
		{name: "Overwrite, the owner cannot be read (agent): taken to exist", resolution: policyv1alpha1.ConflictOverwrite, owner: other, get: forbidden, want: "conflict", ownerExists: true},
		{name: "Overwrite, the hub does not answer", resolution: policyv1alpha1.ConflictOverwrite, owner: other, get: broken, want: "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := hubWith(tc.get, tc.works...)
			id := workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings"}
			err := r.mayAdopt(context.Background(), work(ownWork, tc.resolution), id, tc.owner)
			var ce *ConflictError
			switch {
			case tc.want == "":
				if err != nil {
					t.Fatalf("want adoption, got %v", err)
				}
			case tc.want == "conflict":
				if !errors.As(err, &ce) {
					t.Fatalf("want a conflict, got %v", err)
				}
				if ce.OwnerExists != tc.ownerExists || ce.Owner != tc.owner || ce.Cluster != "m1" || ce.Object != "v1 ConfigMap shop/settings" {
					t.Errorf("conflict %+v", ce)
				}
				if !strings.Contains(err.Error(), "untouched") {
					t.Errorf("the message does not say the object is left alone: %v", err)
				}
				if !tc.ownerExists && !strings.Contains(err.Error(), "conflictResolution: Overwrite") {
					t.Errorf("the message does not name the fix: %v", err)
				}
			default:
				if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("want an error with %q (not a conflict), got %v", tc.want, err)
				}
			}
		})
	}
}

// writes are the member actions that change something.
func writes(dyn *dynamicfake.FakeDynamicClient) []string {
	var out []string
	for _, a := range dyn.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		name := ""
		if n, ok := a.(interface{ GetName() string }); ok {
			name = n.GetName()
		}
		if c, ok := a.(clienttesting.CreateAction); ok {
			name = c.GetObject().(*unstructured.Unstructured).GetName()
		}
		out = append(out, a.GetVerb()+" "+name)
	}
	return out
}

func TestApplyManifestOwnership(t *testing.T) {
	ifNoDiff := &policyv1alpha1.ApplyStrategy{WhenToTakeOver: policyv1alpha1.TakeOverIfNoDiff}
	key := ownNS + "/" + ownWork
	other := ownNS + "/other"
	otherWork := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ownNS, Name: "other"}}
	desired := memberConfigMap("settings", "", map[string]any{"mode": "shepherd"})
	for _, tc := range []struct {
		name       string
		resolution policyv1alpha1.ConflictResolution
		strategy   *policyv1alpha1.ApplyStrategy
		live       *unstructured.Unstructured // nil: the member lacks it
		works      []client.Object
		// wantErr: "" applied; otherwise a substring of the error.
		wantErr    string
		wantWrites []string
	}{
		{name: "missing: created", live: nil, wantWrites: []string{"create settings"}},
		{name: "its own: applied", live: memberConfigMap("settings", key, map[string]any{"mode": "edited"}), wantWrites: []string{"patch settings"}},
		{name: "not Shepherd's, Abort: refused", resolution: policyv1alpha1.ConflictAbort, live: memberConfigMap("settings", "", map[string]any{"mode": "theirs"}),
			wantErr: "was not created by Shepherd"},
		{name: "another Work's, Abort: refused", resolution: policyv1alpha1.ConflictAbort, live: memberConfigMap("settings", other, nil), works: []client.Object{otherWork},
			wantErr: "belongs to Work " + other},
		{name: "another live Work's, Overwrite: refused", resolution: policyv1alpha1.ConflictOverwrite, live: memberConfigMap("settings", other, nil), works: []client.Object{otherWork},
			wantErr: "which still exists"},
		{name: "not Shepherd's, Overwrite: adopted", resolution: policyv1alpha1.ConflictOverwrite, live: memberConfigMap("settings", "", map[string]any{"mode": "theirs"}),
			wantWrites: []string{"patch settings"}},
		{name: "orphan of a deleted Work, Overwrite: adopted", resolution: policyv1alpha1.ConflictOverwrite, live: memberConfigMap("settings", other, nil),
			wantWrites: []string{"patch settings"}},
		// whenToTakeOver: IfNoDiff under the default Abort.
		{name: "not Shepherd's but matching, IfNoDiff: taken over", resolution: policyv1alpha1.ConflictAbort, strategy: ifNoDiff,
			live: memberConfigMap("settings", "", map[string]any{"mode": "shepherd"}), wantWrites: []string{"patch settings"}},
		{name: "not Shepherd's and differing, IfNoDiff: refused", resolution: policyv1alpha1.ConflictAbort, strategy: ifNoDiff,
			live: memberConfigMap("settings", "", map[string]any{"mode": "theirs"}), wantErr: "differs from what would be sent"},
		{name: "another Work's and matching, IfNoDiff: refused", resolution: policyv1alpha1.ConflictAbort, strategy: ifNoDiff,
			live: memberConfigMap("settings", other, map[string]any{"mode": "shepherd"}), works: []client.Object{otherWork}, wantErr: "belongs to Work " + other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			var before *unstructured.Unstructured
			if tc.live != nil {
				objs = append(objs, tc.live)
				before = tc.live.DeepCopy()
			}
			c, dyn := fakeMember(t, objs...)
			r := hubWith(nil, tc.works...)
			w := work(ownWork, tc.resolution, desired)
			w.Spec.ApplyStrategy = tc.strategy
			mf := decodeManifests(w)[0]
			got, err := r.applyManifest(context.Background(), c, w, &mf, nil, true)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !isConflict(err) {
					t.Fatalf("want a conflict with %q, got %v", tc.wantErr, err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if w := writes(dyn); fmt.Sprint(w) != fmt.Sprint(tc.wantWrites) {
				t.Errorf("member writes %v, want %v", w, tc.wantWrites)
			}
			stored, err := dyn.Resource(cmGVR).Namespace("shop").Get(context.Background(), "settings", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" {
				if fmt.Sprint(stored.Object) != fmt.Sprint(before.Object) {
					t.Errorf("a refused object changed:\n%v\nwas\n%v", stored.Object, before.Object)
				}
				return
			}
			if ownerOf(stored) != key || stored.GetLabels()[workv1alpha1.LabelManagedBy] != workv1alpha1.ManagedByShepherd {
				t.Errorf("the member object does not name its Work: %v %v", stored.GetAnnotations(), stored.GetLabels())
			}
			if mode, _, _ := unstructured.NestedString(stored.Object, "data", "mode"); mode != "shepherd" || ownerOf(got.obj) != key {
				t.Errorf("data.mode = %q, want the manifest's", mode)
			}
		})
	}
}

// A manifest of a kind the member does not serve is refused before any
// member write.
func TestApplyManifestUnknownKind(t *testing.T) {
	c, dyn := fakeMember(t)
	gadget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g", "namespace": "shop"}}}
	w := work(ownWork, policyv1alpha1.ConflictOverwrite, gadget)
	mf := decodeManifests(w)[0]
	_, err := hubWith(nil).applyManifest(context.Background(), c, w, &mf, nil, true)
	if err == nil || !strings.Contains(err.Error(), "Gadget") {
		t.Fatalf("want a no-match error naming the kind, got %v", err)
	}
	if got := writes(dyn); len(got) != 0 {
		t.Errorf("member writes %v", got)
	}
}

func TestRemoveObjectOnlyTouchesItsOwn(t *testing.T) {
	key := ownNS + "/" + ownWork
	id := workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings"}
	deleting := memberConfigMap("settings", key, nil)
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)
	deleting.SetFinalizers([]string{"example.com/hold"})
	for _, tc := range []struct {
		name     string
		live     *unstructured.Unstructured
		preserve bool
		// want: the member write, and what stays of the object ("" gone).
		wantWrites []string
		wantOwner  string
		gone       bool
	}{
		{name: "its own: deleted", live: memberConfigMap("settings", key, nil), wantWrites: []string{"delete settings"}, gone: true},
		{name: "its own, preserved: released", live: memberConfigMap("settings", key, nil), preserve: true, wantWrites: []string{"patch settings"}},
		{name: "not Shepherd's: untouched", live: memberConfigMap("settings", "", nil), wantOwner: ""},
		{name: "another Work's: untouched", live: memberConfigMap("settings", ownNS+"/other", nil), wantOwner: ownNS + "/other"},
		{name: "another Work's, preserved: untouched", live: memberConfigMap("settings", ownNS+"/other", nil), preserve: true, wantOwner: ownNS + "/other"},
		{name: "already being deleted: untouched", live: deleting, wantOwner: key},
		{name: "gone: nothing to do", gone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.live != nil {
				objs = append(objs, tc.live)
			}
			c, dyn := fakeMember(t, objs...)
			if err := removeObject(context.Background(), c, key, id, tc.preserve); err != nil {
				t.Fatal(err)
			}
			if w := writes(dyn); fmt.Sprint(w) != fmt.Sprint(tc.wantWrites) {
				t.Errorf("member writes %v, want %v", w, tc.wantWrites)
			}
			stored, err := dyn.Resource(cmGVR).Namespace("shop").Get(context.Background(), "settings", metav1.GetOptions{})
			if tc.gone {
				if !apierrors.IsNotFound(err) {
					t.Errorf("want the object gone, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ownerOf(stored) != tc.wantOwner {
				t.Errorf("owner annotation %q, want %q", ownerOf(stored), tc.wantOwner)
			}
			if tc.preserve && tc.wantOwner == "" {
				if _, ok := stored.GetLabels()[workv1alpha1.LabelManagedBy]; ok {
					t.Errorf("a released object keeps the managed-by label: %v", stored.GetLabels())
				}
			}
		})
	}
}

// releaseObject's JSON patch tests the UID and the annotation first: an
// object replaced or taken over since it was read is left alone.
func TestReleaseObjectTestsBeforeRemoving(t *testing.T) {
	key := ownNS + "/" + ownWork
	for _, tc := range []struct {
		name      string
		read      *unstructured.Unstructured // what the caller read
		wantOwner string
	}{
		{name: "unchanged since read: released", read: memberConfigMap("settings", key, nil), wantOwner: ""},
		{name: "replaced since read (another UID): untouched", read: func() *unstructured.Unstructured {
			o := memberConfigMap("settings", key, nil)
			o.SetUID(types.UID("an-older-object"))
			return o
		}(), wantOwner: key},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, dyn := fakeMember(t, memberConfigMap("settings", key, nil))
			ri := c.Dynamic.Resource(cmGVR).Namespace("shop")
			if err := releaseObject(context.Background(), ri, tc.read, key); err != nil {
				t.Fatal(err)
			}
			stored, err := dyn.Resource(cmGVR).Namespace("shop").Get(context.Background(), "settings", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ownerOf(stored) != tc.wantOwner {
				t.Errorf("owner annotation %q, want %q", ownerOf(stored), tc.wantOwner)
			}
		})
	}
}

// The namespace a Work's objects go into: one Shepherd did not create is
// never relabelled, and a write into it is refused when it enforces less
// than the hub namespace.
func TestGuardNamespaceNeverRelabelsOthers(t *testing.T) {
	hubNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{podSecurityEnforce: "restricted"}}}
	for _, tc := range []struct {
		name       string
		member     *corev1.Namespace // nil: missing
		wantErr    string
		wantLabels map[string]string
	}{
		{name: "missing: created with the hub's level", wantLabels: map[string]string{podSecurityEnforce: "restricted", workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}},
		{name: "Shepherd's: relabelled", member: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd, podSecurityEnforce: "baseline"}}},
			wantLabels: map[string]string{podSecurityEnforce: "restricted", workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}},
		{name: "someone else's, weaker: refused, untouched", member: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{podSecurityEnforce: "baseline"}}},
			wantErr: `label it pod-security.kubernetes.io/enforce=restricted`, wantLabels: map[string]string{podSecurityEnforce: "baseline"}},
		{name: "someone else's, no label: refused, untouched", member: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
			wantErr: `level "none"`, wantLabels: nil},
		{name: "someone else's, as strict: used, untouched", member: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{podSecurityEnforce: "restricted", "team": "a"}}},
			wantLabels: map[string]string{podSecurityEnforce: "restricted", "team": "a"}},
	} {
		for _, from := range []string{"the Work's annotation (as an agent reads it)", "the hub namespace (a Work written before Works carried it)"} {
			t.Run(tc.name+", labels from "+from, func(t *testing.T) {
				c, _ := fakeMember(t)
				kube := kubefake.NewClientset()
				if tc.member != nil {
					kube = kubefake.NewClientset(tc.member)
				}
				c.Kubernetes = kube
				r, work := hubWith(nil, hubNS), &workv1alpha1.Work{}
				if strings.HasPrefix(from, "the Work") {
					// No hub namespace to read: an agent may not.
					r = hubWith(nil)
					r.pullCluster = "pull1"
					work.Annotations = map[string]string{workv1alpha1.AnnotationBinding: "ResourceBinding/shop/web-deployment",
						workv1alpha1.AnnotationRenderKey: "k", workv1alpha1.AnnotationPodSecurity: workv1alpha1.FormatPodSecurity(hubNS.Labels)}
				}
				err := r.guardNamespace(context.Background(), c, work, "shop")
				if tc.wantErr == "" && err != nil {
					t.Fatal(err)
				}
				if tc.wantErr != "" && (err == nil || !isNamespacePolicy(err) || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tc.wantErr))) {
					t.Fatalf("want a namespace policy error with %q, got %v", tc.wantErr, err)
				}
				got, err := kube.CoreV1().Namespaces().Get(context.Background(), "shop", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got.Labels) != fmt.Sprint(tc.wantLabels) {
					t.Errorf("member namespace labels %v, want %v", got.Labels, tc.wantLabels)
				}
			})
		}
	}
}

// The member object changes between the read and the write: the write
// fails (a plain create, or an apply conditional on the UID read) and the
// decision is taken again on what is there now, so an object someone else
// put there in the meantime is refused and left as they wrote it.
func TestApplyManifestRaces(t *testing.T) {
	key := ownNS + "/" + ownWork
	intruder := memberConfigMap("settings", "", map[string]any{"mode": "theirs"})
	intruder.SetUID("uid-intruder")
	for _, tc := range []struct {
		name string
		live *unstructured.Unstructured
		// race runs in the window between the read and the write.
		race func(t *testing.T, r *Reconciler, dyn *dynamicfake.FakeDynamicClient)
	}{
		{name: "created by someone else before our create", race: func(t *testing.T, r *Reconciler, dyn *dynamicfake.FakeDynamicClient) {
			r.beforeCreate = func(string) {
				if err := dyn.Tracker().Add(intruder.DeepCopy()); err != nil {
					t.Error(err)
				}
			}
		}},
		{name: "replaced by someone else before our apply", live: memberConfigMap("settings", key, nil), race: func(t *testing.T, _ *Reconciler, dyn *dynamicfake.FakeDynamicClient) {
			replaced := false
			dyn.PrependReactor("patch", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
				if !replaced {
					replaced = true
					if err := dyn.Tracker().Delete(cmGVR, "shop", "settings"); err != nil {
						t.Error(err)
					}
					if err := dyn.Tracker().Add(intruder.DeepCopy()); err != nil {
						t.Error(err)
					}
				}
				return false, nil, nil // the apply goes on, to the replaced object
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.live != nil {
				objs = append(objs, tc.live)
			}
			c, dyn := fakeMember(t, objs...)
			r := hubWith(nil)
			tc.race(t, r, dyn)
			w := work(ownWork, policyv1alpha1.ConflictAbort, memberConfigMap("settings", "", map[string]any{"mode": "shepherd"}))
			mf := decodeManifests(w)[0]
			_, err := r.applyManifest(context.Background(), c, w, &mf, nil, true)
			if !isConflict(err) || !strings.Contains(err.Error(), "was not created by Shepherd") {
				t.Fatalf("want a conflict with the intruder, got %v", err)
			}
			stored, err := dyn.Resource(cmGVR).Namespace("shop").Get(context.Background(), "settings", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(stored.Object) != fmt.Sprint(intruder.Object) {
				t.Errorf("the intruder's object changed:\n%v\nwas\n%v", stored.Object, intruder.Object)
			}
		})
	}
}

// TestFenceRightBeforeTheWrite: a leader that loses its lease between
// reading the member and writing to it (frozen, then let run again after
// another replica took over and deleted the Work) writes nothing: the
// fence is asked right before the write, not only before the read. Before
// the check moved, the create went through and left an object no Work
// claimed.
func TestFenceRightBeforeTheWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		live *unstructured.Unstructured
	}{
		{name: "a create"},
		{name: "an apply", live: memberConfigMap("settings", ownNS+"/"+ownWork, map[string]any{"mode": "old"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.live != nil {
				objs = append(objs, tc.live)
			}
			c, dyn := fakeMember(t, objs...)
			r := hubWith(nil)
			leader := true
			r.fence = func() error {
				if !leader {
					return errors.New("write refused: the leader lease was last renewed 20s ago")
				}
				return nil
			}
			// The lease is lost while the member is read.
			dyn.PrependReactor("get", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
				leader = false
				return false, nil, nil
			})
			w := work(ownWork, policyv1alpha1.ConflictAbort, memberConfigMap("settings", "", map[string]any{"mode": "new"}))
			mf := decodeManifests(w)[0]
			if _, err := r.applyManifest(context.Background(), c, w, &mf, nil, true); err == nil || !strings.Contains(err.Error(), "write refused") {
				t.Fatalf("want the fence's refusal, got %v", err)
			}
			stored, err := dyn.Resource(cmGVR).Namespace("shop").Get(context.Background(), "settings", metav1.GetOptions{})
			switch {
			case tc.live == nil && !apierrors.IsNotFound(err):
				t.Fatalf("the fenced leader created the object: %v", err)
			case tc.live != nil && (err != nil || stored.Object["data"].(map[string]any)["mode"] != "old"):
				t.Fatalf("the fenced leader wrote the object: %v %v", err, stored)
			}
		})
	}
}

// An owned object that the Work sends as it last applied it, and that
// holds every sent value in the member, is not written again: a Work with
// several manifests (an import Work: a ServiceImport, its Service and
// EndpointSlices) rewrote all of them at every change of one. What was
// edited in the member, or changed on the hub, still is.
func TestApplyManifestSkipsWhatIsAsApplied(t *testing.T) {
	key := ownNS + "/" + ownWork
	desired := memberConfigMap("settings", "", map[string]any{"mode": "shepherd"})
	w := work(ownWork, policyv1alpha1.ConflictAbort, desired)
	mf := decodeManifests(w)[0]
	sent := appliedHash(memberObject(key, &mf).Object)
	for _, tc := range []struct {
		name        string
		live        *unstructured.Unstructured
		prevHash    string
		wantWrites  []string
		wantVerdict verdict
	}{
		{name: "as applied: not written", live: memberConfigMap("settings", key, map[string]any{"mode": "shepherd"}), prevHash: sent,
			wantVerdict: verdictInSync},
		{name: "edited in the member: applied", live: memberConfigMap("settings", key, map[string]any{"mode": "edited"}), prevHash: sent,
			wantWrites: []string{"patch settings"}, wantVerdict: verdictApply},
		{name: "changed on the hub: applied", live: memberConfigMap("settings", key, map[string]any{"mode": "shepherd"}), prevHash: "sha256:older",
			wantWrites: []string{"patch settings"}, wantVerdict: verdictApply},
		{name: "never applied: applied", live: memberConfigMap("settings", key, map[string]any{"mode": "shepherd"}),
			wantWrites: []string{"patch settings"}, wantVerdict: verdictApply},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, dyn := fakeMember(t, tc.live)
			var prev *workv1alpha1.ManifestStatus
			if tc.prevHash != "" {
				prev = &workv1alpha1.ManifestStatus{Identifier: mf.id, AppliedHash: tc.prevHash}
			}
			got, err := hubWith(nil).applyManifest(context.Background(), c, w, &mf, prev, true)
			if err != nil {
				t.Fatal(err)
			}
			if w := writes(dyn); fmt.Sprint(w) != fmt.Sprint(tc.wantWrites) {
				t.Errorf("member writes %v, want %v", w, tc.wantWrites)
			}
			if got.verdict != tc.wantVerdict || got.hash != sent {
				t.Errorf("verdict %s, hash %q; want %s, %q", got.verdict, got.hash, tc.wantVerdict, sent)
			}
		})
	}
}
