package chaos

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// converged is a fleet where every invariant holds: one ConfigMap on m1
// and m2, one Deployment of 3 replicas divided 2 + 1, a bystander.
func converged() (*fleetState, []bystander) {
	ours := func(c, edit string, replicas int32) copyOf {
		return copyOf{edit: edit, replicas: replicas,
			labels:      map[string]string{labelStrategy: "x", labelOverridden: "true", workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd},
			annotations: map[string]string{annotationCluster: c, workv1alpha1.AnnotationWork: "ns/w"}}
	}
	scheduled := workv1alpha1.BindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha1.ConditionScheduled, Status: metav1.ConditionTrue}}}
	cm, dep := key("chaos-a", "ConfigMap", "cm-001"), key("chaos-a", "Deployment", "dep-002")
	s := &fleetState{
		templates: map[string]copyOf{cm: {edit: "3"}, dep: {edit: "1", replicas: 3}},
		bindings: map[string]*workv1alpha1.ResourceBinding{
			cm:  {Spec: workv1alpha1.BindingSpec{Clusters: []workv1alpha1.TargetCluster{{Name: "m1"}, {Name: "m2"}}}, Status: scheduled},
			dep: {Spec: workv1alpha1.BindingSpec{Replicas: 3, Clusters: []workv1alpha1.TargetCluster{{Name: "m1", Replicas: 2}, {Name: "m2", Replicas: 1}}}, Status: scheduled},
		},
		works: map[string][]string{cm + "@m1": {"w1"}, cm + "@m2": {"w2"}, dep + "@m1": {"w3"}, dep + "@m2": {"w4"}},
		copies: map[string]map[string]copyOf{
			"m1": {cm: ours("m1", "3", 0), dep: ours("m1", "1", 2)},
			"m2": {cm: ours("m2", "3", 0), dep: ours("m2", "1", 1)},
		},
		objects: map[string]map[string]string{"m1": {"chaos-a/bystander": "7"}, "m2": {}},
		tasks:   []taskv1alpha1.RescheduleTask{{Status: taskv1alpha1.RescheduleTaskStatus{Conditions: []metav1.Condition{{Type: taskv1alpha1.ConditionCompleted, Status: metav1.ConditionTrue}}}}},
		clusters: map[string]clusterHealth{
			"m1": {ready: &metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}},
			"m2": {ready: &metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}, leaseOff: ptr.To(-300 * time.Millisecond)},
		},
	}
	return s, []bystander{{cluster: "m1", ns: "chaos-a", name: "bystander", resourceVersion: "7"}}
}

// Each broken invariant is reported; a converged fleet reports none.
func TestViolations(t *testing.T) {
	cm, dep := key("chaos-a", "ConfigMap", "cm-001"), key("chaos-a", "Deployment", "dep-002")
	for _, tc := range []struct {
		name   string
		mutate func(*fleetState)
		want   string
	}{
		{"converged", func(*fleetState) {}, ""},
		{"missing copy", func(s *fleetState) { delete(s.copies["m2"], cm) }, "missing in m2"},
		{"orphan of a deleted template", func(s *fleetState) { delete(s.templates, cm); delete(s.bindings, cm) }, "orphan in m1 (template deleted)"},
		{"copy where the binding does not target", func(s *fleetState) { s.bindings[cm].Spec.Clusters = s.bindings[cm].Spec.Clusters[:1] }, "orphan in m2 (not a target)"},
		{"stale content", func(s *fleetState) { s.templates[cm] = copyOf{edit: "4"} }, `stale in m1: edit "3", template "4"`},
		{"override lost", func(s *fleetState) { s.copies["m1"][dep].annotations[annotationCluster] = "m2" }, "overrides missing in m1"},
		{"wrong replicas", func(s *fleetState) { c := s.copies["m2"][dep]; c.replicas = 2; s.copies["m2"][dep] = c }, "2 replicas in m2, binding says 1"},
		{"two Works for one cluster", func(s *fleetState) { s.works[cm+"@m1"] = []string{"w1", "w9"} }, "2 Works for m1"},
		{"a Work left for a gone binding", func(s *fleetState) { s.works["binding chaos-a/x (gone)@m1"] = []string{"w8"} }, "Works left"},
		{"bystander changed", func(s *fleetState) { s.objects["m1"]["chaos-a/bystander"] = "8" }, "bystander chaos-a/bystander in m1 changed"},
		{"not scheduled", func(s *fleetState) { s.bindings[dep].Status.Conditions = nil }, "binding not Scheduled"},
		{"a target being removed", func(s *fleetState) { s.bindings[dep].Spec.Clusters[1].State = workv1alpha1.TargetUnscheduled }, "target m2 still being removed"},
		{"task unfinished", func(s *fleetState) { s.tasks[0].Status.Conditions = nil }, "not Completed"},
		{"a cluster not Ready", func(s *fleetState) { s.clusters["m1"].ready.Status = metav1.ConditionUnknown }, "cluster m1 not Ready"},
		{"a cluster still tainted", func(s *fleetState) {
			h := s.clusters["m1"]
			h.taints = []string{clusterv1alpha1.TaintClusterUnreachable + ":NoSchedule"}
			s.clusters["m1"] = h
		}, "cluster m1 still tainted"},
		{"an agent's clock still behind", func(s *fleetState) {
			h := s.clusters["m2"]
			h.leaseOff = ptr.To(-9 * time.Second)
			s.clusters["m2"] = h
		}, "Lease renewTime is -9s off"},
		{"an agent's clock still ahead", func(s *fleetState) { h := s.clusters["m2"]; h.leaseOff = ptr.To(5 * time.Second); s.clusters["m2"] = h }, "Lease renewTime is 5s off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, by := converged()
			tc.mutate(s)
			got := s.violations([]string{"m1", "m2"}, by)
			if tc.want == "" {
				if len(got) > 0 {
					t.Fatalf("a converged fleet: %v", got)
				}
				return
			}
			if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }) {
				t.Errorf("want a violation containing %q, got %v", tc.want, got)
			}
		})
	}
}
