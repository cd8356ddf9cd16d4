package crd

import (
	"fmt"
	"strings"
	"testing"
)

// TestBindingComponentsValidation: spec.components and a target's
// components hold at most 32 components of unique, non-empty names and
// replicas of 0 or more, on both binding kinds.
func TestBindingComponentsValidation(t *testing.T) {
	many := make([]string, 33)
	for i := range many {
		many[i] = fmt.Sprintf("{name: c%d, replicas: 1}", i)
	}
	for _, kind := range []string{"ResourceBinding", "ClusterResourceBinding"} {
		v := loadValidator(t, strings.ToLower(kind)+"s.work.shepherd.io")
		binding := func(components, targets string) string {
			ns, resource := "", "{apiVersion: ray.io/v1, kind: RayCluster, name: train, uid: u1}"
			if kind == "ResourceBinding" {
				ns, resource = ", namespace: team-a", "{apiVersion: ray.io/v1, kind: RayCluster, namespace: team-a, name: train, uid: u1}"
			}
			m := "apiVersion: work.shepherd.io/v1alpha1\nkind: " + kind + "\nmetadata: {name: train-raycluster" + ns + "}\nspec:\n  resource: " + resource + "\n"
			if components != "" {
				m += "  components: " + components + "\n"
			}
			if targets != "" {
				m += "  clusters: [{name: member1, components: " + targets + "}]\n"
			}
			return m
		}
		const gang = "[{name: ray-head, replicas: 1, replicaRequirements: {resourceRequest: {cpu: '2', memory: 4Gi}}}, {name: workers, replicas: 4}]"
		cases := []struct {
			name, components, targets string
			want                      []string
		}{
			{name: "as the detector and the scheduler write it", components: gang, targets: "[{name: ray-head, replicas: 1}, {name: workers, replicas: 4}]"},
			{name: "a component of no replicas", components: "[{name: workers, replicas: 0}]"},
			{name: "duplicate names", components: "[{name: workers, replicas: 1}, {name: workers, replicas: 2}]",
				want: []string{"spec.components[1]", "Duplicate value"}},
			{name: "negative replicas", components: "[{name: workers, replicas: -1}]",
				want: []string{"spec.components[0].replicas", "greater than or equal to 0"}},
			{name: "no name", components: "[{name: '', replicas: 1}]", want: []string{"spec.components[0].name"}},
			{name: "no replicas", components: "[{name: workers}]", want: []string{"spec.components[0].replicas", "Required value"}},
			{name: "33 components", components: "[" + strings.Join(many, ", ") + "]",
				want: []string{"spec.components", "must have at most 32 items"}},
			{name: "a target's duplicate names", targets: "[{name: workers, replicas: 1}, {name: workers, replicas: 1}]",
				want: []string{"spec.clusters[0].components[1]", "Duplicate value"}},
			{name: "a target's negative replicas", targets: "[{name: workers, replicas: -4}]",
				want: []string{"spec.clusters[0].components[0].replicas", "greater than or equal to 0"}},
			{name: "a target's 33 components", targets: "[" + strings.Join(many, ", ") + "]",
				want: []string{"spec.clusters[0].components", "must have at most 32 items"}},
		}
		for _, tt := range cases {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				wantErrors(t, v.validate(t, binding(tt.components, tt.targets)), tt.want)
			})
		}
	}
}
