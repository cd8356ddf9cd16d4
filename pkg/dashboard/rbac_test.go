package dashboard

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// clusterRoles reads the ClusterRoles of examples/dashboard/FILE, by name.
func clusterRoles(t *testing.T, file string) map[string]rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "dashboard", file))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]rbacv1.ClusterRole{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var r rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &r); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if r.Kind == "ClusterRole" {
			out[r.Name] = r
		}
	}
	return out
}

// allows says whether one of the rules grants verb on group/resource.
func allows(rules []rbacv1.PolicyRule, verb, group, resource string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		in := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
		return in(r.Verbs, verb) && in(r.APIGroups, group) && in(r.Resources, resource)
	})
}

// TestRolesReadWhatIsWatched: the roles of examples/dashboard (which the
// Helm chart's are checked against) let the dashboard's own identity get,
// list and watch every kind it watches, and a viewer every one of them but
// Works, whose manifests may hold a Secret's data.
func TestRolesReadWhatIsWatched(t *testing.T) {
	viewer := clusterRoles(t, "viewer.yaml")["shepherd-dashboard-viewer"]
	works := clusterRoles(t, "in-hub.yaml")["shepherd-dashboard-works"]
	if len(viewer.Rules) == 0 || len(works.Rules) == 0 {
		t.Fatalf("roles not found: viewer %d rules, works %d rules", len(viewer.Rules), len(works.Rules))
	}
	own := append(slices.Clone(viewer.Rules), works.Rules...)
	for _, obj := range watched() {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		gvk := gvks[0]
		resource := strings.ToLower(gvk.Kind) + "s"
		_, isWork := obj.(*workv1alpha1.Work)
		for _, verb := range []string{"get", "list", "watch"} {
			if !allows(own, verb, gvk.Group, resource) {
				t.Errorf("the dashboard's identity may not %s %s.%s, which it watches", verb, resource, gvk.Group)
			}
			switch viewed := allows(viewer.Rules, verb, gvk.Group, resource); {
			case isWork && viewed:
				t.Errorf("the viewer may %s %s.%s, whose manifests may hold a Secret's data", verb, resource, gvk.Group)
			case !isWork && !viewed:
				t.Errorf("the viewer may not %s %s.%s, which a page shows", verb, resource, gvk.Group)
			}
		}
	}
}
