package interpreter

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

var (
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	widgetGVK     = schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}
)

func object(gvk schema.GroupVersionKind, spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "o", "namespace": "ns"}}}
	u.SetGroupVersionKind(gvk)
	if spec != nil {
		u.Object["spec"] = spec
	}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func rule(h policyv1alpha1.ResourceHealth, reason string) HealthFunc {
	return func(*unstructured.Unstructured) HealthResult { return HealthResult{Health: h, Reason: reason} }
}

// The layers answer in order: a HealthInterpreter's rule over a
// customization's, a customization's over the built-in one; clearing a
// layer brings the one below back.
func TestLayeringOrder(t *testing.T) {
	l := New()
	obj := object(deploymentGVK, map[string]any{"replicas": int64(3)}, map[string]any{})
	steps := []struct {
		name       string
		do         func()
		wantReason string
	}{
		{"built-in", func() {}, "RolloutInProgress: 0/3 updated, 0/3 available"},
		{"customization over built-in", func() { l.SetCustom(deploymentGVK, &Custom{Health: rule(policyv1alpha1.ResourceHealthy, "custom")}) }, "custom"},
		{"health rule over customization", func() { l.SetHealthRule(deploymentGVK, rule(policyv1alpha1.ResourceUnhealthy, "rule")) }, "rule"},
		{"health rule cleared", func() { l.ClearHealthRule(deploymentGVK) }, "custom"},
		{"customization cleared", func() { l.ClearCustom(deploymentGVK) }, "RolloutInProgress: 0/3 updated, 0/3 available"},
	}
	for _, s := range steps {
		s.do()
		if got := l.Health(obj); got.Reason != s.wantReason {
			t.Errorf("%s: health %+v, want reason %q", s.name, got, s.wantReason)
		}
	}
}

// A customization overrides the built-in knowledge field by field: what
// it sets wins, what it leaves out stays built-in.
func TestCustomizationOverridesBuiltIn(t *testing.T) {
	l := New()
	obj := object(deploymentGVK, map[string]any{"replicas": int64(3), "count": int64(7),
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}}}}, nil)
	l.SetCustom(deploymentGVK, &Custom{
		Replicas: func(o *unstructured.Unstructured) (int64, error) {
			n, _, err := unstructured.NestedInt64(o.Object, "spec", "count")
			return n, err
		},
		ReplicasPath: []string{"spec", "count"},
	})
	if n, _, err := l.Replicas(obj); err != nil || n != 7 {
		t.Errorf("Replicas = %d %v, want 7 from the customization", n, err)
	}
	if got := l.PodSpecPath(deploymentGVK.GroupKind()); len(got) != 3 || got[0] != "spec" || got[1] != "template" {
		t.Errorf("PodSpecPath = %v, want the built-in spec.template.spec", got)
	}
	if !l.ObservesGeneration(deploymentGVK.GroupKind()) {
		t.Error("ObservesGeneration lost: the customization does not set it")
	}
}

// Two interpreters never see each other's customizations or rules, nor
// hear of each other's changes.
func TestInterpretersAreIsolated(t *testing.T) {
	a, b := New(), New()
	heard := 0
	b.OnChange(func(schema.GroupVersionKind) { heard++ })
	a.SetCustom(widgetGVK, &Custom{PodSpec: []string{"spec", "pod"}, Summed: []string{"readyReplicas"},
		Health: rule(policyv1alpha1.ResourceHealthy, "a")})
	a.SetHealthRule(deploymentGVK, rule(policyv1alpha1.ResourceHealthy, "a"))
	w := object(widgetGVK, nil, map[string]any{"readyReplicas": int64(2)})
	if got := a.PodSpecPath(widgetGVK.GroupKind()); len(got) != 2 {
		t.Errorf("a: PodSpecPath = %v", got)
	}
	if got := b.PodSpecPath(widgetGVK.GroupKind()); got != nil {
		t.Errorf("b sees a's customization: PodSpecPath = %v", got)
	}
	if got := b.Health(w); got.Health != policyv1alpha1.ResourceUnknown {
		t.Errorf("b judges a Widget with a's rule: %+v", got)
	}
	if got := b.Health(object(deploymentGVK, nil, nil)); got.Reason == "a" {
		t.Error("b uses a's health rule for Deployments")
	}
	if _, ok := b.AggregateStatus(widgetGVK.GroupKind(), nil); ok {
		t.Error("b sums a's fields")
	}
	if heard != 0 {
		t.Errorf("b heard %d changes of a", heard)
	}
}

// Listeners hear of every layer set or cleared, and by then the change is
// visible (they interpret again with it).
func TestOnChange(t *testing.T) {
	l := New()
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	obj := object(gvk, nil, nil)
	var heard []policyv1alpha1.ResourceHealth
	l.OnChange(func(got schema.GroupVersionKind) {
		if got != gvk {
			t.Errorf("heard of %v, want %v", got, gvk)
		}
		heard = append(heard, l.Health(obj).Health)
	})
	l.SetHealthRule(gvk, rule(policyv1alpha1.ResourceUnhealthy, "flag"))
	l.ClearHealthRule(gvk)
	l.SetCustom(gvk, &Custom{Health: rule(policyv1alpha1.ResourceHealthy, "custom")})
	l.ClearCustom(gvk)
	want := []policyv1alpha1.ResourceHealth{policyv1alpha1.ResourceUnhealthy, policyv1alpha1.ResourceUnknown,
		policyv1alpha1.ResourceHealthy, policyv1alpha1.ResourceUnknown}
	if len(heard) != len(want) {
		t.Fatalf("listeners saw %v, want %v", heard, want)
	}
	for i := range want {
		if heard[i] != want[i] {
			t.Errorf("listeners saw %v, want %v", heard, want)
		}
	}
}

