package clustermatch

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

func cluster(name, provider, region, zone string, labels map[string]string) clusterv1alpha1.Cluster {
	c := clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	c.Spec.Provider, c.Spec.Region, c.Spec.Zone = provider, region, zone
	return c
}

// fleet: a, b and c differ in labels and fields; bare has neither.
var fleet = []clusterv1alpha1.Cluster{
	cluster("a", "aws", "eu", "eu-1", map[string]string{"env": "prod", "gpu": ""}),
	cluster("b", "gcp", "us", "", map[string]string{"env": "dev"}),
	cluster("c", "aws", "us", "us-2", map[string]string{"env": "prod", "tier": "edge"}),
	cluster("bare", "", "", "", nil),
}

func labels(exprs ...metav1.LabelSelectorRequirement) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: exprs}
}

func lreq(key, op string, values ...string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOperator(op), Values: values}
}

func fields(reqs ...policyv1alpha1.FieldSelectorRequirement) *policyv1alpha1.FieldSelector {
	return &policyv1alpha1.FieldSelector{MatchExpressions: reqs}
}

func freq(key, op string, values ...string) policyv1alpha1.FieldSelectorRequirement {
	return policyv1alpha1.FieldSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOperator(op), Values: values}
}

var cases = []struct {
	name    string
	aff     *policyv1alpha1.ClusterAffinity
	want    string // the matching clusters, space-separated
	wantErr string
}{
	{name: "nil matches all", aff: nil, want: "a b c bare"},
	{name: "empty matches all", aff: &policyv1alpha1.ClusterAffinity{}, want: "a b c bare"},
	{name: "names", aff: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a", "c", "gone"}}, want: "a c"},
	{name: "exclude", aff: &policyv1alpha1.ClusterAffinity{Exclude: []string{"b", "gone"}}, want: "a c bare"},
	{name: "names and exclude", aff: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a", "c"}, Exclude: []string{"a"}}, want: "c"},
	{name: "empty label selector", aff: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{}}, want: "a b c bare"},
	{name: "match labels", aff: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, want: "a c"},
	{name: "match labels, empty value", aff: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"gpu": ""}}}, want: "a"},
	{name: "label In", aff: &policyv1alpha1.ClusterAffinity{LabelSelector: labels(lreq("env", "In", "dev", "qa"))}, want: "b"},
	{name: "label In nothing", aff: &policyv1alpha1.ClusterAffinity{LabelSelector: labels(lreq("env", "In"))}, want: ""},
	{name: "label NotIn matches a missing key", aff: &policyv1alpha1.ClusterAffinity{LabelSelector: labels(lreq("env", "NotIn", "prod"))}, want: "b bare"},
	{name: "label Exists, empty value", aff: &policyv1alpha1.ClusterAffinity{LabelSelector: labels(lreq("gpu", "Exists"))}, want: "a"},
	{name: "label DoesNotExist", aff: &policyv1alpha1.ClusterAffinity{LabelSelector: labels(lreq("tier", "DoesNotExist"))}, want: "a b bare"},
	{name: "labels ANDed", aff: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{"env": "prod"}, MatchExpressions: []metav1.LabelSelectorRequirement{lreq("tier", "Exists")}}}, want: "c"},
	{name: "label operator unknown", aff: &policyv1alpha1.ClusterAffinity{LabelSelector: labels(lreq("env", "In", "nope"), lreq("env", "Gt", "1"))},
		wantErr: `labelSelector key "env": operator "Gt" is not supported: use In, NotIn, Exists or DoesNotExist`},
	{name: "provider In", aff: &policyv1alpha1.ClusterAffinity{FieldSelector: fields(freq("provider", "In", "aws"))}, want: "a c"},
	{name: "region NotIn matches an empty field", aff: &policyv1alpha1.ClusterAffinity{FieldSelector: fields(freq("region", "NotIn", "us"))}, want: "a bare"},
	{name: "zone Exists means not empty", aff: &policyv1alpha1.ClusterAffinity{FieldSelector: fields(freq("zone", "Exists"))}, want: "a c"},
	{name: "zone DoesNotExist", aff: &policyv1alpha1.ClusterAffinity{FieldSelector: fields(freq("zone", "DoesNotExist"))}, want: "b bare"},
	{name: "In an empty value matches nothing", aff: &policyv1alpha1.ClusterAffinity{FieldSelector: fields(freq("zone", "In", ""))}, want: ""},
	{name: "fields ANDed", aff: &policyv1alpha1.ClusterAffinity{FieldSelector: fields(freq("provider", "In", "aws"), freq("region", "In", "us"))}, want: "c"},
	{name: "field key unknown", aff: &policyv1alpha1.ClusterAffinity{FieldSelector: fields(freq("rack", "In", "r1"))},
		wantErr: `fieldSelector key "rack": must be provider, region or zone`},
	{name: "field operator unknown", aff: &policyv1alpha1.ClusterAffinity{FieldSelector: fields(freq("provider", "Lt", "x"))},
		wantErr: `fieldSelector key "provider": operator "Lt" is not supported`},
	{name: "labels, fields, names and exclude together", aff: &policyv1alpha1.ClusterAffinity{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
		FieldSelector: fields(freq("provider", "In", "aws")),
		ClusterNames:  []string{"a", "b", "c"}, Exclude: []string{"c"}}, want: "a"},
}

func TestMatches(t *testing.T) {
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for i := range fleet {
				ok, err := Matches(tt.aff, &fleet[i])
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("%s: error %v, want %q", fleet[i].Name, err, tt.wantErr)
					}
					if ok {
						t.Fatalf("%s: matched despite the error", fleet[i].Name)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", fleet[i].Name, err)
				}
				if ok {
					got = append(got, fleet[i].Name)
				}
			}
			if tt.wantErr == "" && strings.Join(got, " ") != tt.want {
				t.Fatalf("matched %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// TestAgreesWithTheScheduler runs every case through the scheduler's
// fleet-wide selection too: the two must pick the same clusters and fail
// on the same affinities.
func TestAgreesWithTheScheduler(t *testing.T) {
	snap, err := framework.SnapshotFromClusters(fleet)
	if err != nil {
		t.Fatal(err)
	}
	state := framework.NewCycleState(snap, &framework.Workload{}, framework.AffinityTerm{})
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			set, schedErr := state.SelectAffinity(tt.aff)
			for i := range fleet {
				ok, err := Matches(tt.aff, &fleet[i])
				if (err == nil) != (schedErr == nil) || (err != nil && err.Error() != schedErr.Error()) {
					t.Fatalf("%s: error %v, scheduler's %v", fleet[i].Name, err, schedErr)
				}
				if schedErr != nil {
					continue
				}
				idx, _ := snap.Index(fleet[i].Name)
				if ok != set.Has(idx) {
					t.Errorf("%s: Matches %v, scheduler %v", fleet[i].Name, ok, set.Has(idx))
				}
			}
		})
	}
}
