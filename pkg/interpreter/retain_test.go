package interpreter

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRetain(t *testing.T) {
	deploy := func(labels string, replicas int64) *unstructured.Unstructured {
		u := parse(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ns`+labels+`}
spec: {replicas: 1}
`)
		_ = unstructured.SetNestedField(u.Object, replicas, "spec", "replicas")
		return u
	}
	for _, tc := range []struct {
		name     string
		desired  *unstructured.Unstructured
		observed *unstructured.Unstructured
		want     int64
	}{
		{"no label: the template's replicas", deploy("", 2), deploy("", 7), 2},
		{"retain-replicas: the member's (its HPA scaled to 7)", deploy(", labels: {work.shepherd.io/retain-replicas: \"true\"}", 2), deploy("", 7), 7},
		{"Karmada's label works too", deploy(", labels: {resourcetemplate.karmada.io/retain-replicas: \"true\"}", 2), deploy("", 5), 5},
		{"a label not \"true\" retains nothing", deploy(", labels: {work.shepherd.io/retain-replicas: \"yes\"}", 2), deploy("", 5), 2},
		{"nothing in the member yet: the template's", deploy(", labels: {work.shepherd.io/retain-replicas: \"true\"}", 2), nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := New().Retain(tc.desired, tc.observed); err != nil {
				t.Fatal(err)
			}
			if got, _, _ := unstructured.NestedInt64(tc.desired.Object, "spec", "replicas"); got != tc.want {
				t.Errorf("spec.replicas = %d, want %d", got, tc.want)
			}
		})
	}
}
