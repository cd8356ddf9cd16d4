package overrides

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// setReplicas is a rule's overriders setting spec.replicas: when several
// apply, the value left shows which applied last.
func setReplicas(n int) policyv1alpha1.Overriders {
	return plaintext(pt(policyv1alpha1.OverriderOpReplace, "/spec/replicas", fmt.Sprint(n)))
}

func names(applied []Applied) string {
	var out []string
	for _, a := range applied {
		out = append(out, fmt.Sprintf("%s#%d", a.Policy, a.Rule))
	}
	return strings.Join(out, ", ")
}

func TestOrder(t *testing.T) {
	deploy := byKind("apps/v1", "Deployment")
	deleting := op("default", "a-deleting", nil, rule(nil, setReplicas(99)))
	deleting.DeletionTimestamp = &metav1.Time{}
	deletingCOP := cop("a-deleting", nil, rule(nil, setReplicas(99)))
	deletingCOP.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name     string
		cops     []policyv1alpha1.ClusterOverridePolicy
		ops      []policyv1alpha1.OverridePolicy
		want     string // Applied, in order
		replicas int64
	}{
		{name: "none", want: "", replicas: 2},
		{name: "cluster policies first, then the namespace's",
			cops:     []policyv1alpha1.ClusterOverridePolicy{cop("z-fleet", selectors(byName("apps/v1", "Deployment", "web")), rule(nil, setReplicas(1)))},
			ops:      []policyv1alpha1.OverridePolicy{op("default", "a-team", nil, rule(nil, setReplicas(3)))},
			want:     "ClusterOverridePolicy z-fleet#0, OverridePolicy default/a-team#0",
			replicas: 3},
		{name: "least specific first: none, kind, label, name",
			ops: []policyv1alpha1.OverridePolicy{
				op("default", "a-name", selectors(byName("apps/v1", "Deployment", "web")), rule(nil, setReplicas(4))),
				op("default", "b-label", selectors(byLabel("apps/v1", "Deployment", map[string]string{"app": "web"})), rule(nil, setReplicas(3))),
				op("default", "c-kind", selectors(deploy), rule(nil, setReplicas(2))),
				op("default", "d-all", nil, rule(nil, setReplicas(1))),
			},
			want:     "OverridePolicy default/d-all#0, OverridePolicy default/c-kind#0, OverridePolicy default/b-label#0, OverridePolicy default/a-name#0",
			replicas: 4},
		{name: "the same for cluster policies",
			cops: []policyv1alpha1.ClusterOverridePolicy{
				cop("a-name", selectors(byName("apps/v1", "Deployment", "web")), rule(nil, setReplicas(4))),
				cop("b-kind", selectors(deploy), rule(nil, setReplicas(2))),
			},
			want:     "ClusterOverridePolicy b-kind#0, ClusterOverridePolicy a-name#0",
			replicas: 4},
		{name: "a policy counts with its most specific matching selector",
			ops: []policyv1alpha1.OverridePolicy{
				op("default", "a", selectors(byLabel("apps/v1", "Deployment", map[string]string{"app": "web"})), rule(nil, setReplicas(1))),
				op("default", "b", selectors(byName("apps/v1", "Deployment", "db"), deploy), rule(nil, setReplicas(2))),
			},
			want:     "OverridePolicy default/b#0, OverridePolicy default/a#0",
			replicas: 1},
		{name: "equally specific: by name",
			ops: []policyv1alpha1.OverridePolicy{
				op("default", "zz", selectors(deploy), rule(nil, setReplicas(1))),
				op("default", "aa", selectors(deploy), rule(nil, setReplicas(2))),
				op("default", "mm", selectors(deploy), rule(nil, setReplicas(3))),
			},
			want:     "OverridePolicy default/aa#0, OverridePolicy default/mm#0, OverridePolicy default/zz#0",
			replicas: 1},
		{name: "skipped: deleting, another namespace, not selecting",
			cops: []policyv1alpha1.ClusterOverridePolicy{deletingCOP, cop("other-kind", selectors(byKind("v1", "ConfigMap")), rule(nil, setReplicas(7)))},
			ops: []policyv1alpha1.OverridePolicy{
				deleting,
				op("other", "elsewhere", nil, rule(nil, setReplicas(8))),
				op("default", "other-name", selectors(byName("apps/v1", "Deployment", "db")), rule(nil, setReplicas(9))),
				op("default", "other-labels", selectors(byLabel("apps/v1", "Deployment", map[string]string{"app": "db"})), rule(nil, setReplicas(9))),
				op("default", "kept", nil, rule(nil, setReplicas(5))),
			},
			want:     "OverridePolicy default/kept#0",
			replicas: 5},
		{name: "rules in order, each on its clusters",
			ops: []policyv1alpha1.OverridePolicy{op("default", "p", nil,
				rule(&policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, setReplicas(1)),
				rule(&policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, setReplicas(2)),
				rule(&policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, setReplicas(3)),
				rule(&policyv1alpha1.ClusterAffinity{Exclude: []string{"member1"}}, setReplicas(4)),
				rule(nil, labelsOrAnnotations(false, policyv1alpha1.OverriderOpAdd, map[string]string{"rendered": "yes"})),
			)},
			want:     "OverridePolicy default/p#0, OverridePolicy default/p#2, OverridePolicy default/p#4",
			replicas: 3},
		{name: "Karmada's deprecated form is rule 0",
			ops: []policyv1alpha1.OverridePolicy{{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "old"},
				Spec: policyv1alpha1.OverrideSpec{
					TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
					Overriders:    setReplicas(6),
				},
			}, {
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "old-elsewhere"},
				Spec: policyv1alpha1.OverrideSpec{
					TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
					Overriders:    setReplicas(7),
				},
			}, {
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "does-nothing"},
			}},
			want:     "OverridePolicy default/old#0",
			replicas: 6},
	}
	cluster := member("member1", map[string]string{"env": "prod"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The order of the inputs must not matter.
			for _, rev := range []bool{false, true} {
				cops, ops := slices.Clone(tt.cops), slices.Clone(tt.ops)
				if rev {
					slices.Reverse(cops)
					slices.Reverse(ops)
				}
				obj := object(t, deploymentYAML)
				applied, err := Apply(builtin, obj, cluster, cops, ops)
				if err != nil {
					t.Fatal(err)
				}
				if got := names(applied); got != tt.want {
					t.Fatalf("applied %q, want %q", got, tt.want)
				}
				if got := obj.Object["spec"].(map[string]any)["replicas"]; got != tt.replicas {
					t.Fatalf("replicas %v, want %d", got, tt.replicas)
				}
			}
		})
	}
}

