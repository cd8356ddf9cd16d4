package clusteraffinity

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

func fleet(t *testing.T) *framework.Snapshot {
	return fwtest.Snapshot(t,
		framework.ClusterInfo{Name: "a", Provider: "aws", Region: "us-east-1", Zone: "us-east-1a", Labels: map[string]string{"env": "prod", "gpu": "true"}},
		framework.ClusterInfo{Name: "b", Provider: "aws", Region: "eu-west-1", Labels: map[string]string{"env": "dev"}},
		framework.ClusterInfo{Name: "c", Provider: "gcp", Region: "us-east1", Zone: "us-east1-b", Labels: map[string]string{"env": "prod"}},
		framework.ClusterInfo{Name: "d"},
	)
}

func TestFilter(t *testing.T) {
	expr := func(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	field := func(key string, op corev1.NodeSelectorOperator, values ...string) *policyv1alpha1.FieldSelector {
		return &policyv1alpha1.FieldSelector{MatchExpressions: []policyv1alpha1.FieldSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	tests := []struct {
		name string
		aff  *policyv1alpha1.ClusterAffinity
		want []string
	}{
		{"nil affinity", nil, []string{"a", "b", "c", "d"}},
		{"empty affinity", &policyv1alpha1.ClusterAffinity{}, []string{"a", "b", "c", "d"}},
		{"clusterNames", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"c", "a", "gone"}}, []string{"a", "c"}},
		{"exclude", &policyv1alpha1.ClusterAffinity{Exclude: []string{"b"}}, []string{"a", "c", "d"}},
		{"names and exclude", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a", "b"}, Exclude: []string{"b"}}, []string{"a"}},
		{"matchLabels", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, []string{"a", "c"}},
		{"matchLabels two keys", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod", "gpu": "true"}}}, []string{"a"}},
		{"empty selector", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{}}, []string{"a", "b", "c", "d"}},
		{"label In", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr("env", metav1.LabelSelectorOpIn, "dev", "qa")}}}, []string{"b"}},
		{"label NotIn keeps unlabeled", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr("env", metav1.LabelSelectorOpNotIn, "prod")}}}, []string{"b", "d"}},
		{"label Exists", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr("gpu", metav1.LabelSelectorOpExists)}}}, []string{"a"}},
		{"label DoesNotExist", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr("env", metav1.LabelSelectorOpDoesNotExist)}}}, []string{"d"}},
		{"unknown label key", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}}, nil},
		{"field In", &policyv1alpha1.ClusterAffinity{FieldSelector: field("provider", corev1.NodeSelectorOpIn, "gcp")}, []string{"c"}},
		{"field NotIn", &policyv1alpha1.ClusterAffinity{FieldSelector: field("region", corev1.NodeSelectorOpNotIn, "us-east-1", "us-east1")}, []string{"b", "d"}},
		{"field Exists", &policyv1alpha1.ClusterAffinity{FieldSelector: field("zone", corev1.NodeSelectorOpExists)}, []string{"a", "c"}},
		{"field DoesNotExist", &policyv1alpha1.ClusterAffinity{FieldSelector: field("zone", corev1.NodeSelectorOpDoesNotExist)}, []string{"b", "d"}},
		{"all parts", &policyv1alpha1.ClusterAffinity{
			ClusterNames:  []string{"a", "b", "c"},
			Exclude:       []string{"c"},
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			FieldSelector: field("provider", corev1.NodeSelectorOpIn, "aws"),
		}, []string{"a"}},
	}
	p, _ := New(nil)
	snap := fleet(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &framework.Workload{Placement: &policyv1alpha1.Placement{ClusterAffinity: tt.aff}}
			got := fwtest.Passing(snap, fwtest.Filter(t, p.(framework.FilterPlugin), snap, w))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("passing = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReasons(t *testing.T) {
	snap := fleet(t)
	p, _ := New(nil)
	aff := &policyv1alpha1.ClusterAffinity{
		ClusterNames:  []string{"a", "b", "c"},
		Exclude:       []string{"b"},
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
		FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []policyv1alpha1.FieldSelectorRequirement{{Key: "provider", Operator: corev1.NodeSelectorOpIn, Values: []string{"aws"}}}},
	}
	w := &framework.Workload{}
	got := fwtest.FilterTerm(t, p.(framework.FilterPlugin), snap, w, framework.AffinityTerm{Name: "primary", Affinity: aff})
	want := map[string]string{
		"a": "",
		"b": `excluded by exclude (affinity term "primary")`,
		"c": `with a provider, region or zone not matching the fieldSelector (affinity term "primary")`,
		"d": `not in clusterNames (affinity term "primary")`,
	}
	for name, w := range want {
		if got[name].Message() != w {
			t.Errorf("%s: got %q, want %q", name, got[name].Message(), w)
		}
	}
}

func TestFallbackTermInForce(t *testing.T) {
	snap := fleet(t)
	p, _ := New(nil)
	w := &framework.Workload{Placement: &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
		{AffinityName: "first", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a"}}},
		{AffinityName: "second", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"b", "d"}}},
	}}}
	terms := framework.AffinityTerms(w.Placement)
	if got := fwtest.Passing(snap, fwtest.FilterTerm(t, p.(framework.FilterPlugin), snap, w, terms[1])); !reflect.DeepEqual(got, []string{"b", "d"}) {
		t.Errorf("second term passes %v, want [b d]", got)
	}
}

func TestBadOperator(t *testing.T) {
	snap := fleet(t)
	p, _ := New(nil)
	aff := &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Gt", Values: []string{"1"}}}}}
	w := &framework.Workload{}
	state := framework.NewCycleState(snap, w, framework.AffinityTerm{Affinity: aff})
	_, st := p.(framework.PreFilterPlugin).PreFilter(t.Context(), state, w)
	if st.Code() != framework.Error {
		t.Fatalf("got %v, want Error", st.Code())
	}
}