// Bad input: a nil object, a nil customization, a version the built-in
// rule does not read, statuses that do not decode.
func TestBadInput(t *testing.T) {
	l := New()
	if got := l.Health(nil); got.Health != policyv1alpha1.ResourceUnknown {
		t.Errorf("nil object: %+v", got)
	}
	l.SetCustom(widgetGVK, nil) // a nil customization is the built-in knowledge (none)
	if _, _, err := l.Replicas(object(widgetGVK, nil, nil)); err != nil {
		t.Errorf("nil customization: %v", err)
	}
	if got := l.Health(object(schema.GroupVersionKind{Group: "apps", Version: "v1beta2", Kind: "Deployment"}, nil, nil)); got.Health != policyv1alpha1.ResourceUnknown {
		t.Errorf("apps/v1beta2 Deployment: %+v, want Unknown", got)
	}
	for _, raw := range []string{"", "not json", `{"readyReplicas":"two"}`, `{"readyReplicas":2.5}`, `{}`} {
		if n, ok := l.ReadyReplicas(deploymentGVK.GroupKind(), &runtime.RawExtension{Raw: []byte(raw)}); ok {
			t.Errorf("ReadyReplicas(%q) = %d, want none", raw, n)
		}
	}
	if n, ok := l.ReadyReplicas(deploymentGVK.GroupKind(), &runtime.RawExtension{Raw: []byte(`{"readyReplicas":4}`)}); !ok || n != 4 {
		t.Errorf("ReadyReplicas = %d %v, want 4", n, ok)
	}
	if _, ok := l.ReadyReplicas(schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, &runtime.RawExtension{Raw: []byte(`{"numberReady":4}`)}); ok {
		t.Error("a DaemonSet has ready replicas")
	}
	if _, ok := l.ReadyReplicas(deploymentGVK.GroupKind(), nil); ok {
		t.Error("no status has ready replicas")
	}
}

// StatusReplicas reads status.replicas, of a built-in kind and of a kind
// only a customization teaches alike; a Job, whose status counts active
// pods, reports none.
func TestStatusReplicas(t *testing.T) {
	l := New()
	l.SetCustom(widgetGVK, &Custom{ReplicasPath: []string{"spec", "size"}})
	raw := func(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }
	for _, tc := range []struct {
		name   string
		gk     schema.GroupKind
		status *runtime.RawExtension
		want   int32
		ok     bool
	}{
		{"a Deployment", deploymentGVK.GroupKind(), raw(`{"replicas":3,"readyReplicas":1}`), 3, true},
		{"a customized kind", widgetGVK.GroupKind(), raw(`{"replicas":2}`), 2, true},
		{"a Job", schema.GroupKind{Group: "batch", Kind: "Job"}, raw(`{"active":2}`), 0, false},
		{"no status", deploymentGVK.GroupKind(), nil, 0, false},
		{"not an integer", deploymentGVK.GroupKind(), raw(`{"replicas":2.5}`), 0, false},
		{"null", deploymentGVK.GroupKind(), raw(`{"replicas":null}`), 0, false},
		{"not JSON", deploymentGVK.GroupKind(), raw(`not json`), 0, false},
	} {
		if n, ok := l.StatusReplicas(tc.gk, tc.status); n != tc.want || ok != tc.ok {
			t.Errorf("%s: StatusReplicas = %d %v, want %d %v", tc.name, n, ok, tc.want, tc.ok)
		}
	}
}

// Prune removes what the hub allocated, and only that.
func TestPrune(t *testing.T) {
	for _, tc := range []struct {
		name       string
		obj        *unstructured.Unstructured
		gone, kept [][]string
	}{
		{"Job with a generated selector", object(schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
			map[string]any{"selector": map[string]any{}, "template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"job-name": "j", "app": "a"}}}}, nil),
			[][]string{{"spec", "selector"}, {"spec", "template", "metadata", "labels", "job-name"}}, [][]string{{"spec", "template", "metadata", "labels", "app"}}},
		{"Job with a manual selector", object(schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
			map[string]any{"manualSelector": true, "selector": map[string]any{}}, nil), nil, [][]string{{"spec", "selector"}}},
		{"Service", object(schema.GroupVersionKind{Version: "v1", Kind: "Service"}, map[string]any{"clusterIP": "10.0.0.1", "clusterIPs": []any{"10.0.0.1"}}, nil),
			[][]string{{"spec", "clusterIP"}, {"spec", "clusterIPs"}}, nil},
		{"headless Service", object(schema.GroupVersionKind{Version: "v1", Kind: "Service"}, map[string]any{"clusterIP": "None"}, nil),
			nil, [][]string{{"spec", "clusterIP"}}},
		{"Deployment", object(deploymentGVK, map[string]any{"selector": map[string]any{}}, nil), nil, [][]string{{"spec", "selector"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			New().Prune(tc.obj)
			for _, p := range tc.gone {
				if _, found, _ := unstructured.NestedFieldNoCopy(tc.obj.Object, p...); found {
					t.Errorf("%v kept", p)
				}
			}
			for _, p := range tc.kept {
				if _, found, _ := unstructured.NestedFieldNoCopy(tc.obj.Object, p...); !found {
					t.Errorf("%v removed", p)
				}
			}
		})
	}
}