// TestSelectionOnTheTemplate: policies select the object as given, not as
// earlier policies left it.
func TestSelectionOnTheTemplate(t *testing.T) {
	obj := object(t, deploymentYAML)
	relabel := cop("relabel", nil, rule(nil, labelsOrAnnotations(false, policyv1alpha1.OverriderOpAdd, map[string]string{"app": "api"})))
	forAPI := op("default", "for-api", selectors(byLabel("apps/v1", "Deployment", map[string]string{"app": "api"})), rule(nil, setReplicas(9)))
	applied, err := Apply(builtin, obj, member("member1", nil), []policyv1alpha1.ClusterOverridePolicy{relabel}, []policyv1alpha1.OverridePolicy{forAPI})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(applied); got != "ClusterOverridePolicy relabel#0" {
		t.Fatalf("applied %q", got)
	}
	checkPaths(t, obj, map[string]string{"/metadata/labels/app": "api", "/spec/replicas": "2"})
}

func TestClusterScopedObject(t *testing.T) {
	ns := object(t, `{apiVersion: v1, kind: Namespace, metadata: {name: team}}`)
	all := op("team", "all", nil, rule(nil, labelsOrAnnotations(false, policyv1alpha1.OverriderOpAdd, map[string]string{"from": "op"})))
	fleet := cop("fleet", selectors(byName("v1", "Namespace", "team")), rule(nil, labelsOrAnnotations(false, policyv1alpha1.OverriderOpAdd, map[string]string{"from": "cop"})))
	applied, err := Apply(builtin, ns, member("member1", nil), []policyv1alpha1.ClusterOverridePolicy{fleet}, []policyv1alpha1.OverridePolicy{all})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(applied); got != "ClusterOverridePolicy fleet#0" {
		t.Fatalf("applied %q, want only the cluster policy", got)
	}
	checkPaths(t, ns, map[string]string{"/metadata/labels": "{from: cop}"})
}

