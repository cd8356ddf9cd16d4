package policystatus

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

const (
	self  = "PropagationPolicy ns/a"
	other = "PropagationPolicy ns/b"
)

func TestDecide(t *testing.T) {
	known := func(n string) bool { return n == "member1" || n == "member2" }
	many := make([]bindingFacts, 25)
	for i := range many {
		many[i] = bindingFacts{template: fmt.Sprintf("Deployment ns/w%02d", i), governedBy: self}
	}
	tests := []struct {
		name          string
		governed      []bindingFacts
		tiedOn        []bindingFacts
		named         []string
		wantMatched   int32
		wantTemplates int
		wantConflicts []string
		wantUnknown   []string
	}{
		{name: "nothing", wantTemplates: 0},
		{name: "governs templates, capped list, full count", governed: many, wantMatched: 25, wantTemplates: policyv1alpha1.MaxListedInStatus},
		{name: "won a tie: reported", governed: many[:1], tiedOn: []bindingFacts{{template: "Deployment ns/w00", governedBy: self, tied: []string{self, other}}},
			wantMatched: 1, wantTemplates: 1, wantConflicts: []string{"Deployment ns/w00"}},
		{name: "lost a tie: reported too", tiedOn: []bindingFacts{{template: "Deployment ns/x", governedBy: other, tied: []string{other, self}}},
			wantConflicts: []string{"Deployment ns/x"}},
		{name: "an index hit that does not name it is ignored", tiedOn: []bindingFacts{{template: "Deployment ns/y", governedBy: other, tied: []string{other}}}},
		{name: "unknown clusters, each once, sorted", named: []string{"member1", "nope", "gone", "nope"}, wantUnknown: []string{"gone", "nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := decide(self, 3, tt.governed, tt.tiedOn, tt.named, known, &policyv1alpha1.PolicyStatus{})
			if st.ObservedGeneration != 3 || st.MatchedTemplates != tt.wantMatched || len(st.Templates) != tt.wantTemplates {
				t.Errorf("generation %d matched %d templates %d", st.ObservedGeneration, st.MatchedTemplates, len(st.Templates))
			}
			if !slices.IsSorted(st.Templates) {
				t.Errorf("templates not sorted: %v", st.Templates)
			}
			var conflicts []string
			for _, c := range st.Conflicts {
				conflicts = append(conflicts, c.Template)
			}
			if !slices.Equal(conflicts, tt.wantConflicts) || !slices.Equal(st.UnknownClusters, tt.wantUnknown) {
				t.Errorf("conflicts %v unknown %v", conflicts, st.UnknownClusters)
			}
			c := meta.FindStatusCondition(st.Conditions, policyv1alpha1.PolicyConditionConflicted)
			if c == nil || (c.Status == metav1.ConditionTrue) != (len(tt.wantConflicts) > 0) {
				t.Errorf("Conflicted %+v", c)
			}
			if c.Status == metav1.ConditionTrue && !strings.Contains(c.Message, "spec.priority") {
				t.Errorf("Conflicted message does not say how to fix it: %s", c.Message)
			}
			f := meta.FindStatusCondition(st.Conditions, policyv1alpha1.PolicyConditionClustersFound)
			if f == nil || (f.Status == metav1.ConditionFalse) != (len(tt.wantUnknown) > 0) {
				t.Errorf("ClustersFound %+v", f)
			}
		})
	}
}

// TestDecideKeepsTransitionTimes: an unchanged condition keeps its time,
// so recomputing an unchanged status writes nothing.
func TestDecideKeepsTransitionTimes(t *testing.T) {
	known := func(string) bool { return true }
	first := decide(self, 1, nil, nil, nil, known, &policyv1alpha1.PolicyStatus{})
	for i := range first.Conditions {
		first.Conditions[i].LastTransitionTime = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	again := decide(self, 1, nil, nil, nil, known, &first)
	for i := range again.Conditions {
		if !again.Conditions[i].LastTransitionTime.Equal(&first.Conditions[i].LastTransitionTime) {
			t.Errorf("condition %s moved its transition time", again.Conditions[i].Type)
		}
	}
}

func TestNamedClusters(t *testing.T) {
	p := &policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a"}, Exclude: []string{"excluded"}},
		ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{AffinityName: "x", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"b"}}}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{WeightPreference: &policyv1alpha1.ClusterPreferences{
			StaticWeightList: []policyv1alpha1.StaticClusterWeight{{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"c"}}, Weight: 1}}}},
	}
	if got := namedClusters(p); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("named %v", got)
	}
}

func TestRequestOf(t *testing.T) {
	for ref, want := range map[string]string{
		"PropagationPolicy ns/a":       "ns/a",
		"ClusterPropagationPolicy all": "/all",
		"PropagationPolicy a":          "",
		"ClusterPropagationPolicy x/y": "",
		"garbage":                      "",
	} {
		req, ok := requestOf(ref)
		got := ""
		if ok {
			got = req.Namespace + "/" + req.Name
		}
		if got != want {
			t.Errorf("requestOf(%q) = %q, want %q", ref, got, want)
		}
	}
}

// Only a change of what the status reads from a binding wakes its policy:
// the bindings' many status and target writes do not.
func TestFactsChanged(t *testing.T) {
	base := func() *workv1alpha1.ResourceBinding {
		return &workv1alpha1.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-deployment"},
			Spec: workv1alpha1.BindingSpec{
				Resource:  workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"},
				PolicyRef: &workv1alpha1.PolicyReference{Kind: kindPP, Namespace: "ns", Name: "p"},
			},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(b *workv1alpha1.ResourceBinding)
		want   bool
	}{
		{"status only", func(b *workv1alpha1.ResourceBinding) {
			b.Status.Conditions = []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue}}
		}, false},
		{"targets only", func(b *workv1alpha1.ResourceBinding) {
			b.Spec.Clusters = []workv1alpha1.TargetCluster{{Name: "m1", Replicas: 2}}
		}, false},
		{"another policy", func(b *workv1alpha1.ResourceBinding) { b.Spec.PolicyRef.Name = "q" }, true},
		{"policy gone", func(b *workv1alpha1.ResourceBinding) { b.Spec.PolicyRef = nil }, true},
		{"another template", func(b *workv1alpha1.ResourceBinding) { b.Spec.Resource.Name = "api" }, true},
		{"tied policies", func(b *workv1alpha1.ResourceBinding) {
			b.Annotations = map[string]string{workv1alpha1.AnnotationTiedPolicies: "PropagationPolicy ns/q"}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base()
			tc.change(n)
			if got := factsChanged(base(), n); got != tc.want {
				t.Errorf("factsChanged = %t, want %t", got, tc.want)
			}
		})
	}
}
