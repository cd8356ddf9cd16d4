package execution

import (
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

func TestBreaker(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newBreaker(10*time.Second, func() time.Time { return now })
	if err := b.check("m1"); err != nil {
		t.Fatal(err)
	}
	b.trip("m1", errors.New("dial tcp: i/o timeout"))
	err := b.check("m1")
	if err == nil || !strings.Contains(err.Error(), `member "m1" did not answer`) || !strings.Contains(err.Error(), "i/o timeout") {
		t.Fatalf("open breaker: %v", err)
	}
	if b.check("m2") != nil {
		t.Error("another member is affected")
	}
	now = now.Add(10 * time.Second)
	if err := b.check("m1"); err != nil {
		t.Errorf("after the back-off: %v", err)
	}
	b.trip("m1", errors.New("x"))
	b.reset("m1")
	if err := b.check("m1"); err != nil {
		t.Errorf("after reset: %v", err)
	}
}

func TestDecodeManifests(t *testing.T) {
	w := &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
		{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"}}`)}},
		{RawExtension: runtime.RawExtension{Raw: []byte(`{not json`)}},
		{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}}`)}},
	}}}}
	got := decodeManifests(w)
	if len(got) != 3 {
		t.Fatalf("%d manifests", len(got))
	}
	want := workv1alpha1.ResourceIdentifier{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	if got[0].id != want || got[0].err != nil {
		t.Errorf("manifest 0: %+v %v", got[0].id, got[0].err)
	}
	if got[1].err == nil || got[1].id.Ordinal != 1 || got[1].id.Kind != "" {
		t.Errorf("manifest 1 should fail to decode: %+v", got[1])
	}
	if got[2].id.Ordinal != 2 || got[2].id.Group != "" || describe(got[2].id) != "v1 Namespace shop" {
		t.Errorf("manifest 2: %+v %q", got[2].id, describe(got[2].id))
	}
	if describe(want) != "apps/v1 Deployment shop/web" {
		t.Errorf("describe = %q", describe(want))
	}
}

func TestManifestStatusesKeepCollectedStatus(t *testing.T) {
	dep := workv1alpha1.ResourceIdentifier{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "a", Name: "web"}
	cm := workv1alpha1.ResourceIdentifier{Ordinal: 1, Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "cfg"}
	raw := &runtime.RawExtension{Raw: []byte(`{"replicas":2}`)}
	seen := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(seen.Add(time.Minute))
	prev := []workv1alpha1.ManifestStatus{
		{Identifier: dep, Status: raw, StatusTime: &seen, Health: policyv1alpha1.ResourceHealthy, Generation: 4,
			UnschedulableReplicas: 2, UnschedulableSince: &seen, UnschedulableComponents: []workv1alpha1.UnschedulableComponent{{Name: "workers", Replicas: 2, Since: seen}}},
		{Identifier: cm, Health: policyv1alpha1.ResourceUnknown},
	}
	// The ConfigMap is dropped and the Deployment moves to ordinal 1.
	moved := dep
	moved.Ordinal = 1
	svc := workv1alpha1.ResourceIdentifier{Ordinal: 0, Version: "v1", Kind: "Service", Namespace: "a", Name: "web"}
	got := manifestStatuses(prev, []workv1alpha1.ResourceIdentifier{svc, moved}, nil, nil, now)
	if len(got) != 2 || got[0].Status != nil || got[0].Health != "" ||
		got[1].Identifier.Ordinal != 1 || got[1].Status != raw || got[1].StatusTime != &seen || got[1].Health != policyv1alpha1.ResourceHealthy || got[1].Generation != 4 {
		t.Errorf("manifestStatuses = %+v", got)
	}
	// The unschedulable pods are the status controller's count, kept.
	if u := got[1]; u.UnschedulableReplicas != 2 || u.UnschedulableSince != &seen || len(u.UnschedulableComponents) != 1 || u.UnschedulableComponents[0].Name != "workers" {
		t.Errorf("unschedulable pods not kept: %+v", u)
	}
	// What the member answered to the apply replaces what was collected.
	fresh := &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)}
	got = manifestStatuses(prev, []workv1alpha1.ResourceIdentifier{svc, moved}, map[int]interpreter.Observation{
		0: {Health: policyv1alpha1.ResourceHealthy, Generation: 1},
		1: {Status: fresh, Health: policyv1alpha1.ResourceUnhealthy, Generation: 5},
	}, nil, now)
	if len(got) != 2 || got[0].Health != policyv1alpha1.ResourceHealthy || got[0].Generation != 1 ||
		got[1].Status != fresh || got[1].Health != policyv1alpha1.ResourceUnhealthy || got[1].Generation != 5 {
		t.Errorf("manifestStatuses with observations = %+v", got)
	}
	// A changed status is stamped with this process's clock; the same
	// status, re-encoded, keeps its time.
	if got[1].StatusTime == nil || !got[1].StatusTime.Equal(&now) {
		t.Errorf("a changed status's time %v, want now %v", got[1].StatusTime, now)
	}
	same := manifestStatuses(prev, []workv1alpha1.ResourceIdentifier{moved}, map[int]interpreter.Observation{
		0: {Status: &runtime.RawExtension{Raw: []byte(`{ "replicas": 2 }`)}},
	}, nil, now)
	if same[0].StatusTime == nil || !same[0].StatusTime.Equal(&seen) {
		t.Errorf("an unchanged status's time %v, want it kept at %v", same[0].StatusTime, seen)
	}
	if !containsObject([]workv1alpha1.ResourceIdentifier{moved}, dep) || containsObject([]workv1alpha1.ResourceIdentifier{svc}, dep) {
		t.Error("containsObject")
	}
}

func TestErrorClassification(t *testing.T) {
	nsGone := apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "shop")
	if !isMissingNamespace(nsGone, "shop") || isMissingNamespace(nsGone, "other") || isMissingNamespace(nsGone, "") {
		t.Error("isMissingNamespace on a namespace NotFound")
	}
	if isMissingNamespace(apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "shop"), "shop") {
		t.Error("a Deployment NotFound is not a missing namespace")
	}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Deployment"}, "web", field.ErrorList{field.Required(field.NewPath("spec"), "")})
	if !permanent(invalid) || !permanent(apierrors.NewBadRequest("x")) || permanent(apierrors.NewConflict(schema.GroupResource{}, "x", nil)) || permanent(errors.New("x")) {
		t.Error("permanent")
	}
	if got := truncate(strings.Repeat("x", 5000), maxEventNote); len(got) != maxEventNote {
		t.Errorf("truncate: %d", len(got))
	}
}

func TestLimiter(t *testing.T) {
	l := newLimiter(2)
	for i := range 2 {
		if !l.acquire("m1") {
			t.Fatalf("slot %d of 2 refused", i+1)
		}
	}
	if l.acquire("m1") {
		t.Error("third slot granted")
	}
	if !l.acquire("m2") {
		t.Error("another member is capped too")
	}
	l.release("m1")
	if !l.acquire("m1") {
		t.Error("released slot not reusable")
	}
	if o := (Options{Workers: 1}).withDefaults(); o.MaxInFlightPerCluster != 1 {
		t.Errorf("cap with one worker: %d", o.MaxInFlightPerCluster)
	}
	if o := (Options{}).withDefaults(); o.MaxInFlightPerCluster != DefaultWorkers/2 {
		t.Errorf("default cap: %d", o.MaxInFlightPerCluster)
	}
}
