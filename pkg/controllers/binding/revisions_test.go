package binding

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

func tmplWith(image string, generation int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "generation": generation, "resourceVersion": "7"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}}}},
	}}
	return u
}

func overrideFor(name, image string) policyv1alpha1.OverridePolicy {
	return policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "99"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: image}},
		},
	}
}

// TestRevisionHash: a revision is named by what renders the Works (the
// template as sent, the override policies selecting it), not by the
// hub's bookkeeping (generation, resourceVersion) or policies that do not
// select it.
func TestRevisionHash(t *testing.T) {
	hash := func(tmpl *unstructured.Unstructured, ops ...policyv1alpha1.OverridePolicy) string {
		h, err := newRevision(interpreter.Builtin(), tmpl, &overridePolicies{namespaced: ops}).hash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := hash(tmplWith("v1", 1))
	cases := []struct {
		name string
		got  string
		same bool
	}{
		{"another generation of the same content", hash(tmplWith("v1", 5)), true},
		{"another image", hash(tmplWith("v2", 1)), false},
		{"an override policy selecting the template", hash(tmplWith("v1", 1), overrideFor("p", "web")), false},
		{"an override policy selecting another template", hash(tmplWith("v1", 1), overrideFor("p", "other")), true},
	}
	for _, tc := range cases {
		if (tc.got == base) != tc.same {
			t.Errorf("%s: hash %s vs %s, want same=%v", tc.name, tc.got, base, tc.same)
		}
	}
}

func TestRolloutReady(t *testing.T) {
	work := func(applied bool, health policyv1alpha1.ResourceHealth, status string) *workv1alpha1.Work {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		if applied {
			w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkConditionApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2}}
		}
		ms := workv1alpha1.ManifestStatus{Health: health, Generation: 3}
		if status != "" {
			ms.Status = &runtime.RawExtension{Raw: []byte(status)}
		}
		w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{ms}
		return w
	}
	cases := []struct {
		name string
		w    *workv1alpha1.Work
		want bool
	}{
		{"applied and healthy", work(true, policyv1alpha1.ResourceHealthy, ""), true},
		{"observed the member's generation", work(true, policyv1alpha1.ResourceHealthy, `{"observedGeneration":3}`), true},
		{"behind the member's generation", work(true, policyv1alpha1.ResourceHealthy, `{"observedGeneration":2}`), false},
		{"unhealthy", work(true, policyv1alpha1.ResourceUnhealthy, ""), false},
		{"unknown health", work(true, policyv1alpha1.ResourceUnknown, ""), false},
		{"current spec not applied yet", work(false, policyv1alpha1.ResourceHealthy, ""), false},
		{"no Work", nil, false},
	}
	for _, tc := range cases {
		if got := rolloutReady(tc.w); got != tc.want {
			t.Errorf("%s: ready %v, want %v", tc.name, got, tc.want)
		}
	}
}
