package names

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestBindingName(t *testing.T) {
	long := strings.Repeat("a", 250)
	tests := []struct {
		kind, name string
		want       string // exact; "" means: check validity and prefix only
		prefix     string
	}{
		{kind: "Deployment", name: "nginx", want: "nginx-deployment"},
		{kind: "ConfigMap", name: "app.config", want: "app.config-configmap"},
		{kind: "ClusterRole", name: "system:controller:foo", prefix: "system-controller-foo-clusterrole-"},
		{kind: "ClusterRole", name: "Admin", prefix: "admin-clusterrole-"},
		{kind: "Deployment", name: long, prefix: strings.Repeat("a", 200)},
	}
	for _, tt := range tests {
		got := BindingName(tt.kind, tt.name)
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("BindingName(%q, %q) = %q: invalid: %v", tt.kind, tt.name, got, errs)
		}
		if tt.want != "" && got != tt.want {
			t.Errorf("BindingName(%q, %q) = %q, want %q", tt.kind, tt.name, got, tt.want)
		}
		if tt.prefix != "" && !strings.HasPrefix(got, tt.prefix) {
			t.Errorf("BindingName(%q, %q) = %q, want prefix %q", tt.kind, tt.name, got, tt.prefix)
		}
		if again := BindingName(tt.kind, tt.name); again != got {
			t.Errorf("BindingName is not deterministic: %q then %q", got, again)
		}
	}
}

func TestBindingNameKeepsSanitizedNamesApart(t *testing.T) {
	a, b := BindingName("ClusterRole", "a:b"), BindingName("ClusterRole", "a-b")
	if a == b {
		t.Fatalf("a:b and a-b share the binding name %q", a)
	}
	long1, long2 := strings.Repeat("x", 260)+"1", strings.Repeat("x", 260)+"2"
	if BindingName("Deployment", long1) == BindingName("Deployment", long2) {
		t.Fatal("names differing after the cut share a binding name")
	}
}

func TestWorkName(t *testing.T) {
	tests := []struct{ ns, binding, want string }{
		{"default", "nginx-deployment", "default.nginx-deployment"},
		{"", "admin-clusterrole", "admin-clusterrole"},
	}
	for _, tt := range tests {
		if got := WorkName(tt.ns, tt.binding); got != tt.want {
			t.Errorf("WorkName(%q, %q) = %q, want %q", tt.ns, tt.binding, got, tt.want)
		}
	}
	got := WorkName(strings.Repeat("n", 63), strings.Repeat("b", 253))
	if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
		t.Errorf("long WorkName %q invalid: %v", got, errs)
	}
}

func TestExecutionNamespace(t *testing.T) {
	ns := ExecutionNamespace("member1")
	if ns != workv1alpha1.ExecutionNamespacePrefix+"member1" {
		t.Fatalf("ExecutionNamespace = %q", ns)
	}
	if c, ok := ClusterOfExecutionNamespace(ns); !ok || c != "member1" {
		t.Fatalf("ClusterOfExecutionNamespace(%q) = %q, %v", ns, c, ok)
	}
	for _, ns := range []string{"default", workv1alpha1.ExecutionNamespacePrefix} {
		if IsExecutionNamespace(ns) {
			t.Errorf("IsExecutionNamespace(%q) = true", ns)
		}
	}
}

func TestLabelValue(t *testing.T) {
	for _, s := range []string{"", "web", "a.b_c-d", strings.Repeat("p", 63)} {
		if got := LabelValue(s); got != s {
			t.Errorf("LabelValue(%q) = %q, want it unchanged", s, got)
		}
	}
	for _, s := range []string{strings.Repeat("p", 64), strings.Repeat("q", 253), "a:b", "-x"} {
		got := LabelValue(s)
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("LabelValue(%q) = %q: invalid: %v", s, got, errs)
		}
	}
}

func TestBindingRef(t *testing.T) {
	for _, ref := range []BindingRef{
		{Kind: workv1alpha1.KindResourceBinding, Namespace: "ns", Name: "web-deployment"},
		{Kind: workv1alpha1.KindClusterResourceBinding, Name: "admin-clusterrole"},
	} {
		got, ok := ParseBindingRef(ref.String())
		if !ok || got != ref {
			t.Errorf("ParseBindingRef(%q) = %+v, %v", ref.String(), got, ok)
		}
		l := WorkLabels(ref, "c1")
		if l[workv1alpha1.LabelCluster] != "c1" || l[workv1alpha1.LabelBindingKind] != ref.Kind {
			t.Errorf("WorkLabels(%+v) = %v", ref, l)
		}
	}
	for _, s := range []string{"", "a/b", "/ns/name", "Kind/ns/"} {
		if _, ok := ParseBindingRef(s); ok {
			t.Errorf("ParseBindingRef(%q) succeeded", s)
		}
	}
}

func TestPolicyLabels(t *testing.T) {
	l := PolicyLabels("ClusterPropagationPolicy", "", "all")
	if _, ok := l[workv1alpha1.LabelPolicyNamespace]; ok {
		t.Errorf("cluster policy labels carry a namespace: %v", l)
	}
	l = PolicyLabels("PropagationPolicy", "ns", strings.Repeat("p", 100))
	if errs := validation.IsValidLabelValue(l[workv1alpha1.LabelPolicyName]); len(errs) > 0 {
		t.Errorf("long policy name label invalid: %v", errs)
	}
}
