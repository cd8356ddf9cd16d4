package resourceselector

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

var web = &Template{
	GroupKind: schema.GroupKind{Group: "apps", Kind: "Deployment"},
	Namespace: "ns", Name: "web", Labels: map[string]string{"app": "web"},
}

func sel(apiVersion, kind, ns, name string, labels map[string]string) policyv1alpha1.ResourceSelector {
	s := policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}
	if labels != nil {
		s.LabelSelector = &metav1.LabelSelector{MatchLabels: labels}
	}
	return s
}

func TestSelectorStrength(t *testing.T) {
	badLabels := sel("apps/v1", "Deployment", "", "", nil)
	badLabels.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
	clusterScoped := &Template{GroupKind: schema.GroupKind{Kind: "Namespace"}, Name: "ns"}
	tests := []struct {
		name     string
		sel      policyv1alpha1.ResourceSelector
		policyNS string
		t        *Template
		want     Strength
	}{
		{"kind only", sel("apps/v1", "Deployment", "", "", nil), "ns", web, ByKind},
		{"by label", sel("apps/v1", "Deployment", "", "", map[string]string{"app": "web"}), "ns", web, ByLabel},
		{"empty label selector matches everything", sel("apps/v1", "Deployment", "", "", map[string]string{}), "ns", web, ByLabel},
		{"by name", sel("apps/v1", "Deployment", "", "web", nil), "ns", web, ByName},
		{"label mismatch", sel("apps/v1", "Deployment", "", "", map[string]string{"app": "db"}), "ns", web, NoMatch},
		{"name mismatch", sel("apps/v1", "Deployment", "", "db", nil), "ns", web, NoMatch},
		{"invalid label selector", badLabels, "ns", web, NoMatch},
		{"version does not matter", sel("apps/v1beta1", "Deployment", "", "web", nil), "ns", web, ByName},
		{"group matters", sel("extensions/v1beta1", "Deployment", "", "web", nil), "ns", web, NoMatch},
		{"kind matters", sel("apps/v1", "StatefulSet", "", "", nil), "ns", web, NoMatch},
		{"invalid apiVersion", sel("a/b/c", "Deployment", "", "", nil), "ns", web, NoMatch},
		{"namespaced policy, own namespace named", sel("apps/v1", "Deployment", "ns", "", nil), "ns", web, ByKind},
		{"namespaced policy of another namespace", sel("apps/v1", "Deployment", "", "", nil), "other", web, NoMatch},
		{"namespaced policy naming another namespace", sel("apps/v1", "Deployment", "other", "", nil), "ns", web, NoMatch},
		{"cluster policy, any namespace", sel("apps/v1", "Deployment", "", "", nil), "", web, ByKind},
		{"cluster policy naming the namespace", sel("apps/v1", "Deployment", "ns", "web", nil), "", web, ByName},
		{"cluster policy naming another namespace", sel("apps/v1", "Deployment", "other", "", nil), "", web, NoMatch},
		{"core group", sel("v1", "Namespace", "", "ns", nil), "", clusterScoped, ByName},
		{"cluster-scoped template, selector namespace", sel("v1", "Namespace", "ns", "", nil), "", clusterScoped, NoMatch},
		{"cluster-scoped template, namespaced policy", sel("v1", "Namespace", "", "", nil), "ns", clusterScoped, NoMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SelectorStrength(&tt.sel, tt.policyNS, tt.t); got != tt.want {
				t.Fatalf("SelectorStrength = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStrongest(t *testing.T) {
	tests := []struct {
		name string
		sels []policyv1alpha1.ResourceSelector
		want Strength
	}{
		{"none", nil, NoMatch},
		{"the strongest counts", []policyv1alpha1.ResourceSelector{
			sel("apps/v1", "Deployment", "", "", nil),
			sel("apps/v1", "Deployment", "", "web", nil),
			sel("apps/v1", "Deployment", "", "", map[string]string{"app": "web"}),
		}, ByName},
		{"a mismatch does not lower it", []policyv1alpha1.ResourceSelector{
			sel("apps/v1", "Deployment", "", "", map[string]string{"app": "web"}),
			sel("apps/v1", "Deployment", "", "db", nil),
		}, ByLabel},
		{"all mismatch", []policyv1alpha1.ResourceSelector{sel("v1", "ConfigMap", "", "", nil)}, NoMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Strongest(tt.sels, "ns", web); got != tt.want {
				t.Fatalf("Strongest = %v, want %v", got, tt.want)
			}
		})
	}
	if !(NoMatch < ByKind && ByKind < ByLabel && ByLabel < ByName) {
		t.Fatal("strengths must be ordered NoMatch < ByKind < ByLabel < ByName")
	}
}

func TestTemplateOf(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace("ns")
	u.SetName("web")
	u.SetLabels(map[string]string{"app": "web"})
	got := TemplateOf(u)
	if got.GroupKind != web.GroupKind || got.Namespace != "ns" || got.Name != "web" || got.Labels["app"] != "web" {
		t.Fatalf("TemplateOf = %+v", got)
	}
}