func TestErrors(t *testing.T) {
	badTarget := &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{
		MatchExpressions: []policyv1alpha1.FieldSelectorRequirement{{Key: "rack", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}
	tests := []struct {
		name   string
		cops   []policyv1alpha1.ClusterOverridePolicy
		ops    []policyv1alpha1.OverridePolicy
		want   string
		policy Policy
		rule   int
		ov     string
		before string // rules applied before the failure
	}{
		{name: "an OverridePolicy",
			ops: []policyv1alpha1.OverridePolicy{op("default", "images", nil,
				rule(nil, plaintext(pt(policyv1alpha1.OverriderOpReplace, "/spec/replicas", "1"), pt(policyv1alpha1.OverriderOpReplace, "/spec/replicaz", "1"))))},
			want:   "OverridePolicy default/images rule 0 plaintext[1]: replace /spec/replicaz: path not found",
			policy: Policy{"OverridePolicy", "default", "images"}, rule: 0, ov: "plaintext[1]"},
		{name: "a ClusterOverridePolicy, after others applied",
			cops: []policyv1alpha1.ClusterOverridePolicy{
				cop("a", nil, rule(nil, setReplicas(1))),
				cop("b", nil, rule(nil, setReplicas(1)), rule(nil, cmdArgs("args", "db", policyv1alpha1.OverriderOpAdd, "x"))),
			},
			want:   `ClusterOverridePolicy b rule 1 argsOverrider[0]: container "db" not found`,
			policy: Policy{"ClusterOverridePolicy", "", "b"}, rule: 1, ov: "argsOverrider[0]",
			before: "ClusterOverridePolicy a#0, ClusterOverridePolicy b#0"},
		{name: "an invalid targetCluster",
			ops:    []policyv1alpha1.OverridePolicy{op("default", "t", nil, rule(nil, setReplicas(1)), rule(badTarget, setReplicas(1)))},
			want:   `OverridePolicy default/t rule 1 targetCluster: fieldSelector key "rack": must be provider, region or zone`,
			policy: Policy{"OverridePolicy", "default", "t"}, rule: 1, ov: "targetCluster",
			before: "OverridePolicy default/t#0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			applied, err := Apply(builtin, object(t, deploymentYAML), member("member1", nil), tt.cops, tt.ops)
			wantErr(t, err, tt.want)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T, want *Error", err)
			}
			if e.Policy != tt.policy || e.Rule != tt.rule || e.Overrider != tt.ov || e.Err == nil {
				t.Fatalf("error %+v, want policy %v rule %d overrider %s", e, tt.policy, tt.rule, tt.ov)
			}
			if got := names(applied); got != tt.before {
				t.Fatalf("applied before the failure %q, want %q", got, tt.before)
			}
		})
	}
	if _, err := Apply(builtin, object(t, deploymentYAML), nil, nil, nil); err == nil {
		t.Fatal("no error for a nil cluster")
	}
}

// TestNothingChangesWithoutPolicies guards the caller's copy: Apply with no
// policy leaves the object exactly as it was.
func TestNothingChangesWithoutPolicies(t *testing.T) {
	obj := object(t, deploymentYAML)
	before := obj.DeepCopy()
	applied, err := Apply(builtin, obj, &clusterv1alpha1.Cluster{}, nil, nil)
	if err != nil || applied != nil {
		t.Fatalf("Apply = %v, %v", applied, err)
	}
	if !reflect.DeepEqual(before.Object, obj.Object) {
		t.Fatal("the object changed")
	}
}
